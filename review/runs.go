package review

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/internal/shell"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/review/synthesis"
)

// ListRuns lists the runs in the project at top: the default output
// directories (.sot/reviews/<run-id>) and PAW's (.paw/work/<id>/reviews),
// newest first, each with its kind (the review type and how it ran), its
// material and, once the synthesis was written, its findings. prices turns
// the journal of a run that did not finish into dollars.
func ListRuns(top string, prices llm.PriceTable) ([]run.Listed, error) {
	patterns := []string{filepath.Join(".sot", "reviews", "*"), filepath.Join(".paw", "work", "*", "reviews")}
	return run.ListOf(top, patterns, prices, describeRun)
}

// ListRun is what ListRuns says of the run in dir (absolute, or relative
// to top), reading no other run; ok is false when dir holds no run.
func ListRun(top, dir string, prices llm.PriceTable) (run.Listed, bool) {
	return run.ListDir(top, dir, prices, describeRun)
}

// describeRun is what a listing says of a review run.
func describeRun(e run.Entry, rec *record) run.Described {
	kind := []string{rec.Context.Type}
	if rec.Mode != "" && rec.Mode != ModeSociety {
		kind = append(kind, rec.Mode)
	} else if rec.Context.InteractionMode != "" {
		kind = append(kind, rec.Context.InteractionMode)
	}
	d := run.Described{Kind: strings.Join(kind, ", "), Material: rec.Context.Coordinates,
		Command: resumeCommand(rec, e.State.RunID, e.Path())}
	if res, done := run.ReadResult[synthesis.Result](e, resultFile); done {
		d.Finished = &run.Finished{Missing: len(res.Missing), Calls: res.Usage.Calls, CostUSD: res.Usage.CostUSD}
		d.Items = len(res.Items)
	}
	return d
}

// resumeCommand rebuilds, from a run's record, the sot review command that
// ran it: the same command resumes the run (or, once it finished,
// re-renders it without a call) while the material is unchanged.
func resumeCommand(st *record, runID, dir string) string {
	c := st.Context
	args := []string{"sot", "review"}
	add := func(flag, value string) { args = append(args, flag, shell.Quote(value)) }
	switch st.Mode {
	case ModeSingleModel, ModeMultiModel:
		add("--mode", st.Mode)
	}
	switch c.Type {
	case "artifacts":
		add("--artifacts", strings.Join(strings.Split(c.Coordinates, ", "), ","))
	case "freeform":
		add("--type", "freeform")
		add("--input", c.Coordinates)
		if c.Framing != "" {
			add("--framing", c.Framing)
		}
	default:
		switch rest, ok := strings.CutPrefix(c.Coordinates, "git diff "); {
		case strings.HasPrefix(c.Coordinates, "git diff --cached"):
			args = append(args, "--staged")
		case ok && !strings.HasPrefix(rest, "HEAD (") && !strings.HasPrefix(rest, "(working"):
			rng, paths, _ := strings.Cut(rest, " -- ")
			add("--diff", rng)
			if paths != "" {
				args = append(args, strings.Fields(paths)...)
			}
		}
	}
	if c.Specialists != "" && c.Specialists != "all" {
		add("--specialists", c.Specialists)
	}
	if c.Perspectives != "" && c.Perspectives != "auto" {
		add("--perspectives", c.Perspectives)
	}
	if c.PerspectiveCap != 0 && c.PerspectiveCap != 2 {
		add("--perspective-cap", strconv.Itoa(c.PerspectiveCap))
	}
	if c.InteractionMode == Debate {
		add("--interaction-mode", Debate)
	}
	if c.SpecialistModels != "" && c.SpecialistModels != "none" {
		add("--specialist-models", c.SpecialistModels)
	}
	if filepath.Base(dir) != runID {
		add("--output-dir", dir)
	}
	return strings.Join(args, " ")
}
