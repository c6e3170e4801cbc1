// Package reviewcmd implements "sot review": flags and files become a
// review context, the review runs, and the outcome becomes files, a summary
// and an exit code CI can act on.
package reviewcmd

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/cmd/version"
	"github.com/sotlabs/sot/internal/cmdutil"
	"github.com/sotlabs/sot/internal/project"
	"github.com/sotlabs/sot/internal/status"
	"github.com/sotlabs/sot/internal/tokens"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/stack"
	"github.com/sotlabs/sot/material"
	"github.com/sotlabs/sot/persona"
	"github.com/sotlabs/sot/review"
	"github.com/sotlabs/sot/review/report"
)

// Options are the command's inputs beyond the review context.
type Options struct {
	Context         review.Context
	ContextFile     string
	WorkflowContext string
	Mode            string
	Models          []string
	Diff            string
	Staged          bool
	Artifacts       []string
	Input           string
	Formats         []string
	Stdout          string
	Paths           []string // limit a diff review to these files and directories
	FailOn          string
	DryRun          bool
	ShowPrompt      string
	Seed            int64
	MaxPromptTokens int
	Fresh           bool
	Resolve         string
	FollowSymlinks  bool
}

// NewCmd returns "sot review".
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "review [PATH...]",
		Short: "Review a diff, documents or text with several specialists and synthesize their findings",
		Long: `Review a code diff (default: the working tree against HEAD), design documents
(--artifacts) or any text (--type freeform --input FILE|-) with the specialist
personas, each under its perspective lenses, and synthesize one review that
keeps disagreements visible. PATH arguments limit a diff to those files and
directories; with --artifacts they are more documents.

Writes to the output directory (default .sot/reviews/<run-id>/):
REVIEW-<SPECIALIST>[-<LENS>].md per specialist and lens, REVIEW-SYNTHESIS.md,
and with --format json|sarif|rdjson the machine outputs review.json,
review.sarif and review.rdjsonl. An output an earlier run wrote there that
is not asked for again is removed, so the directory holds one run's files.

The review context can also come from a YAML/JSON file (--context-file) or a
PAW WorkflowContext.md (--workflow-context); flags win over files.

Running the same command again after a crash or Ctrl-C continues the run:
finished model calls are replayed from the run's journal, not paid for again.

Exit codes: 0 done (or nothing changed); 1 findings at or above --fail-on
(which wins over 3, so a partial review never hides a must-fix), or no
specialist call succeeded; 2 usage error (or another process is running a
review into the output directory); 3 partial review (some
specialist or step failed, and the synthesis lists it) or nothing
reviewable (every changed file was skipped); 130 interrupted (Ctrl-C: run
the same command again to continue).`,
		Example: `  sot review                                   # working tree against HEAD
  sot review --diff main...HEAD --format sarif --fail-on must-fix
  sot review internal/auth cmd/server/main.go   # only these paths of the change
  sot review --staged --specialists security,testing --perspectives none
  sot review --specialists adaptive:3 --interactive false
  sot review --artifacts docs/design.md docs/plan.md
  git show | sot review --type freeform --input - --framing "Review this patch email."
  sot review --dry-run --show-prompt security`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("perspective-cap") && o.Context.PerspectiveCap < 1 {
				return cmdutil.UsageError("perspective_cap: must be a positive integer, not %d", o.Context.PerspectiveCap)
			}
			if o.Resolve != "" {
				// --resolve walks a finished review with that review's own
				// settings: any other review option would be ignored.
				var others []string
				cmd.LocalNonPersistentFlags().VisitAll(func(fl *pflag.Flag) {
					if fl.Changed && fl.Name != "resolve" {
						others = append(others, "--"+fl.Name)
					}
				})
				if len(others) > 0 || len(args) > 0 {
					return cmdutil.UsageError("--resolve walks a finished review with its own settings and takes no other review options or arguments (got %s)", strings.Join(append(others, args...), " "))
				}
			}
			switch {
			case len(args) == 0:
			case len(o.Artifacts) > 0 || strings.EqualFold(o.Context.Type, "artifacts"):
				o.Artifacts = append(o.Artifacts, args...) // more documents
			case strings.EqualFold(o.Context.Type, "freeform") || o.Input != "":
				return cmdutil.UsageError("unexpected arguments %q: freeform content comes from --input FILE or -", args)
			default:
				o.Paths = args // limit the diff
			}
			return Run(cmd.Context(), f, o)
		},
	}
	fl := cmd.Flags()
	c := &o.Context
	fl.StringVar(&c.Type, "type", "", "what is reviewed: diff (default), artifacts or freeform")
	fl.StringVar(&c.Coordinates, "coordinates", "", "how the specialists are told what they review (default: the range, paths or input name)")
	fl.StringVar(&c.OutputDir, "output-dir", "", "where the review files go (default .sot/reviews/<run-id>/)")
	fl.StringVar(&c.Specialists, "specialists", "", "all (default), a comma list of names or .md files, or adaptive:N")
	fl.StringVar(&c.Context, "context", "", "only specialists declaring this context (default implementation for diff and artifacts)")
	fl.StringVar(&c.InteractionMode, "interaction-mode", "", "parallel (default) or debate")
	fl.StringVar(&c.Interactive, "interactive", "", "true, false or smart (default): whether to ask you about trade-offs and setup problems")
	fl.StringVar(&c.SpecialistModels, "specialist-models", "", "none, a model pool, pinned specialist=model pairs, or a mix, comma separated")
	fl.StringVar(&c.Framing, "framing", "", "the preamble of a freeform review")
	fl.StringVar(&c.Perspectives, "perspectives", "", "lenses: auto (default), none, or a comma list")
	fl.IntVar(&c.PerspectiveCap, "perspective-cap", 0, "most lenses per specialist (default 2)")
	fl.StringVar(&o.ContextFile, "context-file", "", "read the review context from this YAML or JSON file")
	fl.StringVar(&o.WorkflowContext, "workflow-context", "", "read the Final Review fields of a PAW WorkflowContext.md")
	fl.StringVar(&o.Mode, "mode", "", "society-of-thought (default), single-model or multi-model")
	fl.StringSliceVar(&o.Models, "models", nil, "the models of --mode multi-model, comma separated")
	fl.StringVar(&o.Diff, "diff", "", "the git range to review: A..B, A...B or a revision (default: working tree against HEAD)")
	fl.BoolVar(&o.Staged, "staged", false, "review the staged changes")
	fl.StringSliceVar(&o.Artifacts, "artifacts", nil, "documents or directories to review (sets --type artifacts)")
	fl.StringVar(&o.Input, "input", "", "freeform content: a file, or - for stdin")
	cmdutil.AddFollowSymlinks(fl, &o.FollowSymlinks)
	fl.StringSliceVar(&o.Formats, "format", nil, "outputs besides markdown: json, sarif, rdjson (or rdjsonl), html (a report to open in a browser); repeatable")
	fl.StringVar(&o.Stdout, "stdout", "", "print one format (markdown, json, sarif, rdjson) to stdout instead of its file; status goes to stderr; with --dry-run, json prints the plan")
	fl.StringVar(&o.FailOn, "fail-on", "never", "exit 1 when findings at or above this severity exist: must-fix, should-fix, consider or never")
	fl.BoolVar(&o.DryRun, "dry-run", false, "print the plan (specialists, lenses, models, calls, estimated tokens and cost) and call no model")
	fl.StringVar(&o.ShowPrompt, "show-prompt", "", "with --dry-run, also print the composed prompt of this specialist")
	fl.Int64Var(&o.Seed, "seed", 0, "fix the randomized order of the synthesis inputs (default: derived from the run)")
	fl.IntVar(&o.MaxPromptTokens, "max-prompt-tokens", 0, "prompt budget per call; larger material is split into chunks (default: from the models' context windows)")
	fl.BoolVar(&o.Fresh, "fresh", false, "start the run afresh instead of replaying its journal (the response cache still answers; add --no-cache to call the models again)")
	fl.StringVar(&o.Resolve, "resolve", "", "walk the findings of a finished review (its directory or run id) and record accept, dismiss or defer for each")
	return cmd
}

