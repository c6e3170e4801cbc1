package review

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/internal/shell"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/review/synthesis"
)

// Run states, as ListRuns reports them.
const (
	StateFinished    = run.StatusFinished    // the synthesis was written
	StatePartial     = run.StatusPartial     // written, with parts missing
	StateInterrupted = run.StatusInterrupted // stopped before the synthesis; the same command resumes it
	StateRunning     = run.StatusRunning     // a process holds the run's lock
	StateForeign     = run.StatusForeign     // run.json lacks the user's signature: not resumed
)

// RunInfo describes one run directory of a project.
type RunInfo struct {
	ID      string    `json:"run_id"`
	Dir     string    `json:"dir"`
	Created time.Time `json:"created"`
	// Kind is the review type and how it ran ("diff, parallel").
	Kind string `json:"kind"`
	// Material is what was reviewed (a diff range, paths, a description).
	Material string `json:"material"`
	State    string `json:"state"`
	// Calls and CostUSD are what the run paid for, as its result or, for a
	// run that did not finish, its journal records.
	Calls    int     `json:"calls"`
	CostUSD  float64 `json:"cost_usd"`
	Findings int     `json:"findings"`
	Missing  int     `json:"missing,omitempty"`
	// Resume is the sot review command that continues or re-renders the
	// run, as far as run.json records it (the material must be unchanged
	// for a diff to resume under the same id).
	Resume string `json:"resume,omitempty"`
}

// ListRuns lists the runs in the project at top: the default output
// directories (.sot/reviews/<run-id>) and PAW's (.paw/work/<id>/reviews),
// newest first. prices turns a journal's usage into dollars.
func ListRuns(top string, prices llm.PriceTable) ([]RunInfo, error) {
	entries, err := run.List(top, []string{filepath.Join(".sot", "reviews", "*"), filepath.Join(".paw", "work", "*", "reviews")},
		func() any { return &record{} }, run.Key())
	if err != nil {
		return nil, err
	}
	runs := make([]RunInfo, 0, len(entries))
	for _, e := range entries {
		runs = append(runs, runInfo(e, prices))
	}
	return runs, nil
}

// runInfo says what a run directory holds.
func runInfo(e run.Entry, prices llm.PriceTable) RunInfo {
	st, rec := e.State, recordOf(e.State)
	r := RunInfo{ID: st.RunID, Dir: e.Dir, Created: st.Created, Material: rec.Context.Coordinates}
	kind := []string{rec.Context.Type}
	if rec.Mode != "" && rec.Mode != ModeSociety {
		kind = append(kind, rec.Mode)
	} else if rec.Context.InteractionMode != "" {
		kind = append(kind, rec.Context.InteractionMode)
	}
	r.Kind = strings.Join(kind, ", ")
	var fin *run.Finished
	if res, ok := readResult(e.Path()); ok {
		fin = &run.Finished{Missing: len(res.Missing), Calls: res.Usage.Calls, CostUSD: res.Usage.CostUSD}
		r.Findings = len(res.Items)
	}
	r.State, r.Missing, r.Calls, r.CostUSD = e.Status(fin, prices)
	if st.Authentic {
		r.Resume = resumeCommand(rec, st.RunID, e.Path())
	}
	return r
}

func readResult(dir string) (*synthesis.Result, bool) {
	b, err := os.ReadFile(filepath.Join(dir, resultFile))
	if err != nil {
		return nil, false
	}
	var res synthesis.Result
	if json.Unmarshal(b, &res) != nil {
		return nil, false
	}
	return &res, true
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
