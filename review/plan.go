package review

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/internal/parallel"
	"github.com/sotlabs/sot/internal/plainfile"
	"github.com/sotlabs/sot/internal/project"
	"github.com/sotlabs/sot/internal/secrets"
	"github.com/sotlabs/sot/internal/tokens"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/stack"
	"github.com/sotlabs/sot/material"
	"github.com/sotlabs/sot/persona"
	"github.com/sotlabs/sot/prompt"
	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/review/synthesis"
)

// Review modes, after PAW's final-review modes.
const (
	ModeSociety     = synthesis.ReviewSociety     // specialists with distinct methods (default)
	ModeSingleModel = synthesis.ReviewSingleModel // one general review prompt to one model
	ModeMultiModel  = synthesis.ReviewMultiModel  // the same general prompt to several models, then a synthesis
)

// Options are the inputs of a review. The options every scenario shares
// are scenario.Options': for a review, Dir is the repository (default
// "."), OutputDir (when set) overrides the context's output_dir,
// FollowSymlinks reads artifacts and freeform content that lead through a
// symbolic link out of their project (without it such a path is refused,
// and such a link in a directory is skipped), Formats are the machine
// outputs written besides the Markdown files (json, sarif, rdjson, html;
// one an earlier invocation wrote and not asked for again is removed, see
// WriteFormats), Getenv tells before any call which assigned models cannot
// be used, and the executor falls back to the triage lead's model when a
// call's own model cannot be used.
type Options struct {
	scenario.Options

	Context Context
	Mode    string

	// Material: a diff range (or Staged), artifact paths, or freeform
	// content from a file (Content) or In (Content "-").
	Diff      string
	Staged    bool
	Artifacts []string
	Content   string
	In        io.Reader
	// Paths limits a diff to these files and directories, absolute or
	// relative to the current directory; they must lie in the repository.
	Paths []string
	// Exclude names more files to leave out of a diff, absolute or relative
	// to the current directory: for instance the file standard output is
	// redirected to. The output directories are always left out.
	Exclude []string
	// Trusted reports whether the user trusted a project file as it is now
	// (sot trust). A diff review reads the project's persona files as the
	// base of the change has them, except those (see rebasePersonas).
	Trusted func(path string) bool

	// Models are the models of multi-model mode (Model is the session
	// default).
	Models []string

	Library *persona.Library

	// Seed fixes the order of the triage lead's inputs; nil derives it from
	// the run id, so a re-run reproduces the synthesis.
	Seed *int64
	// Since reviews only what changed after an earlier review of the same
	// diff: SinceAuto (the last review whose commit the change's new side
	// descends from), a run id or run directory, or a commit. The earlier
	// review's findings are carried over where their lines did not change
	// and reported resolved where they did.
	Since string
	since *since // what Since found, once the material is gathered
	// MaxPromptTokens overrides the prompt budget derived from the models'
	// context windows.
	MaxPromptTokens int
	// NoTools keeps every specialist to the material, as if review.tools
	// were off: no specialist looks at the project with tools.
	NoTools bool
}

func (o *Options) executor(st llm.Provider, fallback string) engine.Executor {
	return o.NewExecutor.Make(st, o.Hooks, fallback)
}

func (o *Options) warn(s string) { o.Warnf("%s", s) }

func (o *Options) progress(format string, args ...any) { o.Progressf(format, args...) }

// Plan is everything decided before the first model call.
type Plan struct {
	// since is the earlier review a re-review continues (nil for none).
	since *since

	RunID     string
	OutputDir string
	Mode      string
	Context   Context
	Material  *material.Material
	Chunks    []material.Chunk
	// Specialists take part; for single- and multi-model modes they are the
	// general reviewer under one name per model.
	Specialists        []*persona.Persona
	lenses             lensPlan
	top                string            // the project's top directory, absolute
	Models             map[string]string // specialist -> model
	TriageModel        string
	ContextUsed        string
	SelectionRationale string
	Tasks              []*engine.Task
	taskInfo           map[string]taskInfo
	Seed               int64
	Nonce              string
	PromptBudget       int
	Warnings           []string

	// lookRounds and lookTokens are the limits of a specialist's looks at
	// the project (review.tool_rounds, review.tool_tokens); 0 rounds means
	// no specialist looks.
	lookRounds, lookTokens int
	// toolsFor says which specialists' models can call tools.
	toolsFor map[string]bool

	// signals are the material's, computed once (see startSignals).
	signals func() material.Signals
	// counts are the files' fenced token counts, when they are counted
	// ahead of schedule (see warmTokenizer); nil otherwise.
	counts *fencedCounts

	// Set by a debate: the first round's reports (for the REVIEW files),
	// each later round's output per specialist and lens, and the debate.
	fileReports []finding.Report
	// runDir is the run's directory while Execute runs.
	runDir *run.Dir
	// looks answers the specialists' tool calls while Execute runs.
	looks      *looker
	roundNotes map[[2]string]map[int]string
	debate     *debate
}

// forRun returns the copy of the plan one execution works on: the models
// (a specialist may fall back to the default) and the tasks (their
// requests follow) are its own, and so is what a debate sets. Executing a
// plan never changes it, so one plan may be executed twice, even at once.
func (p *Plan) forRun() *Plan {
	x := *p
	x.Models = maps.Clone(p.Models)
	x.Tasks = make([]*engine.Task, len(p.Tasks))
	for i, t := range p.Tasks {
		c := *t
		c.Request = t.Request.Clone()
		x.Tasks[i] = &c
	}
	x.fileReports, x.roundNotes, x.debate = nil, nil, nil
	return &x
}

