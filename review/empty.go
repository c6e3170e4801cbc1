package review

import (
	"cmp"
	"errors"
	"os"
	"slices"

	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/material"
	"github.com/sotlabs/sot/review/synthesis"
)

// EmptyResult is the result of a review that called no model because there
// was nothing to review: no changes, or only files that cannot be reviewed
// (listed as skipped). Its machine formats are valid documents with no
// findings, so a CI step that uploads or parses them does not fail.
func EmptyResult(c Context, why string, skipped []material.Skipped) *synthesis.Result {
	return &synthesis.Result{Mode: cmp.Or(c.InteractionMode, Parallel), Type: cmp.Or(c.Type, "diff"),
		Coordinates: c.Coordinates, Notes: []string{why}, Skipped: skippedFiles(skipped)}
}

// EmptyOutcome is a review that called no model because there was nothing
// to review.
type EmptyOutcome struct {
	Result *synthesis.Result
	// Files are the machine outputs written, as valid documents without
	// findings.
	Files []string
	// Unwritten are the formats asked for and not written: without an
	// output directory there is no run to name one after.
	Unwritten []string
}

// Empty gives a review that called no model (why says why; skipped lists
// the files that could not be reviewed) the machine outputs o.Formats asks
// for, written into o.Context.OutputDir when one is named, so that a CI
// step that uploads or parses them still finds them.
func Empty(o *Options, why string, skipped []material.Skipped) (*EmptyOutcome, error) {
	out := &EmptyOutcome{Result: EmptyResult(o.Context, why, skipped)}
	formats := slices.DeleteFunc(slices.Clone(o.Formats), func(s string) bool { return s == "markdown" })
	if len(formats) == 0 {
		return out, nil
	}
	if o.Context.OutputDir == "" {
		out.Unwritten = formats
		return out, nil
	}
	files, err := WriteEmpty(o.Context.OutputDir, out.Result, formats, o.Version)
	if err != nil {
		return nil, err
	}
	out.Files = files
	return out, nil
}

// EmptyPlan is the dry-run plan of a review with nothing to review: no
// files, no calls, and why.
func EmptyPlan(c Context, why string, skipped []material.Skipped) PlanSummary {
	return PlanSummary{Type: c.Type, Coordinates: c.Coordinates, Files: []string{}, Skipped: skippedFiles(skipped),
		Specialists: []PlannedSpecialist{}, Warnings: []string{why}}
}

// WriteEmpty writes the machine formats of an empty result into dir,
// creating it (with its .gitignore) if needed and removing the files of an
// earlier review there. Like a review, it refuses a directory holding
// symlinks or reached through one inside the working directory's project.
func WriteEmpty(dir string, res *synthesis.Result, formats []string, version string) ([]string, error) {
	if err := checkOutputDir(dir); err != nil {
		return nil, err
	}
	d, err := openOutputDir(projectRoot("."), dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	unlock, err := d.Lock("a review")
	if err != nil {
		return nil, err
	}
	defer unlock()
	// An earlier review's files must not sit next to documents that say
	// there is nothing to review.
	if old, err := d.ClearStale(""); err != nil {
		return nil, err
	} else if old != "" {
		if err := d.Remove(run.StateFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if err := d.EnsureIgnore(); err != nil {
		return nil, err
	}
	// Outputs of an earlier empty result that were not asked for again
	// would describe another run.
	if err := removeFormats(d, formats); err != nil {
		return nil, err
	}
	return writeFormats(d, res, formats, version)
}