// Run executes "sot review". Ctrl-C (or SIGTERM) stops the run: finished
// calls are in the journal, and the error says how to resume, with exit
// code 130.
func Run(ctx context.Context, f *cmdutil.Factory, o *Options) error {
	return cmdutil.Interruptible(ctx, "the run's journal", func(ctx context.Context) error { return run(ctx, f, o) })
}

func run(ctx context.Context, f *cmdutil.Factory, o *Options) error {
	if o.Resolve != "" {
		return resolve(f, o.Resolve)
	}
	ro, err := buildOptions(f, o)
	var off *workflowDisabled
	if errors.As(err, &off) {
		cmdutil.Fprintf(f.IO.ErrOut, "sot: %s:%d: Final Agent Review is disabled, so no review runs and no model is called; set it to enabled to review this work\n", off.path, off.line)
		return nil
	}
	if err != nil {
		return err
	}
	// The stacks the review builds, so that the retries they needed can be
	// told at the end.
	var (
		stacksMu sync.Mutex
		stacks   []*stack.Stack
	)
	newStack := ro.NewStack
	ro.NewStack = func(journal string) (*stack.Stack, error) {
		st, err := newStack(journal)
		if st != nil {
			stacksMu.Lock()
			stacks = append(stacks, st)
			stacksMu.Unlock()
		}
		return st, err
	}
	retries := func() stack.Retries {
		stacksMu.Lock()
		defer stacksMu.Unlock()
		var r stack.Retries
		for _, st := range stacks {
			r = r.Add(st.Retries())
		}
		return r
	}
	human := f.IO.Out
	if o.Stdout != "" {
		human = f.IO.ErrOut
	}
	// Messages go to stderr; while the live status lines are on screen,
	// through the display, which keeps them intact.
	errOut := f.IO.ErrOut
	ro.Warn = func(s string) { cmdutil.Warn(errOut, s) }
	ro.Progress = func(s string) { cmdutil.Say(errOut, s) }

	if o.DryRun {
		tokens.Warm() // the estimate counts tokens: load the encoding while git works
	}
	plan, err := review.Prepare(ctx, ro)
	var trivial *review.TrivialError
	var nothing *review.NothingReviewableError
	switch {
	case errors.Is(err, review.ErrNoChanges):
		fmt.Fprintln(human, "sot: no changes to review; no model was called")
		return emptyOutputs(f, human, o, ro, "no changes to review", nil)
	case errors.As(err, &nothing):
		fmt.Fprintf(human, "sot: nothing could be reviewed: every changed file was skipped; no model was called\n")
		for _, s := range nothing.Skipped {
			cmdutil.Fprintf(human, "  - %s: %s\n", s.Path, s.Reason)
		}
		if err := emptyOutputs(f, human, o, ro, "nothing could be reviewed: every changed file was skipped", nothing.Skipped); err != nil {
			return err
		}
		return &cmdutil.ExitError{Code: cmdutil.ExitPartial, Err: fmt.Errorf("no changed file could be reviewed (%d skipped)", len(nothing.Skipped))}
	case errors.As(err, &trivial):
		cmdutil.Say(human, trivial.Error())
		return emptyOutputs(f, human, o, ro, trivial.Error(), nil)
	case errors.Is(err, persona.ErrAborted):
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: err}
	case err != nil:
		return err // a user error exits 2 (cmdutil.Code)
	}
	for _, w := range plan.Warnings {
		ro.Warn(w)
	}
	printAssignments(f.IO.ErrOut, plan)
	if o.DryRun {
		if err := plan.CheckPrices(ro); err != nil {
			return err // as the run would: a usage error
		}
		return printPlan(f, human, plan, plan.Estimate(ro), o)
	}
	if err := missingKeys(f, ro, plan); err != nil {
		return err
	}
	d := status.New(f.IO.ErrOut, f.IO.ErrTTY)
	d.Expect(len(plan.Tasks))
	ro.Events = d.Event
	ro.Ask = d.Asking(ro.Ask) // a question mid-run ends the live lines first
	// All the run prints goes through the display: on a terminal above
	// its live lines, otherwise a line at a time, never two at once (a
	// detached summary may end as the next step begins).
	errOut = d
	f.LogTo(d)
	stopTicks := d.Start(time.Second)
	out, err := review.Execute(ctx, plan, ro)
	stopTicks()
	d.Close() // nothing may draw over what the user types next (moderator mode)
	if engine.IsUserError(err) {
		return cmdutil.AsUsage(err)
	}
	if errors.Is(err, llm.ErrAuth) || errors.Is(err, llm.ErrUnknownModel) {
		return fmt.Errorf("%w (sot doctor checks each configured model and says what to fix)", err)
	}
	if err != nil {
		return err
	}
	if o.Stdout != "" {
		b, err := review.Render(o.Stdout, out.Result, version.Get().Version)
		if err != nil {
			return err
		}
		f.IO.Out.Write(b)
	}
	summarize(human, out, d.Counts())
	if r := retries().String(); r != "" {
		fmt.Fprintf(human, "sot: the run needed %s (--verbose shows each)\n", r)
	}
	offerModerator(ctx, f, ro, out)
	return exitCode(out, o.FailOn)
}

