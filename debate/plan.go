package debate

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/internal/project"
	"github.com/sotlabs/sot/persona"
	"github.com/sotlabs/sot/prompt"
)

// The turn protocols.
const (
	// Sequential is turn-taking: each turn sees the passage and every
	// earlier turn, in order (the seed's protocol).
	Sequential = "sequential"
	// Simultaneous: every debater speaks at once in a round, each seeing
	// every earlier round; fewer dependent calls.
	Simultaneous = "simultaneous"
)

// DefaultDebaters are the seed's three debaters, in speaking order.
var DefaultDebaters = []string{"literalist", "symbolist", "structuralist"}

// Defaults of the rounds.
const (
	DefaultRounds       = 3
	DefaultBranchRounds = 2
	// MaxRounds bounds --rounds and --branch-rounds: past it debaters
	// repeat themselves (the seed's reason to branch instead).
	MaxRounds = 10
	// MaxDebaters bounds --debaters.
	MaxDebaters = 8
)

// Options configure one debate. The options every scenario shares (the
// project and output directories, the model, the configuration and its
// budgets, the stack, fresh, the command, formats, hooks and executor)
// are scenario.Options'; the output directory defaults to
// .sot/debates/<run-id> at the project's top, and FollowSymlinks reads an
// ObserversFrom file that leads through a symbolic link out of its project.
type Options struct {
	scenario.Options

	// Passage is the text debated (see ReadPassage).
	Passage Passage
	// Debaters are persona names or persona files, in speaking order
	// (default DefaultDebaters).
	Debaters []string
	// Rounds of the main debate (default 3); Turns is Sequential (the
	// default) or Simultaneous.
	Rounds int
	Turns  string
	// Observers is --observers: observer names or persona files (comma
	// separated), "none", or "generate:N"; "" means DefaultObservers.
	Observers string
	// ObserversFrom is an ensemble file (ensemble.json) whose observers to
	// use instead; it excludes Observers.
	ObserversFrom string
	// BranchRounds are the rounds of each branch debate (default 2).
	BranchRounds int
	// Settings are the temperatures and thresholds; zero fields take
	// their defaults.
	Settings Settings

	Library *persona.Library
	// Graph is the argument graph the debate draws on and, once whole,
	// grows (sot debate --graph); nil for a debate on its own.
	Graph *Graph
}

// Plan is everything decided before the first model call.
type Plan struct {
	RunID     string
	OutputDir string
	Model     string
	Passage   Passage
	Debaters  []*persona.Persona
	Rounds    int
	Turns     string
	// Observers are the observers that ask the branch questions, fixed
	// before the run (named ones); none with generate:N until the run
	// generates them, and none with ObserverSpec.None (one generic branch).
	Observers    []*Observer
	ObserverSpec ObserverSpec
	BranchRounds int
	Settings     Settings
	// Nonce fences the passage in every prompt; stable for the run.
	Nonce string
	// Warnings are things the caller should be told before the run.
	Warnings []string
	// Graph is what the debaters get from the argument graph; nil without
	// one.
	Graph *GraphPlan

	top string
	// noPrefix: the model's provider keeps no prompt cache (see composer).
	noPrefix bool
}

// turnSteps is the number of steps the main debate takes.
func (p *Plan) turnSteps(rounds int) int {
	if p.Turns == Simultaneous {
		return rounds
	}
	return rounds * len(p.Debaters)
}

// Branches is the most branches the plan debates: one a question, and one
// generic question without observers.
func (p *Plan) Branches() int {
	switch {
	case p.ObserverSpec.Generate > 0:
		return p.ObserverSpec.Generate
	case len(p.Observers) > 0:
		return len(p.Observers)
	}
	return 1
}

// Calls is an upper bound on the model calls the plan makes: every turn
// and its summary, every phase summary, each branch question, synthesis,
// merge-back and the final merge, with every structured answer (a
// question, a synthesis) asked for twice.
// TypicalCalls is the calls a run of the plan makes when every structured
// answer fits the first time: Calls without the second askings. The live
// display counts against it, the summaries included, as the journal does.
func (p *Plan) TypicalCalls() int {
	b := p.Branches()
	return p.Calls() - b /* questions asked again */ - b /* syntheses asked again */ - p.links()
}

func (p *Plan) Calls() int {
	d, b := len(p.Debaters), p.Branches()
	n := 2*d*p.Rounds + 1 // the main debate
	n += 2 * b            // the questions
	n += b * (2*d*p.BranchRounds + 1)
	n += b*2 + b // syntheses, merge-backs
	if b > 1 {
		n++ // the final merge
	}
	// The observers generated, each link asked twice at most, and the
	// argument graph's calls.
	return n + 2*p.links() + p.graphCalls()
}

