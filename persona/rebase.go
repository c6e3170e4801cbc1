package persona

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// ProjectDirs are the directories of a project, relative to its top with
// forward slashes, that discovery reads persona files from.
var ProjectDirs = []string{".sot/personas", ".sot/lenses", ".paw/personas", ".paw/perspectives"}

// Rebase is what Rebased did with one project persona file.
type Rebase struct {
	// Path is the file, relative to the project's top with forward
	// slashes.
	Path string
	// AtBase is true when the file was read as the base of the change has
	// it; false when the base has no such file, so it was left out.
	AtBase bool
}

// Rebased returns a copy of the library in which every persona file of the
// project at top is as the base of a change has it, for reviewing a change
// that may rewrite its own reviewers: a file the change edited or removed
// is read as it was (read gives its bytes at the base, and whether it
// existed there), and a file only the change has is left out, so the
// persona of that name falls back to the user's or the built-in one.
// baseFiles lists the persona files the base has (read by their paths
// relative to top). A file for which keep reports true (one the user
// trusted as it is now) is used as the work tree has it. The library
// itself is not changed. The list says what was different, sorted by
// path.
func (l *Library) Rebased(top string, baseFiles []string, read func(rel string) ([]byte, bool, error), keep func(*Persona) bool) (*Library, []Rebase, error) {
	out := &Library{winners: map[Kind]map[string]*Persona{}, vet: l.vet}
	out.Problems = append(out.Problems, l.Problems...)
	rel := func(p *Persona) (string, bool) {
		if p.Level != LevelProject {
			return "", false
		}
		r, err := filepath.Rel(top, p.Path)
		if err != nil || strings.HasPrefix(r, "..") {
			return "", false
		}
		return filepath.ToSlash(r), true
	}
	// The project's files as the work tree has them.
	now := map[string]*Persona{}
	var others []*Persona
	for _, p := range append(l.all(), l.Shadowed...) {
		if r, ok := rel(p); ok {
			now[r] = p
			continue
		}
		others = append(others, p)
	}
	rejected := map[string]bool{}
	for _, rj := range l.Rejected {
		if r, ok := rel(rj.Persona); ok {
			rejected[r] = true
			continue
		}
		out.Rejected = append(out.Rejected, rj)
	}
	for _, p := range others {
		out.put(p)
	}
	paths := map[string]bool{}
	for r := range now {
		paths[r] = true
	}
	for r := range rejected {
		paths[r] = true
	}
	for _, f := range baseFiles {
		if inProjectDir(f) && strings.HasSuffix(strings.ToLower(f), ".md") {
			paths[f] = true
		}
	}
	var changes []Rebase
	for _, r := range slices.Sorted(maps.Keys(paths)) {
		data, ok, err := read(r)
		if err != nil {
			return nil, nil, err
		}
		cur := now[r]
		switch {
		case cur != nil && keep != nil && keep(cur):
			out.put(cur)
		case !ok:
			changes = append(changes, Rebase{Path: r})
		case cur != nil && cur.Digest == digest(data):
			out.put(cur)
		default:
			changes = append(changes, Rebase{Path: r, AtBase: true})
			p := out.add(filepath.Join(top, filepath.FromSlash(r)), data, KindForDir(filepath.Dir(r)), LevelProject)
			if p != nil {
				out.vetOne(p)
			}
		}
	}
	return out, changes, nil
}

// inProjectDir reports whether rel (forward slashes) lies directly in one
// of the ProjectDirs, where discovery reads files.
func inProjectDir(rel string) bool {
	return slices.Contains(ProjectDirs, pathDir(rel))
}

func pathDir(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

// all is every winner.
func (l *Library) all() []*Persona {
	var out []*Persona
	for _, m := range l.winners {
		for _, p := range m {
			out = append(out, p)
		}
	}
	return out
}

// digest is the hex SHA-256 of a file, as Persona.Digest holds it.
func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
