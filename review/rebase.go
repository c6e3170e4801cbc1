package review

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sotlabs/sot/material"
	"github.com/sotlabs/sot/persona"
)

// rebasePersonas holds a diff review to the persona files of the project
// as the base of the change has them: a change must not rewrite its own
// reviewers. A persona, lens or shared-rules file the change edits or
// removes is used as it was; one only the change has is reviewed with the
// rest of the change, not obeyed; unless the user trusted the file as it
// is now (trusted). It returns the library to review with
// and a note for each file it held back, for the synthesis.
func rebasePersonas(ctx context.Context, lib *persona.Library, m *material.Material, top string, trusted func(path string) bool) (*persona.Library, []string, error) {
	if m.Top == "" {
		return lib, nil, nil
	}
	gitTop := resolved(m.Top)
	projTop := resolved(top)
	toGit := func(rel string) string {
		r, err := filepath.Rel(gitTop, filepath.Join(projTop, filepath.FromSlash(rel)))
		if err != nil {
			return rel
		}
		return filepath.ToSlash(r)
	}
	files, err := m.FilesAtBase(ctx, personaDirs(top)...)
	if err != nil {
		return nil, nil, fmt.Errorf("list the persona files at the base of the change: %w", err)
	}
	var baseFiles, toRead []string
	for _, f := range files {
		if r, err := filepath.Rel(projTop, filepath.Join(gitTop, filepath.FromSlash(f))); err == nil {
			baseFiles = append(baseFiles, filepath.ToSlash(r))
		}
		if strings.HasSuffix(strings.ToLower(f), ".md") {
			toRead = append(toRead, f)
		}
	}
	// Every persona file the base has is read at once, with one git
	// process: a file the listing does not have is not there.
	atBase, err := m.ReadAtBase(ctx, toRead)
	if err != nil {
		return nil, nil, fmt.Errorf("read the persona files at the base of the change: %w", err)
	}
	out, changes, err := lib.Rebased(projTop, baseFiles, func(rel string) ([]byte, bool, error) {
		b, ok := atBase[toGit(rel)]
		return b, ok, nil
	}, func(p *persona.Persona) bool { return trusted != nil && trusted(p.Path) })
	if err != nil {
		return nil, nil, fmt.Errorf("read the persona files at the base of the change: %w", err)
	}
	base := m.Base
	if len(base) > 12 {
		base = base[:12]
	}
	var notes []string
	for _, c := range changes {
		if c.AtBase {
			notes = append(notes, fmt.Sprintf("the change edits %s, one of the files that instruct this review's specialists; the review used it as it stands at the base of the change (%s) and reviewed the edit like any other", c.Path, base))
		} else {
			notes = append(notes, fmt.Sprintf("the change adds %s, a persona file the base of the change does not have; it was reviewed as part of the change, not obeyed", c.Path))
		}
	}
	return out, notes, nil
}

// personaDirs are the project's persona directories under top, as the
// diff is asked to list them at its base (material.DiffOptions.BaseDirs)
// and rebasePersonas asks for that listing: named the same way in both,
// so that the listing started with the diff is the one used.
func personaDirs(top string) []string {
	dirs := make([]string, len(persona.ProjectDirs))
	for i, d := range persona.ProjectDirs {
		dirs[i] = filepath.Join(top, filepath.FromSlash(d))
	}
	return dirs
}

// resolved is p with its symbolic links resolved, when it can be.
func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