// links is the most observer generations the plan makes: each observer,
// and each of its regenerations.
func (p *Plan) links() int { return p.ObserverSpec.Generate * (1 + p.Settings.Regenerations) }

// Steps is the number of Executes the plan makes at most: the critical
// path of dependent calls, as every call that nothing waits for rides in
// a step that is due anyway.
func (p *Plan) Steps() int {
	n := max(p.turnSteps(p.Rounds), p.links()) + 1 + p.turnSteps(p.BranchRounds) + 2
	if p.Branches() > 1 {
		n++
	}
	if p.Graph != nil {
		n += graphStepsMax
	}
	return n
}

// Prepare checks the options and decides the run: the debaters, the run's
// id, directory and nonce. No model is called. An error that is the
// caller's to fix is an *engine.UserError.
func Prepare(ctx context.Context, o *Options) (*Plan, error) {
	if strings.TrimSpace(o.Passage.Text) == "" {
		return nil, &engine.UserError{Field: "passage", Msg: "give a passage: sot debate PASSAGE_FILE, - for standard input, or --passage TEXT", Err: errNoPassage}
	}
	settings := o.Settings.WithDefaults()
	if err := settings.Validate(); err != nil {
		return nil, engine.AsUserError(err)
	}
	model, err := o.Config.ResolveModel(o.Model)
	if err != nil {
		return nil, engine.AsUserError(err)
	}
	p := &Plan{Model: model.String(), Passage: o.Passage, Settings: settings, top: ProjectTop(o.Dir)}
	p.noPrefix = o.Config.RunsProgram(p.Model)
	if err := p.Passage.checkSize(p.Model); err != nil {
		return nil, err
	}
	switch p.Rounds = cmp.Or(o.Rounds, DefaultRounds); {
	case p.Rounds < 1 || p.Rounds > MaxRounds:
		return nil, &engine.UserError{Field: "--rounds", Msg: fmt.Sprintf("%d: give 1 to %d rounds", o.Rounds, MaxRounds)}
	}
	switch t := strings.ToLower(strings.TrimSpace(o.Turns)); t {
	case "", Sequential, "turn-taking", "taking":
		p.Turns = Sequential
	case Simultaneous:
		p.Turns = Simultaneous
	default:
		return nil, &engine.UserError{Field: "--turns", Msg: fmt.Sprintf("%q: use sequential (turn-taking) or simultaneous", o.Turns)}
	}
	switch p.BranchRounds = cmp.Or(o.BranchRounds, DefaultBranchRounds); {
	case p.BranchRounds < 1 || p.BranchRounds > MaxRounds:
		return nil, &engine.UserError{Field: "--branch-rounds", Msg: fmt.Sprintf("%d: give 1 to %d rounds", o.BranchRounds, MaxRounds)}
	}
	if p.Debaters, err = resolveDebaters(o.Library, o.Debaters); err != nil {
		return nil, err
	}
	if p.ObserverSpec, err = ParseObservers(o.Observers); err != nil {
		return nil, &engine.UserError{Field: "--observers", Msg: err.Error()}
	}
	switch {
	case o.ObserversFrom != "" && strings.TrimSpace(o.Observers) != "":
		return nil, &engine.UserError{Field: "--observers-from", Msg: "--observers and --observers-from both choose the observers; give one"}
	case o.ObserversFrom != "":
		if p.Observers, err = ReadEnsemble(o.ObserversFrom, o.FollowSymlinks); err != nil {
			return nil, err
		}
		p.ObserverSpec = ObserverSpec{From: o.ObserversFrom}
	case len(p.ObserverSpec.Names) > 0:
		if p.Observers, err = resolveObservers(o.Library, p.ObserverSpec.Names); err != nil {
			return nil, err
		}
	}

	if o.Graph != nil {
		if p.Graph, err = o.Graph.planGraph(ctx, p); err != nil {
			return nil, err
		}
	}

	p.RunID = p.runID()
	p.OutputDir = o.OutputDir
	if p.OutputDir == "" {
		p.OutputDir = project.FromWorkDir(filepath.Join(p.top, ".sot", "debates", p.RunID))
	}
	if err := run.Check(p.top, p.OutputDir, layout); err != nil {
		return nil, err
	}
	st := loadState(p.OutputDir)
	if st.RunID == p.RunID && st.Authentic && !o.Fresh {
		p.Nonce = st.Nonce
	} else {
		p.Nonce = prompt.NonceFor(run.Key(), p.RunID)
	}
	return p, nil
}