type taskInfo struct {
	specialist, lens string
	chunk            int
	prompt           prompt.Composed // for Estimate
	// looks is set when the specialist may look at the project with tools.
	looks bool
	// single composes the prompt of a task with looks for a model that
	// cannot call tools, sent when its endpoint refuses them.
	single func() (prompt.Composed, error)
}

// Early outcomes that end a review before any model call.
var (
	// ErrNoChanges: the diff is empty.
	ErrNoChanges = errors.New("no changes to review")
)

// NothingReviewableError reports material whose every file was skipped
// (binary, generated, vendored, too large, ...): no model is called, and the
// caller must not present this as a clean review.
type NothingReviewableError struct{ Skipped []material.Skipped }

func (e *NothingReviewableError) Error() string {
	return fmt.Sprintf("nothing could be reviewed: every changed file was skipped (%s)", skippedList(e.Skipped))
}

// TrivialError reports a change adaptive selection judged too small.
type TrivialError struct{ Reason string }

func (e *TrivialError) Error() string {
	return e.Reason + "; society-of-thought review is not worth it here: review it with --mode single-model, or pass --specialists all to review it anyway"
}

// Prepare gathers the material and decides the plan. An error that is the
// caller's to fix (a flag, a field, a file given as material) is an
// *engine.UserError.
func Prepare(ctx context.Context, o *Options) (*Plan, error) {
	p, err := prepare(ctx, o)
	if err != nil {
		return nil, userError(err)
	}
	return p, nil
}

func prepare(ctx context.Context, o *Options) (*Plan, error) {
	c := o.Context
	if o.OutputDir != "" {
		c.OutputDir = o.OutputDir
	}
	c.Defaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	secrets.Warm() // while git works
	if o.Mode == "" {
		o.Mode = ModeSociety
	}
	if err := oneOf("mode", o.Mode, ModeSociety, ModeSingleModel, ModeMultiModel); err != nil {
		return nil, err
	}
	if err := o.checkInputs(&c); err != nil {
		return nil, err
	}
	top := projectRoot(o.Dir)
	if err := run.Check(top, c.OutputDir, layout); err != nil {
		return nil, err
	}
	// Every configured key is masked in the material, not only the
	// well-known ones: register them before it is read.
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	stack.RegisterKeys(o.Config, getenv)
	m, err := o.gather(ctx, &c, top)
	if err != nil {
		return nil, err
	}
	// The framing and the coordinates reach the prompts and the report: a
	// key typed or committed in them is masked like one in the material.
	c.Framing, c.Coordinates = secrets.Mask(c.Framing), secrets.Mask(c.Coordinates)
	if m.Empty() {
		return nil, ErrNoChanges
	}
	if len(m.Files) == 0 {
		return nil, &NothingReviewableError{Skipped: m.Skipped}
	}
	def, err := o.Config.ResolveModel(o.Model)
	if err != nil {
		return nil, err
	}
	// What only the material decides is worked out on the other cores
	// while git lists the persona files at the base of the change.
	signals, analysing := startSignals(o.Mode, c, m)
	counts := warmTokenizer(o, m, def.String())
	var rebased []string
	if m.Type == material.TypeDiff && o.Library != nil {
		lib, notes, err := rebasePersonas(ctx, o.Library, m, top, o.Trusted)
		if err != nil {
			return nil, err
		}
		if len(notes) > 0 {
			oo := *o
			oo.Library, rebased = lib, notes
			o = &oo
		}
	}
	p := &Plan{Mode: o.Mode, Context: c, Material: m, TriageModel: def.String(), top: top, Warnings: rebased, signals: signals, counts: counts, since: o.since}
	if c.Coordinates == "" {
		p.Context.Coordinates = m.Coordinates
	}
	if err := p.roster(o, def.String()); err != nil {
		return nil, err
	}
	if analysing {
		signals() // nothing may change the material while it is analysed
	}
	if c.InteractionMode == Debate && !p.Debates() {
		p.Warnings = append(p.Warnings, fmt.Sprintf("debate needs at least two specialists; with only %s, the review runs in parallel mode", strings.Join(p.specialistIDs(), ", ")))
	}
	if err := p.schedule(o); err != nil {
		return nil, err
	}
	return p, nil
}

// startSignals starts analysing the material in the background when the
// review will read the signals (automatic lenses, or an adaptive choice of
// specialists, which alone reads the keywords: material.Analyze, not
// Categorize), and returns the function that waits for them, and whether
// it started; otherwise the function analyses on first call.
func startSignals(mode string, c Context, m *material.Material) (signals func() material.Signals, started bool) {
	sel, _ := persona.ParseSelection(c.Specialists)
	signals = sync.OnceValue(m.Categorize)
	if sel.Adaptive > 0 {
		signals = sync.OnceValue(m.Analyze)
	}
	perspectives := strings.ToLower(strings.TrimSpace(c.Perspectives))
	if mode == ModeSociety && (sel.Adaptive > 0 || perspectives == "" || perspectives == "auto") {
		parallel.Start(func() { signals() })
		return signals, true
	}
	return signals, false
}

