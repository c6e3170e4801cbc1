package debate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/stack"
)

// The files a debate's run writes besides the engine's.
const (
	JSONFile = "debate.json"
)

var layout = run.Layout{
	Owns:    owns,
	Outputs: []string{JSONFile, EnsembleFile, LogFile, ReportFile},
	Field:   "--output-dir",
}

var branchFile = regexp.MustCompile(`^branch-[0-9]+\.md$`)

func owns(name string) bool {
	switch name {
	case JSONFile, EnsembleFile, LogFile, ReportFile:
		return true
	}
	return branchFile.MatchString(name)
}

// record is the debate's part of its run's record (run.json).
type record struct {
	Kind    string `json:"kind"`
	Passage string `json:"passage"`
	Model   string `json:"model"`
	// Command is the command that started the debate, which resumes it.
	Command string `json:"command,omitempty"`
}

func loadState(dir string) run.State {
	b, err := os.ReadFile(filepath.Join(dir, run.StateFile))
	if err != nil {
		return run.State{}
	}
	return run.ParseState(b, &record{}, run.Key())
}

// Outcome is a finished debate.
type Outcome struct {
	Plan   *Plan
	Result *Result
	// Files are the files written.
	Files []string
	// Stopped is set when a budget ended the run early.
	Stopped error
}

// PartialError: the debate was written without some of its parts.
type PartialError struct{ Missing int }

func (e *PartialError) Error() string {
	return fmt.Sprintf("the debate is partial: %d part(s) missing (see %s)", e.Missing, LogFile)
}

// FailedError: no turn of the main debate came back, so there is no
// debate to speak of.
type FailedError struct{ Turns int }

func (e *FailedError) Error() string {
	return fmt.Sprintf("the debate failed: none of the %d turn(s) of the main debate came back (sot doctor checks that the model answers)", e.Turns)
}

// Verdict is nil for a whole debate, a *FailedError when the main debate
// has no turn, and a *PartialError when parts are missing.
func (out *Outcome) Verdict() error {
	r := out.Result
	if len(r.Main.Turns) == 0 {
		return &FailedError{Turns: out.Plan.turnSteps(out.Plan.Rounds)}
	}
	if r.Partial() {
		return &PartialError{Missing: len(r.Missing)}
	}
	return nil
}

// Execute runs the plan: the main debate, one step a turn (or a round),
// each turn's summary riding in the next step; the branch questions, one
// step, near-duplicates merged; the branch debates in lockstep; then the
// syntheses, the merge-backs and the final merge, a step each. A branch that
// fails is recorded as missing and the others go on.
// Every finished call is journaled in the run's directory, so running the
// same debate again continues where an interrupted run stopped and sends
// no finished call twice. An error that is the caller's to fix is an
// *engine.UserError.
func Execute(ctx context.Context, p *Plan, o *Options) (*Outcome, error) {
	out, err := execute(ctx, p, o)
	if err != nil && (errors.Is(err, llm.ErrMissingKey) || errors.Is(err, llm.ErrConfig)) {
		return nil, engine.AsUserError(err)
	}
	return out, err
}