// resolve records outcomes for a finished review's findings.
func resolve(f *cmdutil.Factory, ref string) error {
	run, err := review.LoadRun(ref)
	if err != nil {
		return cmdutil.AsUsage(err)
	}
	n, err := run.Resolve(cmdutil.TerminalAsker(f.IO), f.IO.Out, version.Get().Version)
	if err != nil {
		return err // a user error exits 2 (cmdutil.Code)
	}
	fmt.Fprintf(f.IO.Out, "sot: recorded %d resolution(s) in %s/resolutions.jsonl\n", n, run.Dir)
	return nil
}

// offerModerator offers moderator mode at the end of an interactive review
// run on a terminal.
func offerModerator(ctx context.Context, f *cmdutil.Factory, ro *review.Options, out *review.Outcome) {
	if ro.Ask == nil || out.Plan.Mode != review.ModeSociety {
		return
	}
	run, err := review.LoadRun(out.Plan.OutputDir)
	if err != nil || run.ModeratorSkip() != "" {
		return
	}
	choice, err := ro.Ask("Enter moderator mode to question the specialists?", []string{"yes", "no"})
	if err != nil || choice != "yes" {
		return
	}
	if err := run.Moderate(ctx, review.ModerateOptions{Library: ro.Library, NewStack: ro.NewStack, In: f.IO.In, Out: f.IO.Out}); err != nil {
		cmdutil.Say(f.IO.ErrOut, "moderator mode: "+err.Error())
	}
}