// warmTokenizer loads the tokenizer in the background, while the roster
// is decided, when a prompt could come near the prompt budget of the
// default model (or the one the caller set): then the plan counts tokens
// to see whether the material fits, and to cut it into chunks when it does
// not. No text has more tokens than bytes, so a plan whose prompts fit the
// budget in bytes counts nothing, and the tokenizer is not loaded for it.
// A prompt's size is bounded here by the material's, a quarter more for
// the fence's gutter (a few bytes a line), and promptOverhead.
//
// When the material alone is larger than that budget in bytes, its files
// will be counted to cut it into chunks (unless the specialists' models
// have larger windows): they are counted from now on, in the background,
// and the counts are returned; otherwise it returns nil.
func warmTokenizer(o *Options, m *material.Material, def string) *fencedCounts {
	budget := o.MaxPromptTokens
	if budget == 0 {
		budget = llm.ContextWindow(def) - outputReserve
	}
	n := m.Bytes()
	if n+n/4+promptOverhead+promptSlack <= budget {
		return nil
	}
	tokens.Warm()
	if n > budget {
		return countInBackground(m)
	}
	return nil
}

// promptOverhead bounds the bytes of a prompt besides its material: the
// rules, a persona, a lens, the output format and the coordinates.
const promptOverhead = 64 << 10

// checkInputs rejects contradictory material options.
func (o *Options) checkInputs(c *Context) error {
	hasDiff := o.Diff != "" || o.Staged
	switch {
	case o.Content != "" && hasDiff:
		return &FieldError{Field: "--input", Msg: "cannot be combined with --diff or --staged; review one kind of material at a time"}
	case o.Content != "" && len(o.Artifacts) > 0:
		return &FieldError{Field: "--input", Msg: "cannot be combined with --artifacts; review one kind of material at a time"}
	case len(o.Artifacts) > 0 && c.Type == prompt.TypeFreeform:
		return &FieldError{Field: "type", Msg: "is freeform, but --artifacts names documents; use --type artifacts, or --input FILE for freeform content"}
	case o.Diff != "" && o.Staged:
		return &FieldError{Field: "--staged", Msg: "cannot be combined with a --diff range; --staged reviews the index against HEAD"}
	case len(o.Artifacts) > 0 && hasDiff:
		return &FieldError{Field: "--artifacts", Msg: "cannot be combined with --diff or --staged; review one kind of material at a time"}
	case len(o.Artifacts) > 0 && c.Type == prompt.TypeDiff && o.Context.Type != "":
		return &FieldError{Field: "type", Msg: "is diff, but --artifacts names documents; use --type artifacts"}
	case len(o.Artifacts) > 0:
		c.Type = prompt.TypeArtifacts
	case hasDiff && c.Type != prompt.TypeDiff:
		return &FieldError{Field: "type", Msg: fmt.Sprintf("is %s, but --diff/--staged ask for a diff review", c.Type)}
	case c.Type == prompt.TypeArtifacts && len(o.Artifacts) == 0:
		return &FieldError{Field: "--artifacts", Msg: "type artifacts needs the documents to review: --artifacts PATH..."}
	case c.Type == prompt.TypeFreeform && o.Content == "":
		return &FieldError{Field: "--input", Msg: "type freeform needs content: --input FILE, or --input - to read stdin"}
	case o.Content != "" && c.Type != prompt.TypeFreeform:
		return &FieldError{Field: "--input", Msg: "gives freeform content; add --type freeform"}
	}
	if o.Mode != ModeSociety && (o.Context.Specialists != "" || (o.Context.Perspectives != "" && o.Context.Perspectives != "none")) {
		return &FieldError{Field: "mode", Msg: o.Mode + " uses one general reviewer; --specialists and --perspectives apply only to society-of-thought"}
	}
	if o.Mode != ModeSociety && (o.Context.Context != "" || o.Context.PerspectiveCap != 0) {
		return &FieldError{Field: "mode", Msg: o.Mode + " uses one general reviewer; --context and --perspective-cap apply only to society-of-thought"}
	}
	if o.Mode == ModeSingleModel && o.Context.SpecialistModels != "" && o.Context.SpecialistModels != "none" {
		return &FieldError{Field: "specialist_models", Msg: "single-model reviews with the session default; choose it with --model (specialist_models applies to society-of-thought, or names multi-model's models)"}
	}
	if o.Mode != ModeSociety && c.InteractionMode == Debate {
		return &FieldError{Field: "interaction_mode", Msg: "debate needs specialists; it applies only to society-of-thought"}
	}
	if o.Mode != ModeMultiModel && len(o.Models) > 0 {
		return &FieldError{Field: "--models", Msg: "applies only to --mode multi-model; use --specialist-models to give specialists models"}
	}
	return nil
}

