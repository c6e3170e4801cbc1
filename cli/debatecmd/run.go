package debatecmd

import (
	"context"
	"encoding/json"
	"io"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/debate"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/internal/project"
	"github.com/sotlabs/sot/llm"
)

// readPassage reads the passage the user gave.
func readPassage(f *cmdutil.Factory, o *Options) (debate.Passage, error) {
	switch {
	case o.Passage != "" && o.File != "":
		return debate.Passage{}, cmdutil.UsageError("give the passage once: a file, - or --passage, not two of them")
	case o.Passage != "":
		return debate.NewPassage("--passage", []byte(o.Passage))
	case o.File == "-":
		return debate.ReadPassage("stdin", f.IO.In)
	case o.File != "":
		file, err := project.OpenInput(o.File, o.FollowSymlinks)
		if err != nil {
			return debate.Passage{}, &engine.UserError{Field: "passage", Msg: err.Error()}
		}
		defer file.Close()
		return debate.ReadPassage(o.File, file)
	}
	return debate.Passage{}, cmdutil.UsageError("give a passage: sot debate PASSAGE_FILE, - for standard input, or --passage TEXT (see 'sot debate --help')")
}

// debateOptions are the options every debate of the command shares; the
// caller points their warnings and progress lines at stderr
// (cmdutil.NewLive).
func debateOptions(f *cmdutil.Factory, o *Options) (*debate.Options, error) {
	cfg, _, err := f.Config()
	if err != nil {
		return nil, cmdutil.AsUsage(err)
	}
	lib, err := f.Library()
	if err != nil {
		return nil, err
	}
	do := &debate.Options{Options: scenario.Options{FollowSymlinks: o.FollowSymlinks, Dir: f.WorkDir(), OutputDir: o.OutputDir, Config: cfg, Getenv: f.Getenv, Fresh: o.Fresh, Command: cmdutil.ResumeCommand(), NewStack: f.NewStack(cfg, cmdutil.StackOptions{})}, Debaters: o.Debaters, Rounds: o.Rounds, Turns: o.Turns, Observers: o.Observers, ObserversFrom: o.ObserversFrom, BranchRounds: o.BranchRounds, Library: lib, Settings: cfg.Debate}
	return do, nil
}

func run(ctx context.Context, f *cmdutil.Factory, o *Options) error {
	if o.Rounds < 0 || o.BranchRounds < 0 {
		return cmdutil.UsageError("--rounds and --branch-rounds take 1 or more")
	}
	if err := checkOutputs(o); err != nil {
		return err
	}
	if o.JSON {
		cmdutil.Note(f.IO.ErrOut, "--json is deprecated; --stdout json prints the same")
	}
	if o.Graph != "" {
		return runGraph(ctx, f, o)
	}
	passage, err := readPassage(f, o)
	if err != nil {
		return err // a user error exits 2 (cmdutil.Code)
	}
	do, err := debateOptions(f, o)
	if err != nil {
		return err
	}
	live := cmdutil.NewLive(f, &do.Hooks)
	do.Passage = passage
	cfg := do.Config
	if !o.DryRun {
		f.Preconnect(cfg)
	}
	plan, err := debate.Prepare(ctx, do)
	if err != nil {
		return err
	}
	for _, w := range plan.Warnings {
		do.Warn(w)
	}
	human := f.IO.Out
	if o.Stdout != "" {
		human = f.IO.ErrOut
	}
	sum := plan.Summary(llm.DefaultPrices().Merge(cfg.Prices))
	if o.DryRun {
		if err := plan.CheckPrices(do); err != nil {
			return err // as the run would refuse it
		}
		if o.Stdout == "json" {
			return writeJSON(f.IO.Out, sum)
		}
		printPlan(human, sum)
		return nil
	}
	printPlan(f.IO.ErrOut, sum)
	if err := f.MissingKey(cfg, plan.Model); err != nil {
		return err
	}
	// All the run prints goes through the display: on a terminal above
	// its live lines, otherwise a line at a time, never two at once (a
	// detached summary may end as the next step begins).
	live.Plain()
	live.Start(plan.TypicalCalls())
	out, err := debate.Execute(ctx, plan, do)
	calls := live.Stop()
	if err != nil {
		return cmdutil.ExecuteError(err)
	}
	if err := printStdout(f.IO.Out, o, out.Result); err != nil {
		return err
	}
	summarize(human, out, calls)
	return cmdutil.Verdict(out.Verdict())
}

// checkOutputs checks --stdout, --format and --json against one another
// and settles o.Stdout: --json is --stdout json, and a format is read in
// any case and by its file's extension (md).
func checkOutputs(o *Options) error {
	given := o.Stdout
	o.Stdout = scenario.FormatName(given)
	if o.JSON {
		if o.Stdout != "" && o.Stdout != "json" {
			return cmdutil.UsageError("--json is --stdout json and contradicts --stdout %s; give one of them", given)
		}
		o.Stdout = "json"
	}
	// o.Stdout is markdown only when given is a --stdout debate accepts,
	// so the refusals keep their order: --stdout, --dry-run, --format.
	if o.DryRun && o.Stdout == "markdown" {
		return cmdutil.UsageError("--stdout markdown with --dry-run: a dry run debates nothing, so there is no dialectic log; use --stdout json for the plan as JSON")
	}
	return debate.CheckFormats(o.Formats, given)
}

// printStdout prints on w the output of r that --stdout names: the
// dialectic log, or debate.json's document.
func printStdout(w io.Writer, o *Options, r *debate.Result) error {
	switch o.Stdout {
	case "markdown":
		_, err := io.WriteString(w, r.DialecticLog())
		return err
	case "json":
		return writeJSON(w, r)
	}
	return nil
}

// writeJSON writes v as one indented JSON document.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