func without(list []string, x string) []string {
	var out []string
	for _, v := range list {
		if v != x {
			out = append(out, v)
		}
	}
	return out
}

// buildOptions merges flags, the context file and the workflow context, and
// checks the command's own flags.
func buildOptions(f *cmdutil.Factory, o *Options) (*review.Options, error) {
	cfg, _, err := f.Config()
	if err != nil {
		return nil, err
	}
	// Models named by flags, before any file adds its own.
	if err := review.CheckSpecialistModels(o.Context.SpecialistModels, "--specialist-models", cfg); err != nil {
		return nil, cmdutil.AsUsage(err)
	}
	if err := review.CheckModelNames(o.Models, "--models", cfg); err != nil {
		return nil, cmdutil.AsUsage(err)
	}
	c := o.Context
	for _, p := range []string{o.ContextFile, o.WorkflowContext} {
		if err := cmdutil.CheckInput(p, o.FollowSymlinks || p == ""); err != nil {
			return nil, err
		}
	}
	if o.ContextFile != "" {
		fc, err := review.LoadFile(o.ContextFile)
		if err != nil {
			return nil, cmdutil.AsUsage(err)
		}
		file := newProjectFile(f, o.ContextFile)
		if c.SpecialistModels == "" {
			if err := review.CheckFileModels(o.ContextFile, fc, cfg); err != nil {
				return nil, cmdutil.AsUsage(err)
			}
			fc.SpecialistModels = file.models(cfg, "specialist_models", fc.SpecialistModels)
		}
		if c.OutputDir == "" {
			fc.OutputDir = file.outputDir(fc.OutputDir)
		}
		if c.Specialists == "" {
			fc.Specialists = file.specialists("specialists", fc.Specialists)
		}
		c.Merge(fc)
	}
	mode := o.Mode
	if o.WorkflowContext != "" {
		wf, err := review.LoadWorkflow(o.WorkflowContext)
		if err != nil {
			return nil, cmdutil.AsUsage(err)
		}
		if wf.Disabled {
			return nil, &workflowDisabled{wf.Path, wf.DisabledLine}
		}
		// Check only the models this run will use: a flag overrides a
		// field, and single-model mode uses neither list.
		check := wf
		if c.SpecialistModels != "" {
			check.Context.SpecialistModels = ""
		}
		if len(o.Models) > 0 {
			check.Models = nil
		}
		if cmp.Or(mode, wf.Mode) == review.ModeSingleModel {
			check.Context.SpecialistModels, check.Models = "", nil
		}
		if err := check.CheckModels(cfg); err != nil {
			return nil, cmdutil.AsUsage(err)
		}
		file := newProjectFile(f, o.WorkflowContext)
		if c.SpecialistModels == "" {
			wf.Context.SpecialistModels = file.models(cfg, "Final Review Specialist Models", wf.Context.SpecialistModels)
		}
		if c.Specialists == "" {
			wf.Context.Specialists = file.specialists("Final Review Specialists", wf.Context.Specialists)
		}
		if len(o.Models) == 0 && len(wf.Models) > 0 {
			var kept []string
			for _, m := range strings.Split(file.models(cfg, "Final Review Models", strings.Join(wf.Models, ",")), ",") {
				if m = strings.TrimSpace(m); m != "" {
					kept = append(kept, m)
				}
			}
			wf.Models = kept
		}
		if mode == "" {
			mode = wf.Mode
		}
		wc := wf.Context
		if mode == review.ModeSingleModel || mode == review.ModeMultiModel {
			// A WorkflowContext.md carries the Final Review fields of every
			// mode; those of society-of-thought do not apply here.
			// Multi-model takes its models from Final Review Models, or else
			// from the pool of Final Review Specialist Models.
			wc.Specialists, wc.Perspectives, wc.InteractionMode = "", "", ""
			if mode == review.ModeSingleModel {
				wc.SpecialistModels = ""
			} else if len(o.Models) == 0 {
				o.Models = wf.Models
			}
		}
		c.Merge(wc)
	}
	for i, fm := range o.Formats {
		o.Formats[i] = formatName(fm)
		if _, ok := review.Formats[o.Formats[i]]; !ok && o.Formats[i] != "markdown" {
			return nil, cmdutil.UsageError("--format %q: use markdown, json, sarif, rdjson (rdjsonl, the file's extension, works too) or html", fm)
		}
	}
	if o.Stdout != "" {
		o.Stdout = formatName(o.Stdout)
		if _, ok := review.Formats[o.Stdout]; !ok && o.Stdout != "markdown" {
			return nil, cmdutil.UsageError("--stdout %q: use markdown, json, sarif, rdjson (rdjsonl, the file's extension, works too) or html", o.Stdout)
		}
	}
	if err := review.CheckFailOn(o.FailOn); err != nil {
		return nil, err
	}
	if o.ShowPrompt != "" && !o.DryRun {
		return nil, cmdutil.UsageError("--show-prompt works with --dry-run")
	}
	if o.DryRun && o.Stdout != "" && o.Stdout != "json" {
		return nil, cmdutil.UsageError("--stdout %s with --dry-run: a dry run writes no review; use --stdout json for the plan as JSON", o.Stdout)
	}
	if o.MaxPromptTokens < 0 {
		return nil, cmdutil.UsageError("--max-prompt-tokens must be positive")
	}
	lib, err := f.Library()
	if err != nil {
		return nil, err
	}
	ro := &review.Options{Context: c, Mode: mode, Models: o.Models, Diff: o.Diff, Staged: o.Staged, Artifacts: o.Artifacts, Exclude: redirectTarget(f.IO.Out), Paths: o.Paths,
		Content: o.Input, In: f.IO.In, FollowSymlinks: o.FollowSymlinks,
		Trusted: func(path string) bool { return f.Trust().TrustedFile(path, f.WorkDir()).Trusted }, Dir: f.WorkDir(), Config: cfg, Library: lib, Getenv: f.Getenv, MaxPromptTokens: o.MaxPromptTokens, Fresh: o.Fresh,
		Formats: without(o.Formats, o.Stdout), Version: version.Get().Version}
	if o.Seed != 0 {
		seed := o.Seed
		ro.Seed = &seed
	}
	if f.IO.InTTY {
		ro.Ask = cmdutil.TerminalAsker(f.IO)
	}
	ro.NewStack = f.NewStack(cfg, cmdutil.StackOptions{})
	return ro, nil
}

