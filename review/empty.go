package review

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sotlabs/sot/material"
	"github.com/sotlabs/sot/synthesis"
)

// EmptyResult is the result of a review that called no model because there
// was nothing to review: no changes, or only files that cannot be reviewed
// (listed as skipped). Its machine formats are valid documents with no
// findings, so a CI step that uploads or parses them does not fail.
func EmptyResult(c Context, why string, skipped []material.Skipped) *synthesis.Result {
	return &synthesis.Result{Mode: cmp.Or(c.InteractionMode, Parallel), Type: cmp.Or(c.Type, "diff"),
		Coordinates: c.Coordinates, Notes: []string{why}, Skipped: skippedFiles(skipped)}
}

// EmptyPlan is the dry-run plan of a review with nothing to review: no
// files, no calls, and why.
func EmptyPlan(c Context, why string, skipped []material.Skipped) PlanSummary {
	return PlanSummary{Type: c.Type, Coordinates: c.Coordinates, Files: []string{}, Skipped: skippedFiles(skipped),
		Specialists: []PlannedSpecialist{}, Warnings: []string{why}}
}

// WriteEmpty writes the machine formats of an empty result into dir,
// creating it (with its .gitignore) if needed and removing the files of an
// earlier review there.
func WriteEmpty(dir string, res *synthesis.Result, formats []string, version string) ([]string, error) {
	if err := checkOutputDir(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create the output directory: %w", err)
	}
	unlock, err := lockRun(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	// An earlier review's files must not sit next to documents that say
	// there is nothing to review.
	if old, err := clearStale(dir, ""); err != nil {
		return nil, err
	} else if old != "" {
		if err := os.Remove(filepath.Join(dir, stateFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if err := ensureIgnore(dir); err != nil {
		return nil, err
	}
	return WriteFormats(dir, res, formats, version)
}
