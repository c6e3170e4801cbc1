package review

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/review/report"
	"github.com/sotlabs/sot/review/synthesis"
)

// This file holds the writers of a finished review: resolving its findings
// and moderator mode rewrite its outputs here, after the run, where no
// protocol is under way. A run's own outputs are rendered in execute.go
// and written by the scenario runner.

// WriteFormats writes the machine formats of res asked for into the
// output directory, each atomically and none through a symlink; a
// directory holding symlinks, or reached through one inside the project of
// the working directory, is refused. It writes nothing else: Execute has
// already removed the machine outputs of an earlier invocation, so a
// format asked for neither then nor now is not in the directory.
//
// This is the rule sot review, sot ask and sot ask --compare follow for the
// outputs written only when asked for (review's json, sarif, rdjson and
// html; ask's answer.html; --compare's compare.html): an invocation writes
// the formats it is asked for, and removes from its directory every
// optional output an earlier invocation wrote there that it is not asked
// for again, so the directory never holds a file that describes another
// invocation. The outputs written every time (REVIEW-*.md, ANSWER.md,
// answer.json, comparison.json, and every output of sot debate, which has
// no optional format) are rewritten every time. Resolving items of a
// finished review (Run.Save) renders again the outputs it has: they
// describe the same synthesis.
func WriteFormats(dir string, res *synthesis.Result, formats []string, version string) ([]string, error) {
	return writeFormatsIn(projectRoot("."), dir, res, formats, version)
}

// writeFormatsIn is WriteFormats for a directory of the project at top.
func writeFormatsIn(top, dir string, res *synthesis.Result, formats []string, version string) ([]string, error) {
	if !slices.ContainsFunc(formats, func(f string) bool { return Formats[f] != "" }) {
		return nil, nil // markdown is always written
	}
	d, err := openOutputDir(top, dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	files, err := writeFormats(d, res, formats, version)
	if err != nil {
		return nil, err
	}
	return files, d.RecordWritten(files)
}

// removeFormats removes the machine outputs in d except those of the
// formats kept, so that none is left from an earlier synthesis.
func removeFormats(d *run.Dir, keep []string) error {
	for _, format := range slices.Sorted(maps.Keys(Formats)) {
		if slices.Contains(keep, format) {
			continue
		}
		if err := d.Remove(Formats[format]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove the earlier %s: %w", Formats[format], err)
		}
	}
	return nil
}

func writeFormats(d *run.Dir, res *synthesis.Result, formats []string, version string) ([]string, error) {
	var files []string
	for _, f := range formats {
		name, ok := Formats[f]
		if !ok {
			continue // markdown is always written
		}
		b, err := Render(f, res, version)
		if err != nil {
			return nil, err
		}
		if err := d.WriteFile(name, b, 0o644); err != nil {
			return nil, err
		}
		files = append(files, filepath.Join(d.Path(), name))
	}
	return files, nil
}

// resultFile keeps the full result of a run for --resolve and moderator mode.
const resultFile = "result.json"

func saveResult(d *run.Dir, res *synthesis.Result) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return d.WriteFile(resultFile, append(b, '\n'), 0o644)
}

// Run is a finished review loaded from its output directory.
type Run struct {
	Dir    string
	state  run.State
	rec    *record
	Result *synthesis.Result
	// Now stamps the resolutions Resolve records (nil: time.Now).
	Now func() time.Time
	// top is the project top the directory was checked from.
	top string
}

// LoadRun reads a finished review. ref is the output directory or a run id
// under the project's .sot/reviews/. A directory holding a symlink, or
// reached through one inside the project of the working directory, is
// refused: resolving and moderating write there.
func LoadRun(ref string) (*Run, error) {
	dir := ref
	if _, err := os.Stat(filepath.Join(dir, resultFile)); err != nil {
		alt := DefaultOutputDir(".", ref)
		if _, err2 := os.Stat(filepath.Join(alt, resultFile)); err2 != nil {
			return nil, fmt.Errorf("%s is not a finished review: no %s there or in %s (run sot review first)", ref, resultFile, alt)
		}
		dir = alt
	}
	// The project is the one that holds the run's directory, wherever sot
	// runs from: the project's record of decisions goes there.
	r := &Run{Dir: dir, Result: &synthesis.Result{}, top: projectRoot(dir)}
	d, err := r.open()
	if err != nil {
		return nil, err
	}
	defer d.Close()
	b, err := d.ReadFile(resultFile)
	if err != nil {
		return nil, err
	}
	r.rec = &record{}
	r.state = d.State(r.rec)
	if err := json.Unmarshal(b, r.Result); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, resultFile), err)
	}
	return r, nil
}

// Save rewrites the run's result and REVIEW-SYNTHESIS.md (and review.json
// when it exists), after resolutions changed them.
func (r *Run) Save(version string) error {
	d, err := r.open()
	if err != nil {
		return err
	}
	defer d.Close()
	if err := saveResult(d, r.Result); err != nil {
		return err
	}
	if err := d.WriteFile(synthesisFile, []byte(report.SynthesisMarkdown(r.Result)), 0o644); err != nil {
		return err
	}
	for format, name := range Formats {
		if _, err := d.Lstat(name); err == nil {
			if _, err := writeFormats(d, r.Result, []string{format}, version); err != nil {
				return err
			}
		}
	}
	return nil
}

// open opens the run's directory for writing.
func (r *Run) open() (*run.Dir, error) {
	return openOutputDir(r.top, r.Dir)
}