func (o *Options) gather(ctx context.Context, c *Context, top string) (*material.Material, error) {
	switch c.Type {
	case prompt.TypeDiff:
		dir := o.Dir
		if dir == "" {
			dir = "."
		}
		only, err := limitPaths(top, o.Paths)
		if err != nil {
			return nil, err
		}
		rng := o.Diff
		if o.Since != "" {
			s, sinceRng, paths, err := o.sinceRange(ctx, top, dir)
			if err != nil {
				return nil, err
			}
			if s != nil {
				o.since, rng = s, sinceRng
				only = limitTo(only, paths, top)
				c.Coordinates = cmp.Or(c.Coordinates, sinceCoordinates(o.Diff, s))
			}
		}
		var baseDirs []string // listed at the base while git diffs (rebasePersonas)
		if o.Library != nil {
			baseDirs = personaDirs(top)
		}
		m, err := material.Diff(ctx, material.DiffOptions{Dir: dir, Range: rng, Staged: o.Staged, Untracked: rng == "" && !o.Staged,
			Exclude: ownOutputs(top, c.OutputDir, o.Exclude), Only: only, BaseDirs: baseDirs})
		if err != nil {
			return nil, err
		}
		if o.since != nil && len(m.Files) == 0 && len(m.Skipped) == 0 {
			return nil, ErrNoChanges
		}
		return m, checkPathsMatch(top, o.Paths, only, m)

	case prompt.TypeArtifacts:
		return material.ArtifactsWith(o.Artifacts, material.ArtifactOptions{Exclude: ownOutputs(top, c.OutputDir, o.Exclude), FollowSymlinks: o.FollowSymlinks})
	}
	if o.Content == "-" {
		if o.In == nil {
			return nil, errors.New("no standard input to read")
		}
		return material.Freeform("stdin", o.In)
	}
	f, err := os.Open(o.Content)
	if err != nil {
		return nil, &FieldError{Field: "--input", Msg: fmt.Sprintf("cannot read the freeform content: %v", err)}
	}
	defer f.Close()
	return material.FreeformWith(o.Content, f, o.FollowSymlinks)
}

// skippedList lists skipped files on one line, each path a Go string
// literal and each reason flattened: a file name may hold line breaks, and
// the list goes into prompts and messages.
func skippedList(s []material.Skipped) string {
	var parts []string
	for _, x := range s {
		parts = append(parts, prompt.Quote(x.Path)+" ("+prompt.Inline(x.Reason)+")")
	}
	if len(parts) > 5 {
		parts = append(parts[:5], fmt.Sprintf("and %d more", len(parts)-5))
	}
	return strings.Join(parts, "; ")
}

// roster decides the specialists, lenses and models.
func (p *Plan) roster(o *Options, def string) error {
	c := p.Context
	if p.Mode != ModeSociety {
		return p.generalRoster(o, def)
	}
	sel, _ := persona.ParseSelection(c.Specialists)
	res, err := o.Library.ResolveSpecialists(persona.ResolveOptions{Selection: sel, Context: c.Context, Type: c.Type, Interactive: c.Interactive, Ask: o.Ask})
	if err != nil {
		return err
	}
	p.Warnings = append(p.Warnings, res.Warnings...)
	p.ContextUsed = res.Context
	specs := res.Specialists
	if sel.Adaptive > 0 {
		var weigh func(string) (float64, string)
		if o.Config != nil && o.Config.Review.LearnFromResolutions {
			weigh = acceptanceWeights(p.top)
		}
		picked, rationale, trivial := adaptive(specs, sel.Adaptive, p.Material, p.signals, weigh)
		if len(picked) == 0 {
			if c.Interactive == persona.InteractiveTrue && o.Ask != nil {
				if picked, rationale, err = askSelection(o.Ask, specs, rationale); err != nil {
					return err
				}
			} else if trivial {
				return &TrivialError{Reason: rationale}
			} else {
				return &TrivialError{Reason: "adaptive selection chose no specialist: " + rationale}
			}
		}
		specs, p.SelectionRationale = picked, rationale
	}
	p.Specialists = specs
	lp, warns, err := planLenses(o.Library, c.Perspectives, c.PerspectiveCap, specs, p.Material, p.signals)
	if err != nil {
		return &FieldError{Field: "perspectives", Msg: err.Error()}
	}
	p.lenses = lp
	p.Warnings = append(p.Warnings, warns...)
	ms, _ := ParseModels(c.SpecialistModels)
	models, warns := assignModels(specs, ms, def, o.Config)
	if err := checkRunFiles(specs, lp); err != nil {
		return err
	}
	p.Models = models
	p.Warnings = append(p.Warnings, warns...)
	p.Warnings = append(p.Warnings, p.dropKeyless(o, def)...)
	return nil
}

// dropKeyless moves specialists whose assigned model's provider has no API
// key to the session default, with a warning, before anything is printed
// or sent: PAW asks for that fallback for an unavailable model.
func (p *Plan) dropKeyless(o *Options, def string) []string {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var warns []string
	for _, s := range p.Specialists {
		m := p.Models[s.ID]
		if m == def {
			continue
		}
		if err := stack.MissingKey(o.Config, getenv, m); err != nil {
			warns = append(warns, fmt.Sprintf("model %q for %s is unavailable (%v); using the session default %s", m, s.ID, err, def))
			p.Models[s.ID] = def
		}
	}
	return warns
}

// Choices when adaptive selection picks nobody and the user can be asked.
const (
	choiceAll    = "proceed with all specialists"
	choiceSome   = "name the specialists to include"
	choiceReport = "stop and report it"
)