// missingKeys refuses, once and before any call, a review whose models
// include one whose provider has no key (cmdutil's Factory.MissingKey). A
// specialist's own model without a key has already been moved to the
// session default; this is the default itself.
func missingKeys(f *cmdutil.Factory, ro *review.Options, p *review.Plan) error {
	models := []string{p.TriageModel}
	for _, m := range p.Models {
		models = append(models, m)
	}
	return f.MissingKey(ro.Config, models...)
}

// formatName reads a format as the user may write it: in any case, and as
// its file's extension (rdjsonl, md).
func formatName(f string) string {
	switch f = strings.ToLower(strings.TrimSpace(f)); f {
	case "rdjsonl":
		return "rdjson"
	case "md":
		return "markdown"
	}
	return f
}

// workflowDisabled is a WorkflowContext.md that says "Final Agent Review:
// disabled": sot says so and exits 0 without reviewing.
type workflowDisabled struct {
	path string
	line int
}

func (e *workflowDisabled) Error() string {
	return fmt.Sprintf("%s:%d: Final Agent Review is disabled", e.path, e.line)
}

// projectFile is a file of the reviewed project that sets review options (a
// context file, a WorkflowContext.md). Unless the user trusted it, it may
// not choose a program to run, a place outside the project to write, or
// files outside the project to send; each setting dropped for that is
// named in a warning with the file and how to trust it.
type projectFile struct {
	path    string
	trusted bool   // read once: the file and the trust store
	top     string // the project's top
	warn    io.Writer
}

