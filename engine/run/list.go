package run

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/sotlabs/sot/internal/plainfile"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/middleware"
)

// Where a run is, as a listing of runs says it.
const (
	StatusFinished    = "finished"    // its result was written
	StatusPartial     = "partial"     // written, with parts missing
	StatusInterrupted = "interrupted" // stopped before its result; the same command resumes it
	StatusRunning     = "running"     // a process holds its lock
	StatusForeign     = "not yours"   // run.json lacks the user's signature: never resumed
)

// Entry is one run directory of a project.
type Entry struct {
	// Dir is the directory, relative to the project's top when it is
	// inside it.
	Dir string
	// State is the run's record; its payload decoded into what List's
	// payload function gave.
	State State
	// Running is set while a process holds the run's lock.
	Running bool
	path    string
}

// List finds the run directories of the project at top that match the
// glob patterns (relative to top), newest first. A directory without a
// run's record is skipped, and a symlink is never followed. payload, when
// set, returns a new value to decode each record's payload into.
func List(top string, patterns []string, payload func() any, key []byte) ([]Entry, error) {
	var dirs []string
	for _, pattern := range patterns {
		m, err := filepath.Glob(filepath.Join(top, pattern))
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, m...)
	}
	return ListDirs(top, dirs, payload, key), nil
}

// ListDirs is List over the directories given, each absolute or relative
// to top, as they are named (no pattern is expanded).
func ListDirs(top string, dirs []string, payload func() any, key []byte) []Entry {
	var out []Entry
	for _, dir := range dirs {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(top, dir)
		}
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		b, err := plainfile.ReadOwn(filepath.Join(dir, StateFile))
		if err != nil {
			continue
		}
		var p any
		if payload != nil {
			p = payload()
		}
		st := ParseState(b, p, key)
		if st.RunID == "" {
			continue
		}
		e := Entry{Dir: dir, State: st, Running: Running(dir), path: dir}
		if rel, err := filepath.Rel(top, dir); err == nil {
			e.Dir = rel
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].State.Created.After(out[j].State.Created) })
	return out
}

// Path is the entry's directory as found (not made relative).
func (e Entry) Path() string { return e.path }

// Spent is what the run's journal records it paid for: its calls, and the
// usage of each model. A run that finished says the same in its result;
// for one that did not, the journal is all there is.
func (e Entry) Spent() (calls int, byModel map[string]llm.Usage) {
	calls, byModel, _ = middleware.JournalUsage(filepath.Join(e.path, JournalFile))
	return calls, byModel
}

// Finished is what a finished run's own result says of it: how many parts
// are missing, its calls and its cost.
type Finished struct {
	Missing int
	Calls   int
	CostUSD float64
}

// Status is the entry's state and what it spent. finished is the run's
// result when its outputs were written (nil when not): then the state is
// finished or partial, with the result's figures. Otherwise it is running,
// interrupted or not yours, and the calls and cost are the journal's,
// priced with prices.
func (e Entry) Status(finished *Finished, prices llm.PriceTable) (state string, missing, calls int, cost float64) {
	switch {
	case !e.State.Authentic:
		state = StatusForeign
	case e.Running:
		state = StatusRunning
	case finished != nil:
		state = StatusFinished
		if finished.Missing > 0 {
			state, missing = StatusPartial, finished.Missing
		}
		return state, missing, finished.Calls, finished.CostUSD
	default:
		state = StatusInterrupted
	}
	if state == StatusInterrupted || state == StatusRunning {
		var byModel map[string]llm.Usage
		calls, byModel = e.Spent()
		for model, u := range byModel {
			if p, ok := prices.Lookup(model); ok {
				cost += p.Cost(u)
			}
		}
	}
	return state, 0, calls, cost
}

// Listed is what a listing of the project's runs says of one run, whatever
// its scenario.
type Listed struct {
	ID      string    `json:"run_id"`
	Dir     string    `json:"dir"`
	Created time.Time `json:"created"`
	// Kind is what kind of run it was: its scenario, or for a review its
	// type and how it ran ("diff, parallel").
	Kind string `json:"kind"`
	// Material is what the run read: a question, a passage, a diff.
	Material string `json:"material"`
	// State is one of the statuses: finished, partial, interrupted,
	// running, not yours.
	State   string  `json:"state"`
	Calls   int     `json:"calls"`
	CostUSD float64 `json:"cost_usd"`
	// Items counts what a finished run produced (a review's findings, an
	// answer's sentences, a debate's branches); "findings" in the JSON of
	// sot runs, whatever the scenario.
	Items   int `json:"findings"`
	Missing int `json:"missing,omitempty"`
	// Resume is the command that started the run, which continues it (or,
	// once it finished, writes it again without a call).
	Resume string `json:"resume,omitempty"`
}

// Described is what a scenario tells ListOf about one of its runs.
type Described struct {
	Kind, Material, Command string
	// Finished is the run's own result when its outputs were written (nil
	// when not), and Items what that result holds.
	Finished *Finished
	Items    int
}

// ListOf lists one scenario's runs in the directories patterns match, as
// List does, each record's payload decoded into a new P; describe reads
// what the scenario knows of a run (from an empty P when the record had no
// payload). The state and spending come from Entry.Status, with prices
// pricing a journal; the command to resume is kept only for the user's
// own runs.
func ListOf[P any](top string, patterns []string, prices llm.PriceTable, describe func(e Entry, payload *P) Described) ([]Listed, error) {
	entries, err := List(top, patterns, func() any { return new(P) }, Key())
	if err != nil {
		return nil, err
	}
	return listedAs(entries, prices, describe), nil
}

// ListDir is ListOf for the one run directory dir (absolute, or relative
// to top), whatever the patterns: what a caller that knows its run reads
// without reading every other. ok is false when dir holds no run.
func ListDir[P any](top, dir string, prices llm.PriceTable, describe func(e Entry, payload *P) Described) (l Listed, ok bool) {
	out := listedAs(ListDirs(top, []string{dir}, func() any { return new(P) }, Key()), prices, describe)
	if len(out) == 0 {
		return Listed{}, false
	}
	return out[0], true
}

// listedAs is what describe makes of entries, with their state and
// spending.
func listedAs[P any](entries []Entry, prices llm.PriceTable, describe func(e Entry, payload *P) Described) []Listed {
	out := make([]Listed, 0, len(entries))
	for _, e := range entries {
		p, _ := e.State.Payload.(*P)
		if p == nil {
			p = new(P)
		}
		d := describe(e, p)
		l := Listed{ID: e.State.RunID, Dir: e.Dir, Created: e.State.Created, Kind: d.Kind, Material: d.Material}
		if d.Finished != nil {
			l.Items = d.Items
		}
		l.State, l.Missing, l.Calls, l.CostUSD = e.Status(d.Finished, prices)
		if e.State.Authentic {
			l.Resume = d.Command
		}
		out = append(out, l)
	}
	return out
}

// ReadResult reads the result a run wrote as JSON into the file name of
// its directory; ok is false while there is none (or it does not decode).
func ReadResult[R any](e Entry, name string) (r *R, ok bool) {
	b, err := plainfile.ReadOwn(filepath.Join(e.path, name))
	if err != nil {
		return nil, false
	}
	r = new(R)
	if json.Unmarshal(b, r) != nil {
		return nil, false
	}
	return r, true
}