// askSelection lets the user settle an adaptive selection that picked
// nobody: all specialists, the ones they name, or stop.
func askSelection(ask persona.Asker, pool []*persona.Persona, why string) ([]*persona.Persona, string, error) {
	choice, err := ask(why+". What now?", []string{choiceAll, choiceSome, choiceReport})
	if err != nil {
		return nil, "", err
	}
	switch choice {
	case choiceAll:
		return pool, why + "; the user chose to proceed with all specialists", nil
	case choiceSome:
		byID := map[string]*persona.Persona{}
		var ids []string
		for _, p := range pool {
			byID[p.ID] = p
			ids = append(ids, p.ID)
		}
		note := ""
		for {
			answer, err := ask(note+"Specialists to include, comma separated ("+strings.Join(ids, ", ")+"); empty to stop:", nil)
			if err != nil {
				return nil, "", err
			}
			var picked []*persona.Persona
			var names, unknown []string
			for _, n := range strings.Split(answer, ",") {
				n = strings.ToLower(strings.TrimSpace(n))
				switch p, ok := byID[n]; {
				case n == "":
				case ok:
					picked, names = append(picked, p), append(names, n)
				default:
					unknown = append(unknown, n)
				}
			}
			if len(unknown) == 0 && len(picked) > 0 {
				return picked, why + "; the user chose " + strings.Join(names, ", "), nil
			}
			if strings.TrimSpace(answer) == "" {
				return nil, "", persona.ErrAborted
			}
			note = fmt.Sprintf("Not among them: %s. ", strings.Join(unknown, ", "))
		}
	}
	return nil, "", persona.ErrAborted
}

// generalRoster builds the single- and multi-model modes: one general
// reviewer, once per model.
func (p *Plan) generalRoster(o *Options, def string) error {
	models := []string{def}
	if p.Mode == ModeMultiModel {
		models = o.Models
		field := "--models"
		if len(models) == 0 {
			ms, _ := ParseModelsFor(p.Context.SpecialistModels, o.Config)
			models, field = ms.Pool, "models (--models, or Final Review Models or specialist models in the review context)"
		}
		if len(models) < 2 {
			return &FieldError{Field: field, Msg: fmt.Sprintf("multi-model mode needs at least two distinct models and has %d; name them, e.g. --models openai:gpt-4.1,anthropic:claude-sonnet-4-5", len(models))}
		}
	}
	p.Models = map[string]string{}
	p.lenses = lensPlan{mode: "none"}
	p.ContextUsed = "none"
	for _, m := range models {
		ref, err := o.Config.ResolveModel(m)
		if err != nil {
			return &FieldError{Field: "--models", Msg: err.Error()}
		}
		g := generalReviewer(modelID(ref.String()))
		if _, dup := p.Models[g.ID]; dup {
			return &FieldError{Field: "--models", Msg: fmt.Sprintf("%s names %s again (after aliases are resolved); multi-model mode compares distinct models", m, ref)}
		}
		p.Specialists = append(p.Specialists, g)
		p.Models[g.ID] = ref.String()
	}
	return nil
}

// modelID turns a model reference into a persona name usable in file names.
func modelID(ref string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(ref) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	id := strings.Trim(b.String(), "-")
	if len(id) > 60 {
		id = id[:60]
	}
	return "general-" + id
}

// generalBody is the single persona of single- and multi-model reviews.
const generalBody = `# General reviewer

## Identity & Narrative Backstory
You are an experienced senior engineer doing a careful, general review, the kind a trusted colleague gives before a merge.

## Cognitive Strategy
1. Read the whole material once to understand what it is for.
2. Go through it again piece by piece, asking of each part whether it is correct, safe, fast enough, tested, and clear to the next person who maintains it.
3. Report the problems that matter, most severe first, each tied to the lines or section it is about.
`

func generalReviewer(id string) *persona.Persona {
	p, _ := persona.Parse(id+".md", []byte(generalBody), persona.Specialist, persona.LevelBuiltin)
	return p
}