// resolveDebaters finds each named debater: a persona name, or a persona
// file (a path, or a name ending in .md).
func resolveDebaters(lib *persona.Library, names []string) ([]*persona.Persona, error) {
	if len(names) == 0 {
		names = DefaultDebaters
	}
	var out []*persona.Persona
	seen := map[string]bool{}
	for _, n := range names {
		p, err := findPersona(lib, persona.Debater, n, "--debaters")
		if err != nil {
			return nil, err
		}
		if seen[p.ID] {
			return nil, &engine.UserError{Field: "--debaters", Msg: fmt.Sprintf("%s is named twice; each debater speaks once a round", p.ID)}
		}
		seen[p.ID] = true
		out = append(out, p)
	}
	if len(out) < 2 {
		return nil, &engine.UserError{Field: "--debaters", Msg: "a debate needs at least two debaters"}
	}
	if len(out) > MaxDebaters {
		return nil, &engine.UserError{Field: "--debaters", Msg: fmt.Sprintf("%d debaters; name at most %d", len(out), MaxDebaters)}
	}
	return out, nil
}

// findPersona resolves one name of a list: a persona file, or a persona of
// kind by its id or its display name ("The Literalist").
func findPersona(lib *persona.Library, kind persona.Kind, name, field string) (*persona.Persona, error) {
	name = strings.TrimSpace(name)
	if persona.IsPath(name) {
		if _, err := os.Stat(name); err != nil {
			return nil, &engine.UserError{Field: field, Msg: fmt.Sprintf("persona file %s: %v", name, err)}
		}
		p, err := lib.AddFile(name)
		if err != nil {
			return nil, &engine.UserError{Field: field, Msg: err.Error()}
		}
		if p.Kind != kind {
			return nil, &engine.UserError{Field: field, Msg: fmt.Sprintf("%s is a %s persona, not a %s; set kind: %s in its frontmatter", name, p.Kind, kind, kind)}
		}
		return p, nil
	}
	id := strings.ToLower(name)
	if p, ok := lib.Get(kind, id); ok {
		return p, nil
	}
	slug := strings.Join(strings.Fields(strings.TrimPrefix(id, "the ")), "-")
	if p, ok := lib.Get(kind, slug); ok {
		return p, nil
	}
	for _, p := range lib.List(kind) {
		if strings.EqualFold(p.DisplayName(), name) {
			return p, nil
		}
	}
	var known []string
	for _, p := range lib.List(kind) {
		known = append(known, p.ID)
	}
	return nil, &engine.UserError{Field: field, Msg: fmt.Sprintf("no %s persona named %q (known: %s); name a persona file to use your own", kind, name, strings.Join(known, ", "))}
}

// idSettings are the settings that shape a debate's calls, as its run id
// has always written them (the graph's context budget is not one: the
// context it gives is in the id itself).
type idSettings struct {
	Temperatures        Temperatures
	DuplicateSimilarity float64
	MinObserverDistance float64
	Regenerations       int
}

// runID names a debate by what it debates and how: the same command on the
// same passage gets the same id, so a re-run finds its journal.
func (p *Plan) runID() string {
	id := run.NewID("sot-debate-v1")
	id.Add(p.Passage.Text, p.Model, p.Turns, fmt.Sprint(p.Rounds, p.BranchRounds), fmt.Sprintf("%+v", idSettings{
		p.Settings.Temperatures, p.Settings.DuplicateSimilarity, p.Settings.MinObserverDistance, p.Settings.Regenerations}))
	// The turn length shapes every turn; the default's is the id the
	// debate had before the length was a setting.
	if w := p.turnWords(); w != config.DefaultTurnWords {
		id.Add("turn_words", fmt.Sprint(w))
	}
	for _, d := range p.Debaters {
		id.Add("debater", d.ID, d.Digest)
	}
	id.Add("observers", fmt.Sprint(p.ObserverSpec.None, p.ObserverSpec.Generate))
	for _, ob := range p.Observers {
		id.Add(ob.ID, ob.Name, ob.Bias, ob.Focus, strings.Join(ob.BlindSpots, "\x00"), strings.Join(ob.ExampleQuestions, "\x00"), strings.Join(ob.AntiExamples, "\x00"), ob.Body)
	}
	// What the debaters get from an argument graph is part of their
	// prompts: another context is another debate. An empty graph gives
	// nothing, and the debate is the one without a graph.
	if g := p.Graph; g != nil && g.Context != nil && strings.TrimSpace(g.Context.Text) != "" {
		id.Add("graph", g.Context.Mode, g.Context.Text)
	}
	return id.String()
}

// ProjectTop is the absolute top of the project holding dir (default
// "."): the nearest parent with .git, .sot or .paw.
func ProjectTop(dir string) string {
	dir = cmp.Or(dir, ".")
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return persona.RepoRoot(dir)
}