func execute(ctx context.Context, p *Plan, o *Options) (*Outcome, error) {
	start := o.Time()
	st, err := o.NewStack("")
	if err != nil {
		return nil, err
	}
	if err := st.Meter.CheckPrices(p.Model); err != nil {
		return nil, err
	}
	state := run.State{RunID: p.RunID, Nonce: p.Nonce, Created: start.UTC(),
		Payload: &record{Kind: "debate", Passage: p.Passage.Name, Model: p.Model, Command: o.Command}}
	d, j, old, err := run.Begin(p.top, p.OutputDir, layout, "a debate", state, o.Fresh, st)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	if old != "" {
		o.Warnf("%s held run %s, another debate; its files were removed and run %s writes there now", p.OutputDir, old, p.RunID)
	}
	defer st.Close()

	res := p.result()
	res.Started = start.UTC()
	pr := &protocol{x: o.NewExecutor.Make(st, o.Hooks, ""), hooks: o.Hooks, c: newComposer(p), res: res}
	if n := p.ObserverSpec.Generate; n > 0 {
		pr.chain = &chain{want: n, floor: p.Settings.MinObserverDistance, regen: p.Settings.Regenerations}
	}
	main := &debate{title: "The main debate", phase: &res.Main, debaters: p.Debaters, rounds: p.Rounds, simult: p.Turns == Simultaneous}
	if err := pr.mainDebate(ctx, main); err != nil {
		if ctx.Err() != nil {
			return nil, interrupted(ctx.Err())
		}
		return nil, err
	}
	if len(res.Main.Turns) > 0 && pr.stopped == nil {
		pr.branch(ctx, p, res)
	}
	pr.flush(ctx)
	if err := ctx.Err(); err != nil {
		return nil, interrupted(err)
	}
	if o.Graph != nil && p.Graph != nil {
		if err := pr.grow(ctx, o.Graph, p, o, res); err != nil {
			if ctx.Err() != nil {
				return nil, interrupted(ctx.Err())
			}
			return nil, err
		}
	}
	if pr.stopped != nil {
		res.Notes = append(res.Notes, "a budget stopped the run: "+llm.Redact(pr.stopped.Error())+"; raise it and run the same command again to finish (finished calls are replayed, not paid again)")
	}
	res.Finished = o.Time().UTC()
	res.Usage = usage(st, start, o.Time(), len(res.Steps))
	created := start
	if rec := d.State(nil); rec.RunID == p.RunID && !rec.Created.IsZero() {
		created = rec.Created // a resumed run: when it began
	}
	files, err := p.write(d, res, created)
	if err != nil {
		return nil, err
	}
	if err := j.Ready(); err != nil {
		return nil, err
	}
	if err := d.RecordWritten(files); err != nil {
		return nil, err
	}
	return &Outcome{Plan: p, Result: res, Files: files, Stopped: pr.stopped}, nil
}

// branch asks for the branch questions, debates each, synthesizes and
// merges it back, and merges the branches into one understanding.
func (pr *protocol) branch(ctx context.Context, p *Plan, res *Result) {
	if pr.chain != nil {
		pr.finishChain(ctx)
		res.Observers = pr.chain.obs
		if len(res.Observers) == 0 {
			res.Notes = append(res.Notes, "no observer could be generated, so the generic question was asked instead")
		}
	}
	questions := pr.questions(ctx, res.Observers, res.Main.Turns)
	res.Questions = questions
	if len(res.Observers) > 1 {
		res.Diversity = ensembleDiversity(res.Observers)
		var asked []string
		for _, q := range questions {
			if q.Observer != "" {
				asked = append(asked, q.Question)
			}
		}
		corpus := []string{p.Passage.Text}
		for _, t := range res.Main.Turns {
			corpus = append(corpus, t.Text)
		}
		res.Diversity.Questions = questionDiversity(asked, strings.Join(corpus, "\n"), run.Seed(p.RunID))
	}
	if len(questions) == 0 {
		res.Notes = append(res.Notes, "no branch question came back, so no branch was debated")
		return
	}
	res.Branches, res.Merged = branchesOf(questions, p.Settings.DuplicateSimilarity)
	pr.branchDebates(ctx, res.Branches, p.Debaters, p.BranchRounds, p.Turns == Simultaneous)
	pr.synthesize(ctx, res.Branches)
	pr.mergeBack(ctx, res.Main.Turns, res.Branches)
	pr.finalMerge(ctx, res.Branches)
}