// schedule computes the run id, the budget, the chunks and the tasks.
func (p *Plan) schedule(o *Options) error {
	rules := o.Library.SharedRules()
	budget := o.MaxPromptTokens
	if budget == 0 {
		budget = 1 << 30
		for _, m := range p.Models {
			budget = min(budget, llm.ContextWindow(m)-outputReserve)
		}
	}
	if cfg := o.Config; cfg != nil && cfg.Review.Tools && !o.NoTools && p.Context.Type != prompt.TypeFreeform {
		p.lookRounds, p.lookTokens = cfg.Review.ToolRounds, cfg.Review.ToolTokens
		p.toolsFor = map[string]bool{}
		for id, m := range p.Models {
			p.toolsFor[id] = canCallTools(cfg, m)
		}
		if o.MaxPromptTokens == 0 {
			// What the tools show is sent too: the material leaves room
			// for it in the models' context windows.
			budget = max(budget-p.lookTokens, budget/2)
		}
	}
	p.PromptBudget = budget
	p.RunID = p.runID(o)
	p.OutputDir = p.Context.OutputDir
	if p.OutputDir == "" { // a named directory was checked before the material was read
		p.OutputDir = project.FromWorkDir(filepath.Join(p.top, ".sot", "reviews", p.RunID))
		if err := run.Check(p.top, p.OutputDir, layout); err != nil {
			return err
		}
	}
	st := loadState(p.OutputDir, nil)
	if st.RunID == p.RunID && !o.Fresh && st.Authentic {
		p.Nonce, p.Seed = st.Nonce, st.Seed
	} else {
		p.Nonce = prompt.NonceFor(run.Key(), p.RunID)
		p.Seed = run.Seed(p.RunID)
	}
	if o.Seed != nil {
		p.Seed = *o.Seed
	}
	// A text has no more tokens than bytes: when every prompt with the whole
	// material fits the budget in bytes (with room to spare), nothing needs
	// tokenizing, and a run far from its budget never loads the tokenizer.
	p.Chunks = []material.Chunk{{Index: 0, Files: p.Material.Files}}
	warnings := len(p.Warnings)
	if p.Material.Bytes()+promptSlack <= budget {
		if err := p.buildTasks(o, rules); err == nil {
			longest := 0
			for _, info := range p.taskInfo {
				longest = max(longest, info.prompt.Len())
			}
			if longest+promptSlack <= budget {
				return nil
			}
		}
	}
	p.Warnings = p.Warnings[:warnings]
	// Otherwise the chunks are cut by tokens: the prompt without material,
	// for the largest specialist and lens, leaves the room for material.
	probe := &prompt.Run{Type: p.Context.Type, Framing: p.Context.Framing, SharedRules: rules, Nonce: strings.Repeat("0", 24), Coordinates: p.Context.Coordinates}
	var probes []prompt.Composed
	overheadBytes := 0
	for _, s := range p.Specialists {
		for _, l := range append([]*persona.Persona{nil}, p.lenses.lenses...) {
			c, err := probe.Compose(s, prompt.Options{Lens: l, Round: chunkNote(9, 9)})
			if err != nil {
				return err
			}
			probes = append(probes, c)
			overheadBytes = max(overheadBytes, len(c.Text))
		}
	}
	// Material of twice the room in bytes is over it fenced (the fence
	// only adds to it): it is not joined and measured.
	if roomBytes := budget - overheadBytes - 256; roomBytes < 500 || p.Material.Bytes() > 2*roomBytes || fencedBytes(p.Material) > roomBytes {
		overhead := 0
		for _, c := range probes {
			overhead = max(overhead, c.Tokens())
		}
		room := budget - overhead - 256
		if room < 500 {
			return &FieldError{Field: "--max-prompt-tokens", Msg: fmt.Sprintf("a prompt budget of %d tokens leaves no room for material (the personas and rules alone take %d)", budget, overhead)}
		}
		// Each file is counted once, as fenced; the chunks carry their
		// counts into composition, which does not count them again.
		if chunks := p.Material.SplitBy(room, p.counts.sizeOf); len(chunks) > 1 {
			p.Chunks = chunks
			how := "whole files"
			if splitsAFile(p.Chunks) {
				how = "whole files, a file too large for one prompt cut into parts at hunk or line boundaries"
			}
			total := 0
			for _, c := range chunks {
				total += c.Tokens
			}
			p.Warnings = append(p.Warnings, fmt.Sprintf("the material (%d tokens) exceeds the prompt budget; it is split into %d chunks of %s, and every specialist reviews every chunk",
				total, len(p.Chunks), how))
		} else if len(chunks) == 1 {
			p.Chunks[0].Tokens = chunks[0].Tokens // the same files, in the material's order
		}
	}
	return p.buildTasks(o, rules)
}

// splitsAFile reports whether some chunk holds only part of a file.
func splitsAFile(chunks []material.Chunk) bool {
	for _, c := range chunks {
		paths := c.Paths() // without the part suffixes
		for i, f := range c.Files {
			if f.Path != paths[i] {
				return true
			}
		}
	}
	return false
}

// outputReserve is left of a model's context window for its answer.
const outputReserve = 12_000

// promptSlack is the room a prompt keeps below its budget when it is
// measured in bytes: 256 tokens for the headings and notes around the
// material, 500 for the smallest room material may have.
const promptSlack = 256 + 500

func chunkNote(i, n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf("The material is too large for one prompt, so it is split into %d parts. This is part %d of %d. Review only the files in this part; other reviewers cover the rest.", n, i, n)
}

// reviewInstructions is the user message of every specialist call.
const reviewInstructions = `Review the material now. Apply your cognitive strategy step by step, within your domain.
Answer with one JSON object that matches the schema, filling its fields in the order the output format gives: first "examined" (what you examined and how; with no findings, why nothing qualified), then "findings", each with its reasoning (grounds, location, warrant, rebuttal conditions, verification) before its severity and confidence. Use the new-file line numbers printed in the material, and 0 where there is none.
Report nothing you cannot ground in the material or in what a tool showed you.`

// buildTasks composes the tasks of every chunk, the chunks at once (each
// prompt copies its chunk's material), in the order of the chunks.
func (p *Plan) buildTasks(o *Options, rules *persona.Persona) error {
	type chunkTasks struct {
		tasks    []*engine.Task
		infos    []taskInfo
		warnings []string
		err      error
	}
	built := make([]chunkTasks, len(p.Chunks))
	parallel.For(len(p.Chunks), func(k int) {
		b := &built[k]
		b.tasks, b.infos, b.warnings, b.err = p.chunkTasks(p.Chunks[k], rules)
	})
	p.taskInfo = map[string]taskInfo{}
	p.Tasks = nil
	for _, b := range built {
		if b.err != nil {
			return b.err
		}
		p.Warnings = append(p.Warnings, b.warnings...)
		for i, t := range b.tasks {
			p.Tasks = append(p.Tasks, t)
			p.taskInfo[t.ID] = b.infos[i]
		}
	}
	return nil
}