func newProjectFile(f *cmdutil.Factory, path string) *projectFile {
	top, _ := project.Top(f.WorkDir())
	check := f.Trust().TrustedFile(path, f.WorkDir())
	if check.Lapsed != "" {
		cmdutil.Warn(f.IO.ErrOut, config.LapsedWarning(path, check.Lapsed))
	}
	return &projectFile{path: path, trusted: check.Trusted, top: top, warn: f.IO.ErrOut}
}

// inside reports whether path, with symbolic links resolved, lies inside
// the project.
func (pf *projectFile) inside(path string) bool {
	_, ok := project.ResolvedWithin(pf.top, path)
	return ok
}

// outputDir keeps an output_dir that lies inside the project: a reviewed
// repository chooses where its review goes within itself, not elsewhere on
// the machine.
func (pf *projectFile) outputDir(dir string) string {
	if dir == "" || pf.trusted || pf.inside(dir) {
		return dir
	}
	cmdutil.Fprintf(pf.warn, "sot: warning: %s is not trusted, so sot ignored its output_dir %s, which lies outside the project (%s); the review goes to the default directory; pass --output-dir, or trust the file with: sot trust %s\n",
		pf.path, strconv.Quote(dir), pf.top, pf.path)
	return ""
}

// specialists drops every persona file named by a path outside the
// project: its text would go into every prompt, so a reviewed repository
// could otherwise send the user's own files to a model.
func (pf *projectFile) specialists(field, list string) string {
	if !strings.ContainsAny(list, `/\.`) {
		return list
	}
	return pf.list(field, list, "persona files outside the project", func(name string) bool {
		return persona.IsPath(name) && !pf.inside(name)
	})
}

// models drops every model that would run a program: a cloned repository
// must not choose a program to run.
func (pf *projectFile) models(cfg *config.Config, field, list string) string {
	return pf.list(field, list, "it could run a program", func(item string) bool {
		model := item
		if ms, err := review.ParseModelsFor(item, cfg); err == nil {
			for _, m := range ms.Pinned {
				model = m
			}
			if len(ms.Pool) == 1 {
				model = ms.Pool[0]
			}
		}
		return cfg.RunsProgram(model)
	})
}

// list drops from a comma list every entry for which drop is true; one
// warning names the entries, the field, why, and how to trust the file.
func (pf *projectFile) list(field, list, why string, drop func(string) bool) string {
	if strings.TrimSpace(list) == "" || pf.trusted {
		return list
	}
	var kept, dropped []string
	for _, item := range strings.Split(list, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		if drop(item) {
			dropped = append(dropped, strconv.Quote(item))
			continue
		}
		kept = append(kept, item)
	}
	if len(dropped) == 0 {
		return list
	}
	cmdutil.Fprintf(pf.warn, "sot: warning: %s is not trusted, so sot ignored %s in %s (%s); if you wrote this file or have read it, trust it as it is now with: sot trust %s\n",
		pf.path, strings.Join(dropped, ", "), field, why, pf.path)
	return strings.Join(kept, ", ")
}