// result starts the Result with what the plan decided.
func (p *Plan) result() *Result {
	r := &Result{RunID: p.RunID, Passage: p.Passage, Model: p.Model, Turns: p.Turns, Rounds: p.Rounds, BranchRounds: p.BranchRounds, Settings: p.Settings,
		Observers: p.Observers, ObserverMode: p.observerMode()}
	for _, d := range p.Debaters {
		r.Debaters = append(r.Debaters, Speaker{ID: d.ID, Name: d.DisplayName(), Stance: d.Meta.Stance, Focus: d.Meta.Focus, Source: source(d.Level.String(), d.Path)})
	}
	return r
}

// observerMode says how the observers were chosen.
func (p *Plan) observerMode() string {
	switch s := p.ObserverSpec; {
	case s.None:
		return "none"
	case s.Generate > 0:
		return fmt.Sprintf("generate:%d", s.Generate)
	case s.From != "":
		return "ensemble " + s.From
	}
	return "named"
}

// source names where a persona came from.
func source(level, path string) string {
	if level == "explicit" {
		return path
	}
	return level
}

// write writes the run's outputs. A debate has no optional format: every
// output is written each time, and one an earlier invocation wrote that
// this one does not (a branch beyond its branches, ensemble.json without
// observers) is removed, as review and ask remove a format not asked for
// again, so the directory never holds a file of another invocation.
func (p *Plan) write(d *run.Dir, r *Result, created time.Time) ([]string, error) {
	var files []string
	put := func(name string, v any) error {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		if err := d.WriteFile(name, append(b, '\n'), 0o644); err != nil {
			return err
		}
		files = append(files, filepath.Join(p.OutputDir, name))
		return nil
	}
	text := func(name, s string) error {
		if err := d.WriteFile(name, []byte(s), 0o644); err != nil {
			return err
		}
		files = append(files, filepath.Join(p.OutputDir, name))
		return nil
	}
	if err := text(LogFile, r.DialecticLog()); err != nil {
		return nil, err
	}
	if err := text(ReportFile, r.ObserverReport()); err != nil {
		return nil, err
	}
	for _, br := range r.Branches {
		if err := text(BranchFile(br.N), r.BranchMarkdown(br)); err != nil {
			return nil, err
		}
	}
	// Branch files of an earlier invocation of this run that made more
	// branches describe nothing now.
	for n := len(r.Branches) + 1; n <= MaxObservers; n++ {
		if err := d.Remove(BranchFile(n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if err := put(JSONFile, r); err != nil {
		return nil, err
	}
	if len(r.Observers) > 0 {
		if err := put(EnsembleFile, ensembleOf(r.Observers, r.Diversity, created)); err != nil {
			return nil, err
		}
	} else if err := d.Remove(EnsembleFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return files, nil
}

// usage is what the run cost, with the calls replayed from its journal at
// what they cost when they were made.
func usage(st *stack.Stack, start, now time.Time, steps int) Usage {
	sp := st.Spent()
	// Costs are summed as calls finish, in any order: rounded to a
	// millionth of a dollar, the figure is the same on every run.
	dollars := func(f float64) float64 { return math.Round(f*1e6) / 1e6 }
	return Usage{Calls: sp.Calls, NewCalls: sp.NewCalls, Replayed: sp.Replayed, CacheHits: sp.CacheHits, CostUSD: dollars(sp.Cost), NewCostUSD: dollars(sp.NewCost),
		InputTokens: sp.Usage.InputTokens, CachedInputTokens: sp.Usage.CachedInputTokens, OutputTokens: sp.Usage.OutputTokens,
		Steps: steps, WallMS: now.Sub(start).Milliseconds()}
}

func interrupted(err error) error {
	return fmt.Errorf("interrupted: %w (run the same command again to continue; finished calls are replayed)", err)
}

// CheckPrices refuses, as Execute does before any call, a plan whose
// model has no known price under a cost cap; a dry run calls it so that
// it fails as the run would.
func (p *Plan) CheckPrices(o *Options) error {
	st, err := o.NewStack("")
	if err != nil {
		return err
	}
	return engine.AsUserError(st.Meter.CheckPrices(p.Model))
}