// chunkTasks composes the tasks of one chunk: one for each specialist and
// each lens it runs under (see lensPlan.runs).
func (p *Plan) chunkTasks(ch material.Chunk, rules *persona.Persona) ([]*engine.Task, []taskInfo, []string, error) {
	n := len(p.Chunks)
	run := &prompt.Run{Type: p.Context.Type, Framing: p.Context.Framing, SharedRules: rules, Material: ch.Text(), MaterialTokens: ch.Tokens,
		Nonce: p.Nonce, Coordinates: p.Context.Coordinates, Extra: p.extraCoordinates()}
	var tasks []*engine.Task
	var infos []taskInfo
	var warnings []string
	for _, s := range p.Specialists {
		for _, l := range p.lenses.runs(s.ID) {
			looks := p.lookRounds > 0 && p.toolsFor[s.ID]
			// The prompt is joined when its call goes out (engine.Task.Compose):
			// each copies the chunk's material.
			c, err := run.Compose(s, prompt.Options{Lens: l, Round: chunkNote(ch.Index, n), MaxTokens: p.PromptBudget, Tools: looks, Defer: true})
			if err != nil {
				return nil, nil, nil, fmt.Errorf("compose the prompt of %s: %w", s.ID, err)
			}
			warnings = append(warnings, c.Warnings...)
			lensID := ""
			if l != nil {
				lensID = l.ID
			}
			label := "review/" + s.ID
			if lensID != "" {
				label += "/" + lensID
			}
			if n > 1 {
				label += fmt.Sprintf("/c%d", ch.Index)
			}
			task := &engine.Task{ID: label, Group: s.ID, Request: &llm.Request{
				Model: p.Models[s.ID], System: c.Text, SharedPrefix: c.SharedPrefix, Label: label,
				Messages:    []llm.Message{{Role: llm.RoleUser, Content: reviewInstructions}},
				Temperature: llm.Float(0.3), MaxTokens: 8192,
				Schema: &llm.Schema{Name: finding.ReportSchemaName, JSON: finding.ReportSchema},
			}}
			if c.Deferred() {
				task.Compose, task.Prefix = c.Join, fmt.Sprintf("chunk %d", ch.Index)
			}
			tasks = append(tasks, task)
			chunk := 0
			if n > 1 {
				chunk = ch.Index
			}
			info := taskInfo{specialist: s.ID, lens: lensID, chunk: chunk, prompt: c, looks: looks}
			if looks {
				opts := prompt.Options{Lens: l, Round: chunkNote(ch.Index, n), MaxTokens: p.PromptBudget}
				info.single = func() (prompt.Composed, error) { return run.Compose(s, opts) }
			}
			infos = append(infos, info)
		}
	}
	return tasks, infos, warnings, nil
}

// Estimate is what a plan's specialist calls are expected to send and cost.
type Estimate = engine.Estimate

// Estimate counts the tokens of every task's prompt (which loads the
// tokenizer) and prices them, assuming estimatedOutput tokens an answer.
// The calls of one chunk share its prompt prefix.
func (p *Plan) Estimate(o *Options) Estimate {
	instructions := tokens.Count(reviewInstructions)
	calls := make([]engine.Planned, 0, len(p.Tasks))
	for _, t := range p.Tasks {
		info := p.taskInfo[t.ID]
		calls = append(calls, engine.Planned{Model: t.Request.Model, InputTokens: info.prompt.Tokens() + instructions,
			PrefixTokens: info.prompt.PrefixTokens(), Prefix: fmt.Sprint(info.chunk)})
	}
	return engine.Estimates(calls, llm.DefaultPrices().Merge(o.Config.Prices), estimatedOutput)
}

// estimatedOutput is the answer length assumed by --dry-run's cost estimate.
const estimatedOutput = 1500

func (p *Plan) extraCoordinates() map[string]string {
	if len(p.Material.Skipped) == 0 {
		return nil
	}
	return map[string]string{"Files skipped (not in the material)": skippedList(p.Material.Skipped)}
}

// runID names a review by what it reviews and how: the same command on the
// same material gets the same id, so a re-run finds its journal.
func (p *Plan) runID(o *Options) string {
	id := run.NewID("sot-run-v1")
	id.Add(p.Mode, p.Context.Type, p.Context.Framing, p.Context.Coordinates, p.Context.InteractionMode, fmt.Sprint(p.Context.PerspectiveCap))
	for _, f := range p.Material.Files {
		id.Add(f.Path, f.Text)
	}
	for _, s := range p.Specialists {
		id.Add(s.ID, s.Body, p.Models[s.ID])
	}
	for _, l := range p.lenses.lenses {
		id.Add(l.ID, l.Body)
	}
	if o.Seed != nil {
		id.Add(fmt.Sprint(*o.Seed))
	}
	// What else changes the requests: the prompt budget (how the material
	// is cut) and the synthesis model. Added only when set, so the ids of
	// runs that never set them stay as they were.
	if o.MaxPromptTokens > 0 {
		id.Add("max-prompt-tokens", fmt.Sprint(o.MaxPromptTokens))
	}
	id.Add("triage", p.TriageModel)
	if p.since != nil {
		id.Add("since", p.since.RunID, p.since.Commit)
	}
	if p.lookRounds > 0 {
		id.Add("looks", fmt.Sprint(p.lookRounds), fmt.Sprint(p.lookTokens))
	}
	return id.String()
}