func printAssignments(w io.Writer, p *review.Plan) {
	ids := make([]string, 0, len(p.Models))
	for id := range p.Models {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var parts []string
	for _, id := range ids {
		parts = append(parts, id+"="+p.Models[id])
	}
	cmdutil.Fprintf(w, "sot: run %s: models %s; synthesis %s\n", p.RunID, strings.Join(parts, ", "), p.TriageModel)
}

func printPlan(f *cmdutil.Factory, w io.Writer, p *review.Plan, est review.Estimate, o *Options) error {
	if o.Stdout == "json" {
		return printPlanJSON(f.IO.Out, p, est, o)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	cmdutil.Fprintf(tw, "Run\t%s\n", p.RunID)
	cmdutil.Fprintf(tw, "Output\t%s\n", p.OutputDir)
	mode := p.EffectiveMode()
	if mode != p.Context.InteractionMode {
		mode += " (debate needs at least two specialists)"
	}
	cmdutil.Fprintf(tw, "Mode\t%s, %s\n", p.Mode, mode)
	cmdutil.Fprintf(tw, "Material\t%s: %d file(s), %d skipped, %d chunk(s)\n", p.Context.Coordinates, len(p.Material.Files), len(p.Material.Skipped), len(p.Chunks))
	if paths := p.Material.Paths(); len(paths) > 0 {
		cmdutil.Fprintf(tw, "Files\t%s\n", listSome(paths, 20))
	}
	if len(p.Material.Skipped) > 0 {
		var sk []string
		for _, k := range p.Material.Skipped {
			sk = append(sk, k.Path+" ("+k.Reason+")")
		}
		cmdutil.Fprintf(tw, "Skipped\t%s\n", listSome(sk, 20))
	}
	var specs []string
	for _, s := range p.Specialists {
		specs = append(specs, fmt.Sprintf("%s (%s)", s.ID, p.Models[s.ID]))
	}
	cmdutil.Fprintf(tw, "Specialists\t%s\n", strings.Join(specs, ", "))
	if p.SelectionRationale != "" {
		cmdutil.Fprintf(tw, "Selection\t%s\n", p.SelectionRationale)
	}
	lenses := "none"
	if ls := p.LensIDs(); len(ls) > 0 {
		lenses = strings.Join(ls, ", ")
	}
	cmdutil.Fprintf(tw, "Lenses\t%s\n", lenses)
	calls := fmt.Sprintf("%d specialist call(s) + 1 synthesis call", len(p.Tasks))
	if n := p.DebateCallsMax(); n > 0 {
		calls += fmt.Sprintf(" + up to %d debate call(s) after the first round (not in the estimate below)", n)
	}
	cmdutil.Fprintf(tw, "Calls\t%s\n", calls)
	cmdutil.Fprintf(tw, "Input tokens\t~%d (~%d of them cacheable as a shared prefix)\n", est.InputTokens, est.CachedTokens)
	cost := fmt.Sprintf("~$%.4f (assuming %d output tokens a call)", est.Cost, est.OutputPerCall)
	if len(est.Unpriced) > 0 {
		cost += "; no price known for " + strings.Join(est.Unpriced, ", ")
	}
	cmdutil.Fprintf(tw, "Cost\t%s\n", cost)
	if err := tw.Flush(); err != nil {
		return err
	}
	if o.ShowPrompt != "" {
		text, err := p.Prompt(o.ShowPrompt)
		if err != nil {
			return cmdutil.AsUsage(err)
		}
		fmt.Fprintf(w, "\n--- prompt of %s ---\n%s", cmdutil.Line(o.ShowPrompt), cmdutil.Text(text))
	}
	return nil
}

// emptyOutputs gives a review that called no model the machine outputs it
// was asked for, as valid documents without findings: --stdout prints one,
// and --format writes files when an output directory was named (without
// one there is no run to name a directory after). A dry run's --stdout json
// prints a plan of no calls.
func emptyOutputs(f *cmdutil.Factory, human io.Writer, o *Options, ro *review.Options, why string, skipped []material.Skipped) error {
	if o.DryRun {
		if o.Stdout == "json" {
			return writeJSON(f.IO.Out, review.EmptyPlan(ro.Context, why, skipped))
		}
		return nil
	}
	empty, err := review.Empty(ro, why, skipped)
	if err != nil {
		return err
	}
	if o.Stdout != "" {
		b, err := review.Render(o.Stdout, empty.Result, version.Get().Version)
		if err != nil {
			return err
		}
		f.IO.Out.Write(b)
	}
	if len(empty.Unwritten) > 0 {
		fmt.Fprintf(human, "sot: no %s written: there is no run to name an output directory after; pass --output-dir to get empty documents\n", strings.Join(empty.Unwritten, ", "))
	}
	for _, p := range empty.Files {
		fmt.Fprintf(human, "sot: wrote %s (no findings)\n", p)
	}
	return nil
}

// printPlanJSON writes the plan of a dry run as one JSON document, with the
// composed prompt of --show-prompt's specialist when asked for.
func printPlanJSON(w io.Writer, p *review.Plan, est review.Estimate, o *Options) error {
	doc := struct {
		review.PlanSummary
		Prompt *shownPrompt `json:"prompt,omitempty"`
	}{PlanSummary: p.Summary(est)}
	if o.ShowPrompt != "" {
		text, err := p.Prompt(o.ShowPrompt)
		if err != nil {
			return cmdutil.AsUsage(err)
		}
		doc.Prompt = &shownPrompt{Specialist: o.ShowPrompt, Text: text}
	}
	return writeJSON(w, doc)
}

// writeJSON writes v as one indented JSON document.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

type shownPrompt struct {
	Specialist string `json:"specialist"`
	Text       string `json:"text"`
}

// redirectTarget is the file standard output is redirected to, when it is a
// regular file whose path can be found, so that a review does not review
// its own output (sot review --stdout sarif > out.sarif creates out.sarif
// before sot runs).
func redirectTarget(w io.Writer) []string {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	for _, link := range []string{fmt.Sprintf("/proc/self/fd/%d", f.Fd()), fmt.Sprintf("/dev/fd/%d", f.Fd())} {
		if p, err := filepath.EvalSymlinks(link); err == nil && p != link {
			return []string{p}
		}
	}
	return nil
}

// listSome joins up to most items with ", ", saying how many more there are.
func listSome(items []string, most int) string {
	if len(items) <= most {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:most], ", ") + fmt.Sprintf(" and %d more", len(items)-most)
}

// summarize says what the review found and cost. Its calls are those the
// live display counted (calls), as the run's journal records them: one
// answer a call, replayed and cached ones included.
func summarize(w io.Writer, out *review.Outcome, calls status.Counts) {
	res := out.Result
	s := report.Summarize(res)
	u := res.Usage
	fmt.Fprintf(w, "\nsot: %d must-fix, %d should-fix, %d consider, %d observation(s) from %d specialist(s)\n",
		s.MustFix, s.ShouldFix, s.Consider, s.Observations, len(res.Specialists))
	fmt.Fprintf(w, "sot: %d calls, %d input tokens (%d cached), %d output tokens, $%.4f, %.1fs",
		calls.Done, u.InputTokens, u.CachedInputTokens, u.OutputTokens, u.CostUSD, float64(u.WallMS)/1000)
	if calls.Replayed > 0 || calls.Cached > 0 {
		fmt.Fprintf(w, " for the whole run; this time %d call(s), $%.4f (%d replayed from the journal, %d from the cache)",
			calls.Sent(), u.NewCostUSD, calls.Replayed, calls.Cached)
	}
	fmt.Fprintln(w)
	if len(res.Skipped) > 0 {
		fmt.Fprintf(w, "sot: %d file(s) skipped (listed in REVIEW-SYNTHESIS.md)\n", len(res.Skipped))
	}
	if res.Partial() {
		label := "PARTIAL review"
		if out.Completed == 0 && out.Stopped == nil {
			label = "FAILED review: no specialist call succeeded"
		}
		fmt.Fprintf(w, "sot: %s: %d part(s) missing:\n", label, len(res.Missing))
		// Parts that failed the same way are listed together, with the
		// error once; the budget's message is said once, below.
		var parts []cmdutil.MissingPart
		for _, m := range res.Missing {
			parts = append(parts, cmdutil.MissingPart{Name: report.MissingName(m), Error: m.Error, Budget: m.Budget})
		}
		cmdutil.PrintMissing(w, parts)
	}
	if out.Stopped != nil {
		cmdutil.Say(w, out.Stopped.Error())
		fmt.Fprintln(w, "sot: raise the budget and run the same command again to finish; finished calls are replayed, not paid again")
	} else if res.Partial() {
		fmt.Fprintln(w, "sot: run the same command again to retry the missing parts; finished calls are replayed, not paid again")
	}
	var machine []string
	for _, f := range out.Files {
		if b := filepath.Base(f); strings.HasPrefix(b, "review.") {
			machine = append(machine, b)
		}
	}
	also := ""
	if len(machine) > 0 {
		also = " (and " + strings.Join(machine, ", ") + ")"
	}
	fmt.Fprintf(w, "sot: wrote %s%s\n", filepath.Join(out.Plan.OutputDir, "REVIEW-SYNTHESIS.md"), also)
}

// exitCode maps the review's verdict (see review.Outcome.Verdict) to the
// exit code: no specialist came back (1), findings at --fail-on (1), a
// partial review (3).
func exitCode(out *review.Outcome, failOn string) error {
	err := out.Verdict(failOn)
	var partial *review.PartialError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &partial):
		return &cmdutil.ExitError{Code: cmdutil.ExitPartial, Err: err}
	case engine.IsUserError(err):
		return err
	}
	return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: err}
}
