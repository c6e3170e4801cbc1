package debate

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/internal/lazyre"
	"github.com/sotlabs/sot/internal/plainfile"
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

var branchFile = lazyre.New(`^branch-[0-9]+\.md$`)

func owns(name string) bool {
	switch name {
	case JSONFile, EnsembleFile, LogFile, ReportFile:
		return true
	}
	return branchFile.Re().MatchString(name)
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
	b, err := plainfile.ReadOwn(filepath.Join(dir, run.StateFile))
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

// PartialError: the debate was written without some of its parts (exit 3).
type PartialError = scenario.PartialError

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
		return &PartialError{Result: "the debate", Missing: len(r.Missing), See: LogFile}
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
	return out, scenario.UserErrors(err)
}

func execute(ctx context.Context, p *Plan, o *Options) (*Outcome, error) {
	r, err := scenario.Begin(&o.Options, scenario.Spec{What: "a debate", Other: "another debate", Top: p.top, OutputDir: p.OutputDir, Layout: layout,
		State:  run.State{RunID: p.RunID, Nonce: p.Nonce, Payload: &record{Kind: "debate", Passage: p.Passage.Name, Model: p.Model, Command: o.Command}},
		Models: []string{p.Model}})
	if err != nil {
		return nil, err
	}
	defer r.Close()

	res := p.result()
	res.Started = r.Start.UTC()
	pr := &protocol{x: r.Executor(""), hooks: o.Hooks, c: newComposer(p), res: res}
	if n := p.ObserverSpec.Generate; n > 0 {
		pr.chain = &chain{want: n, floor: p.Settings.MinObserverDistance, regen: p.Settings.Regenerations}
	}
	main := &debate{title: "The main debate", phase: &res.Main, debaters: p.Debaters, rounds: p.Rounds, simult: p.Turns == Simultaneous}
	if err := pr.mainDebate(ctx, main); err != nil {
		if ctx.Err() != nil {
			return nil, scenario.Interrupted(ctx.Err())
		}
		return nil, err
	}
	if len(res.Main.Turns) > 0 && pr.stopped == nil {
		pr.branch(ctx, p, res)
	}
	pr.flush(ctx)
	if err := ctx.Err(); err != nil {
		return nil, scenario.Interrupted(err)
	}
	if o.Graph != nil && p.Graph != nil {
		if err := pr.grow(ctx, o.Graph, p, o, res); err != nil {
			if ctx.Err() != nil {
				return nil, scenario.Interrupted(ctx.Err())
			}
			return nil, err
		}
	}
	if pr.stopped != nil {
		res.Notes = append(res.Notes, "a budget stopped the run: "+llm.Redact(pr.stopped.Error())+"; raise it and run the same command again to finish (finished calls are replayed, not paid again)")
	}
	res.Finished = o.Time().UTC()
	res.Usage = usage(r.Spent(), r.Wall(), len(res.Steps))
	created := r.Start
	if rec := r.Dir.State(nil); rec.RunID == p.RunID && !rec.Created.IsZero() {
		created = rec.Created // a resumed run: when it began
	}
	files, err := r.Write(p.render(res, created)...)
	if err != nil {
		return nil, err
	}
	if err := r.Finish(files); err != nil {
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

// render renders the run's outputs. A debate has no optional format:
// every output is rendered each time, and one an earlier invocation wrote
// that this one does not (a branch beyond its branches, ensemble.json
// without observers) is removed, as review and ask remove a format not
// asked for again, so the directory never holds a file of another
// invocation.
func (p *Plan) render(r *Result, created time.Time) []scenario.File {
	files := []scenario.File{{Name: LogFile, Data: []byte(r.DialecticLog())}, {Name: ReportFile, Data: []byte(r.ObserverReport())}}
	for _, br := range r.Branches {
		files = append(files, scenario.File{Name: BranchFile(br.N), Data: []byte(r.BranchMarkdown(br))})
	}
	// Branch files of an earlier invocation of this run that made more
	// branches describe nothing now.
	for n := len(r.Branches) + 1; n <= MaxObservers; n++ {
		files = append(files, scenario.File{Name: BranchFile(n)})
	}
	files = append(files, scenario.File{Name: JSONFile, Data: indentJSON(r)})
	ensemble := scenario.File{Name: EnsembleFile}
	if len(r.Observers) > 0 {
		ensemble.Data = indentJSON(ensembleOf(r.Observers, r.Diversity, created))
	}
	return append(files, ensemble)
}

// indentJSON is v indented by two spaces, with a line break at the end.
// The values rendered hold nothing that cannot be encoded.
func indentJSON(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("debate: rendering %T: %v", v, err))
	}
	return append(b, '\n')
}

// usage is what the run cost, with the calls replayed from its journal at
// what they cost when they were made.
func usage(sp stack.Spent, wall time.Duration, steps int) Usage {
	// Costs are summed as calls finish, in any order: rounded to a
	// millionth of a dollar, the figure is the same on every run.
	dollars := func(f float64) float64 { return math.Round(f*1e6) / 1e6 }
	return Usage{Calls: sp.Calls, NewCalls: sp.NewCalls, Replayed: sp.Replayed, CacheHits: sp.CacheHits, CostUSD: dollars(sp.Cost), NewCostUSD: dollars(sp.NewCost),
		InputTokens: sp.Usage.InputTokens, CachedInputTokens: sp.Usage.CachedInputTokens, OutputTokens: sp.Usage.OutputTokens,
		Steps: steps, WallMS: wall.Milliseconds()}
}

// CheckPrices refuses, as Execute does before any call, a plan whose
// model has no known price under a cost cap; a dry run calls it so that
// it fails as the run would.
func (p *Plan) CheckPrices(o *Options) error {
	return scenario.CheckPrices(&o.Options, p.Model)
}