// record is a review's part of its run's record (run.json): what moderator
// mode, --resolve and sot runs need to know about the run.
type record struct {
	Mode        string            `json:"mode"`
	Context     Context           `json:"context"`
	Models      map[string]string `json:"models"`
	TriageModel string            `json:"triage_model"`
	Lenses      []string          `json:"lenses,omitempty"`
	// Head is the commit a diff's new side was (or, for the working
	// tree, the commit checked out: Worktree), so that a later review of
	// the same work can review only what came after it (--since); Since
	// is the earlier review this one continued.
	Head     string `json:"head,omitempty"`
	Worktree bool   `json:"worktree,omitempty"`
	Since    string `json:"since,omitempty"`
}

// recordOf returns the review's part of a run's record, or an empty one.
func recordOf(st run.State) *record {
	if r, ok := st.Payload.(*record); ok && r != nil {
		return r
	}
	return &record{}
}

// loadState reads the record of the run in dir, its review part into rec
// when rec is set; a missing or unreadable record is no run.
func loadState(dir string, rec *record) run.State {
	b, err := plainfile.ReadOwn(filepath.Join(dir, run.StateFile))
	if err != nil {
		return run.State{}
	}
	if rec == nil {
		rec = &record{}
	}
	return run.ParseState(b, rec, run.Key())
}

// LensIDs lists the lenses that apply.
func (p *Plan) LensIDs() []string {
	var out []string
	for _, l := range p.lenses.lenses {
		out = append(out, l.ID)
	}
	return out
}

// Prompt returns the composed system prompt of one specialist's first task.
func (p *Plan) Prompt(specialist string) (string, error) {
	for _, t := range p.Tasks {
		if t.Group == specialist {
			return p.taskInfo[t.ID].prompt.Join() + "\n# User message\n\n" + t.Request.Messages[0].Content + "\n", nil
		}
	}
	return "", fmt.Errorf("--show-prompt %q: no such specialist in this review (taking part: %s)", specialist, strings.Join(p.specialistIDs(), ", "))
}

func (p *Plan) specialistIDs() []string {
	var out []string
	for _, s := range p.Specialists {
		out = append(out, s.ID)
	}
	return out
}

// projectRoot is the absolute top of the project holding dir (default
// "."): the nearest parent with .git, .sot or .paw, or dir itself.
func projectRoot(dir string) string {
	dir = cmp.Or(dir, ".")
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return persona.RepoRoot(dir)
}

// DefaultOutputDir is where a run's files go when no output_dir is given:
// .sot/reviews/<run-id> at the top of the project holding dir, so that a
// review started from a subdirectory lands, and resumes, where one started
// at the top does. The path is relative to the current directory when it
// can be.
func DefaultOutputDir(dir, runID string) string {
	return project.FromWorkDir(filepath.Join(projectRoot(dir), ".sot", "reviews", runID))
}

// ownOutputs lists, as absolute paths, what a review must not review of its
// own making: the runs sot keeps under the project's .sot (reviews,
// answers, debates, and the runs of sot mcp with their logs), the
// project's record of decisions on findings, the named
// output directory, and the caller's extra paths.
func ownOutputs(top, outputDir string, extra []string) []string {
	out := []string{filepath.Join(top, projectResolutions)}
	for _, d := range []string{"reviews", "answers", "debates", "mcp"} {
		out = append(out, filepath.Join(top, ".sot", d))
	}
	for _, p := range append([]string{outputDir}, extra...) {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			out = append(out, abs)
		}
	}
	return out
}

// checkPathsMatch refuses a PATH that neither exists nor names a changed
// or deleted file: most likely a typo, which would otherwise make a clean
// review of nothing.
func checkPathsMatch(top string, given, abs []string, m *material.Material) error {
	if len(abs) == 0 {
		return nil
	}
	var changed []string
	for _, f := range m.Files {
		changed = append(changed, f.Path, f.OldPath)
	}
	for _, s := range m.Skipped {
		changed = append(changed, s.Path)
	}
	for i, p := range abs {
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		rel, ok := project.Within(top, p)
		if !ok {
			continue
		}
		rel = filepath.ToSlash(rel)
		if !slices.ContainsFunc(changed, func(c string) bool { return c != "" && (c == rel || strings.HasPrefix(c, rel+"/")) }) {
			return &FieldError{Field: "PATH", Msg: fmt.Sprintf("%s does not exist and names no changed or deleted file; check the spelling", given[i])}
		}
	}
	return nil
}

// limitPaths makes the paths that limit a diff absolute, refusing any
// outside the project (git would not see them, and limiting to nothing
// would review everything).
func limitPaths(top string, paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		if _, ok := project.Within(top, abs); !ok {
			return nil, &FieldError{Field: "PATH", Msg: fmt.Sprintf("%s is outside the repository at %s; name files or directories inside it", p, top)}
		}
		out = append(out, abs)
	}
	return out, nil
}
