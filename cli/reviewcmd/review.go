// Package reviewcmd implements "sot review": flags and files become a
// review context, the review runs, and the outcome becomes files, a summary
// and an exit code CI can act on.
package reviewcmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/cli/version"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/internal/tokens"
	"github.com/sotlabs/sot/llm/stack"
	"github.com/sotlabs/sot/persona"
	"github.com/sotlabs/sot/review"
	"github.com/sotlabs/sot/review/paw"
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
	NoTools         bool
	Fresh           bool
	Resolve         string
	Since           string
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
  sot review --diff main...HEAD --since auto    # after a push: only the new commits
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
	fl.BoolVar(&o.NoTools, "no-tools", false, "keep specialists to the material: no read-only looks at the project (read, grep, list, git log, git show) even where their model can call tools (config: review.tools)")
	fl.BoolVar(&o.Fresh, "fresh", false, "start the run afresh instead of replaying its journal (the response cache still answers; add --no-cache to call the models again)")
	fl.StringVar(&o.Since, "since", "", "re-review only what changed after an earlier review of this diff: auto (the last review this change descends from), a run id, or a commit; findings on unchanged lines are carried over, fixed ones reported resolved, dismissed ones kept out")
	fl.StringVar(&o.Resolve, "resolve", "", "walk the findings of a finished review (its directory or run id) and record accept, dismiss or defer for each")
	return cmd
}

// Run executes "sot review". Ctrl-C (or SIGTERM) stops the run: finished
// calls are in the journal, and the error says how to resume, with exit
// code 130.
func Run(ctx context.Context, f *cmdutil.Factory, o *Options) error {
	return cmdutil.RunScenario(ctx, f, func(ctx context.Context) error { return run(ctx, f, o) })
}

func run(ctx context.Context, f *cmdutil.Factory, o *Options) error {
	if o.Resolve != "" {
		return resolve(f, o.Resolve)
	}
	ro, err := buildOptions(f, o)
	var off *paw.WorkflowDisabledError
	if errors.As(err, &off) {
		cmdutil.Fprintf(f.IO.ErrOut, "sot: %s:%d: Final Agent Review is disabled, so no review runs and no model is called; set it to enabled to review this work\n", off.Path, off.Line)
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
	live := cmdutil.NewLive(f, &ro.Hooks)

	if o.DryRun {
		tokens.Warm() // the estimate counts tokens: load the encoding while git works
	} else {
		f.Preconnect(ro.Config) // while git works
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
	// A question mid-run ends the live lines first, and all the run prints
	// goes through the display: on a terminal above its live lines,
	// otherwise a line at a time.
	live.Start(len(plan.Tasks))
	out, err := review.Execute(ctx, plan, ro)
	calls := live.Stop() // nothing may draw over what the user types next (moderator mode)
	if err != nil {
		return cmdutil.ExecuteError(err)
	}
	if o.Stdout != "" {
		b, err := review.Render(o.Stdout, out.Result, version.Get().Version)
		if err != nil {
			return err
		}
		f.IO.Out.Write(b)
	}
	summarize(human, out, calls)
	if r := retries().String(); r != "" {
		fmt.Fprintf(human, "sot: the run needed %s (--verbose shows each)\n", r)
	}
	offerModerator(ctx, f, ro, out)
	return cmdutil.Verdict(out.Verdict(o.FailOn))
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
	if ro.Ask == nil || out.Plan.Mode != review.ModeSociety || f.Driven() {
		// A run a worker drives offers no moderator mode there: the user
		// runs sot moderate where they are.
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
	if err := run.Moderate(ctx, review.ModerateOptions{Library: ro.Library, NewStack: ro.NewStack, In: f.IO.In, Out: f.IO.Out, Config: ro.Config, NoTools: ro.NoTools}); err != nil {
		cmdutil.Say(f.IO.ErrOut, "moderator mode: "+err.Error())
	}
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
	rc, warns, err := paw.ResolveContext(paw.ContextInputs{Flags: c, Mode: o.Mode, Models: o.Models,
		ContextFile: o.ContextFile, WorkflowContext: o.WorkflowContext, Dir: f.WorkDir(), Config: cfg,
		Trust: func(path string) config.TrustCheck { return f.Trust().TrustedFile(path, f.WorkDir()) }})
	for _, w := range warns {
		cmdutil.Warn(f.IO.ErrOut, w)
	}
	var off *paw.WorkflowDisabledError
	if errors.As(err, &off) {
		return nil, err
	}
	if err != nil {
		return nil, cmdutil.AsUsage(err)
	}
	c, mode := rc.Context, rc.Mode
	o.Models = rc.Models
	if err := review.CheckFormats(o.Formats, o.Stdout); err != nil {
		return nil, err
	}
	for i, fm := range o.Formats {
		o.Formats[i] = scenario.FormatName(fm)
	}
	o.Stdout = scenario.FormatName(o.Stdout)
	if err := review.CheckFailOn(o.FailOn); err != nil {
		return nil, err
	}
	if o.ShowPrompt != "" && !o.DryRun {
		return nil, cmdutil.UsageError("--show-prompt works with --dry-run")
	}
	if o.DryRun && o.Stdout != "" && o.Stdout != "json" {
		return nil, cmdutil.UsageError("--stdout %s with --dry-run: a dry run writes no review; use --stdout json for the plan as JSON", o.Stdout)
	}
	if o.Since != "" && (o.Staged || len(o.Artifacts) > 0 || o.Input != "" || strings.EqualFold(c.Type, "artifacts") || strings.EqualFold(c.Type, "freeform")) {
		return nil, cmdutil.UsageError("--since re-reviews a diff of commits or of the working tree; it does not go with --staged, --artifacts or a freeform review")
	}
	if o.MaxPromptTokens < 0 {
		return nil, cmdutil.UsageError("--max-prompt-tokens must be positive")
	}
	lib, err := f.Library()
	if err != nil {
		return nil, err
	}
	ro := &review.Options{Options: scenario.Options{FollowSymlinks: o.FollowSymlinks, Dir: f.WorkDir(), Config: cfg, Getenv: f.Getenv, Fresh: o.Fresh, Formats: without(o.Formats, o.Stdout), Version: version.Get().Version}, Context: c, Mode: mode, Models: o.Models, Diff: o.Diff, Staged: o.Staged, Artifacts: o.Artifacts, Exclude: redirectTarget(f.IO.Out), Paths: o.Paths, Content: o.Input, In: f.IO.In, Trusted: func(path string) bool { return f.Trust().TrustedFile(path, f.WorkDir()).Trusted }, Library: lib, MaxPromptTokens: o.MaxPromptTokens, NoTools: o.NoTools, Since: o.Since}
	if o.Seed != 0 {
		seed := o.Seed
		ro.Seed = &seed
	}
	if f.IO.InTTY {
		ro.Ask = cmdutil.TerminalAsker(f.IO)
	} else if a := f.DriveAsker(); a != nil {
		// Driven on a worker: the user follows on their own terminal.
		ro.Ask = a
	}
	ro.NewStack = f.NewStack(cfg, cmdutil.StackOptions{})
	return ro, nil
}
