// Package debatecmd implements "sot debate": debaters with fixed
// interpretive stances argue over a passage, observers name the questions
// the debate missed, and each branch is debated, synthesized and merged
// back (seed 003).
package debatecmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/debate"
	"github.com/sotlabs/sot/debate/graph"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/internal/project"
	"github.com/sotlabs/sot/internal/status"
	"github.com/sotlabs/sot/llm"
)

// Options are the flags and arguments of "sot debate".
type Options struct {
	// File is the passage's file, "-" for standard input; Passage is
	// --passage's text.
	File          string
	Passage       string
	Debaters      []string
	Rounds        int
	Turns         string
	Observers     string
	ObserversFrom string
	// FollowSymlinks is --follow-symlinks.
	FollowSymlinks bool
	BranchRounds   int
	OutputDir      string
	DryRun         bool
	JSON           bool
	Fresh          bool
	// Graph is --graph's file; Files are then every passage file given
	// (File is unused), and GraphBudget is --graph-budget.
	Graph       string
	Files       []string
	GraphBudget int
	// GraphBudgetSet: --graph-budget was given, and wins over the
	// config's debate.graph_budget.
	GraphBudgetSet bool
}

// NewCmd returns "sot debate".
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "debate [PASSAGE_FILE | -] | --graph FILE PASSAGE_FILE...",
		Short: "Debate a passage: fixed-stance debaters, observers' branch questions, branches merged back",
		Long: `Debate a passage (a poem, a scene, a paragraph of philosophy) the way seed 003's
Dialectical Debate System does.

  1. The main debate: debaters with fixed interpretive stances (by default the
     Literalist, the Symbolist and the Structuralist) argue over the passage
     for --rounds rounds. With --turns sequential (the default) they take
     turns and each turn sees the passage and every earlier turn; with
     --turns simultaneous each round is spoken at once, seeing the earlier
     rounds. Every turn gets a summary of 15 words or fewer, and the debate a
     summary of two or three sentences; no later call reads them, so they
     start beside the next step and never hold it back.
  2. Observers, each with a bias and blind spots, read the transcript and
     name the question the debaters missed (with what the transcript lacks
     and why their bias sees it). --observers names them (persona names or
     files), generates N of them (generate:N: the first freely, each next as
     different as possible from the ones before, regenerated when too close
     to one), or none (one generic question). Near-duplicate questions are
     merged, and the report says which.
  3. Each branch question is debated for --branch-rounds rounds, every branch
     in lockstep; its debaters see the passage, where the main debate stands
     and the question. Each branch is synthesized (perspectives, what was
     resolved, what remains in tension) and merged back into the reading of
     the main debate; one final merge gathers the branches.

The argument graph: with --graph FILE, several passages are debated one after
another into one graph. Before each passage, every debater is
given what the graph holds of the others: all of it while it fits
--graph-budget tokens, past that the nodes most relevant to the passage by
BM25, and the report says how many were left out. After each whole debate
its main debate and each branch become nodes (one classification call each),
joined by branches_from edges, and nodes of other passages that share tags
or words with them are judged in pairs, the relations found confidently
becoming edges. The file is saved after every node. Each passage is a debate
of its own, in its own run directory (under --output-dir, a directory named
by the passage). After a crash or a stop, the same command continues: the
passages the graph holds are not debated again, and the one it was on
replays its finished calls. A debate that is not whole (exit 3) is not
added, and the passages after it wait for the next run. The budgets
(--max-cost, --max-calls, --max-tokens) hold for the whole command: each
passage gets what the passages before it left (a passage resumed counts
what its journal already spent; passages the graph holds count nothing).
sot graph show FILE and sot graph export FILE read the graph.

The passage is PASSAGE_FILE, standard input with -, or --passage TEXT.
dialectic-log.md, multi-observer-report.md, branch-N.md, ensemble.json and
debate.json land in .sot/debates/<run-id>/ (or --output-dir). Every finished
call is journaled there: after Ctrl-C, a crash or a budget stop (--max-cost,
--max-calls, --max-tokens), the same command continues where it stopped and
pays for nothing twice. The model is --model (-m); with the llm CLI, use
--model "command:llm -m MODEL".

Exit codes: 0 the debate is whole; 1 no turn of the main debate came back;
2 usage (no passage, a bad flag, an unknown persona, a graph file that is
not one); 3 a partial debate (dialectic-log.md lists what is missing; with
--graph, the passages after it wait for the next run); 130 interrupted.`,
		Example: `  sot debate poem.txt
  sot debate --rounds 2 --observers generate:5 chapter.md
  sot debate --debaters literalist,symbolist,./pragmatist.md --turns simultaneous poem.txt
  sot debate --observers none --passage "Because I could not stop for Death, He kindly stopped for me."
  cat scene.txt | sot debate --observers-from .sot/debates/r1a2b3c4d5/ensemble.json -
  sot debate --dry-run --json poem.txt            # the plan: calls, steps, tokens and cost, no call made
  sot debate --model "command:llm -m claude-sonnet-4.5" poem.txt
  sot debate --graph fables.json examples/debate/fables/*.txt    # three fables, one argument graph
  sot debate --graph fables.json --dry-run ants.txt fox.txt       # the plans, with the graph's calls
  sot debate --graph fables.json --graph-budget 4000 hare.txt     # past 4,000 tokens, the nodes most relevant
  sot graph export fables.json --format mermaid`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 && o.Graph == "" {
				return cmdutil.UsageError("give one passage: sot debate PASSAGE_FILE, - for standard input, or --passage TEXT; several passages are debated into an argument graph with --graph FILE (see 'sot debate --help')")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.GraphBudgetSet = cmd.Flags().Changed("graph-budget")
			switch {
			case o.Graph != "":
				o.Files = args
			case o.GraphBudgetSet:
				return cmdutil.UsageError("--graph-budget is the budget of --graph's context; give --graph FILE too")
			case len(args) == 1:
				o.File = args[0]
			}
			return Run(cmd.Context(), f, o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Passage, "passage", "", "the passage itself, instead of a file")
	fl.StringSliceVar(&o.Debaters, "debaters", nil, "the debaters in speaking order: persona names or .md files (default literalist,symbolist,structuralist)")
	fl.IntVar(&o.Rounds, "rounds", 0, fmt.Sprintf("rounds of the main debate (default %d)", debate.DefaultRounds))
	fl.StringVar(&o.Turns, "turns", "", "sequential (turn-taking, the default) or simultaneous (each round at once)")
	fl.StringVar(&o.Observers, "observers", "", "observer names or .md files (comma separated), generate:N, or none (default phenomenologist,materialist-historian,pragmatist-engineer)")
	fl.StringVar(&o.ObserversFrom, "observers-from", "", "use the observers of an ensemble.json a debate wrote")
	cmdutil.AddFollowSymlinks(fl, &o.FollowSymlinks)
	fl.IntVar(&o.BranchRounds, "branch-rounds", 0, fmt.Sprintf("rounds of each branch debate (default %d)", debate.DefaultBranchRounds))
	fl.StringVar(&o.OutputDir, "output-dir", "", "the run's directory (default .sot/debates/<run-id>)")
	fl.BoolVar(&o.DryRun, "dry-run", false, "show the plan (calls, steps, tokens and cost, typical and at most) and call no model")
	fl.BoolVar(&o.JSON, "json", false, "print debate.json (with --dry-run, the plan) on standard output")
	fl.BoolVar(&o.Fresh, "fresh", false, "start afresh instead of replaying the run's journal")
	fl.StringVar(&o.Graph, "graph", "", "debate each passage given into the argument graph in this JSON file (created if missing)")
	fl.IntVar(&o.GraphBudget, "graph-budget", 0, fmt.Sprintf("with --graph: the most tokens of the graph each debater gets; past it, the nodes most relevant to the passage (default: debate.graph_budget, else %d)", graph.DefaultContextBudget))
	return cmd
}

// Run executes "sot debate"; Ctrl-C stops it with exit code 130 and the
// command that resumes it.
func Run(ctx context.Context, f *cmdutil.Factory, o *Options) error {
	return cmdutil.Interruptible(ctx, "the run's journal", func(ctx context.Context) error { return run(ctx, f, o) })
}

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

// debateOptions are the options every debate of the command shares; its
// warnings and progress lines go to *errOut, which the caller may point at
// a live display.
func debateOptions(f *cmdutil.Factory, o *Options, errOut *io.Writer) (*debate.Options, error) {
	cfg, _, err := f.Config()
	if err != nil {
		return nil, cmdutil.AsUsage(err)
	}
	lib, err := f.Library()
	if err != nil {
		return nil, err
	}
	do := &debate.Options{Options: scenario.Options{FollowSymlinks: o.FollowSymlinks, Dir: f.WorkDir(), OutputDir: o.OutputDir, Config: cfg, Getenv: f.Getenv, Fresh: o.Fresh, Command: cmdutil.ResumeCommand(), NewStack: f.NewStack(cfg, cmdutil.StackOptions{})}, Debaters: o.Debaters, Rounds: o.Rounds, Turns: o.Turns, Observers: o.Observers, ObserversFrom: o.ObserversFrom, BranchRounds: o.BranchRounds, Library: lib, Settings: cfg.Debate}
	do.Warn = func(s string) { cmdutil.Warn(*errOut, s) }
	do.Progress = func(s string) { cmdutil.Say(*errOut, s) }
	return do, nil
}

func run(ctx context.Context, f *cmdutil.Factory, o *Options) error {
	if o.Rounds < 0 || o.BranchRounds < 0 {
		return cmdutil.UsageError("--rounds and --branch-rounds take 1 or more")
	}
	if o.Graph != "" {
		return runGraph(ctx, f, o)
	}
	passage, err := readPassage(f, o)
	if err != nil {
		return err // a user error exits 2 (cmdutil.Code)
	}
	errOut := f.IO.ErrOut
	do, err := debateOptions(f, o, &errOut)
	if err != nil {
		return err
	}
	do.Passage = passage
	cfg := do.Config
	plan, err := debate.Prepare(ctx, do)
	if err != nil {
		return err
	}
	for _, w := range plan.Warnings {
		do.Warn(w)
	}
	human := f.IO.Out
	if o.JSON {
		human = f.IO.ErrOut
	}
	sum := plan.Summary(llm.DefaultPrices().Merge(cfg.Prices))
	if o.DryRun {
		if err := plan.CheckPrices(do); err != nil {
			return err // as the run would refuse it
		}
		if o.JSON {
			return writeJSON(f.IO.Out, sum)
		}
		printPlan(human, sum)
		return nil
	}
	printPlan(errOut, sum)
	if err := f.MissingKey(cfg, plan.Model); err != nil {
		return err
	}
	d := status.New(errOut, f.IO.ErrTTY)
	d.Plain()
	d.Expect(plan.TypicalCalls())
	do.Events = d.Event
	// All the run prints goes through the display: on a terminal above
	// its live lines, otherwise a line at a time, never two at once (a
	// detached summary may end as the next step begins).
	errOut = d
	f.LogTo(d)
	stopTicks := d.Start(time.Second)
	out, err := debate.Execute(ctx, plan, do)
	stopTicks()
	d.Close()
	if engine.IsUserError(err) {
		return cmdutil.AsUsage(err)
	}
	if errors.Is(err, llm.ErrAuth) || errors.Is(err, llm.ErrUnknownModel) {
		return fmt.Errorf("%w (sot doctor checks each configured model and says what to fix)", err)
	}
	if err != nil {
		return err
	}
	if o.JSON {
		if err := writeJSON(f.IO.Out, out.Result); err != nil {
			return err
		}
	}
	summarize(human, out, d.Counts())
	err = out.Verdict()
	var partial *debate.PartialError
	if errors.As(err, &partial) {
		return &cmdutil.ExitError{Code: cmdutil.ExitPartial, Err: err}
	}
	return err
}

// printPlan shows what the debate will do and what it may cost.
func printPlan(w io.Writer, s debate.PlanSummary) {
	cmdutil.Fprintf(w, "sot: debate %s into %s with %s\n", s.RunID, s.OutputDir, s.Model)
	cmdutil.Fprintf(w, "sot: passage %s: %d words, %d tokens\n", s.Passage.Name, s.Passage.Words, s.Passage.Tokens)
	var names []string
	for _, d := range s.Debaters {
		names = append(names, d.Name)
	}
	turns := "turn-taking"
	if s.Turns == debate.Simultaneous {
		turns = "simultaneous rounds"
	}
	cmdutil.Fprintf(w, "sot: debaters: %s (%s, %d round(s))\n", strings.Join(names, ", "), turns, s.Rounds)
	switch {
	case s.Generate > 0:
		cmdutil.Fprintf(w, "sot: observers: %d to generate, one after another, each regenerated up to %d time(s) when too close to an earlier one\n", s.Generate, s.Regenerations)
	case len(s.Observers) == 0:
		fmt.Fprintln(w, "sot: observers: none; one generic branch question")
	default:
		var obs []string
		for _, o := range s.Observers {
			obs = append(obs, o.Name)
		}
		cmdutil.Fprintf(w, "sot: observers: %s\n", strings.Join(obs, ", "))
	}
	cmdutil.Fprintf(w, "sot: branches: up to %d, %d round(s) each, in lockstep; each synthesized and merged back\n", s.MaxBranches, s.BranchRounds)
	e := s.Estimate
	graphCalls := ""
	if g := s.Graph; g != nil {
		cmdutil.Fprintf(w, "sot: argument graph %s: %s\n", g.File, g.Note)
		graphCalls = fmt.Sprintf(", %d of them the argument graph's (typically %d)", g.MaxCalls, g.TypicalCalls)
	}
	cmdutil.Fprintf(w, "sot: at most %d call(s)%s in at most %d step(s) (the critical path of dependent calls)\n", e.Calls, graphCalls, e.Steps)
	cmdutil.Fprintf(w, "sot: typically ~%d input tokens (~%d of them cacheable), ~%d output, ~$%.4f\n", e.Typical.InputTokens, e.Typical.CachedTokens, e.TypicalOutput, e.Typical.Cost)
	bound := fmt.Sprintf("sot: at most %d input tokens, %d output, $%.4f (every answer at its longest, every structured answer asked twice, no cache)", e.Bound.InputTokens, e.BoundOutput, e.Bound.Cost)
	if len(e.Bound.Unpriced) > 0 {
		bound += "; no price known for " + strings.Join(e.Bound.Unpriced, ", ")
	}
	fmt.Fprintln(w, cmdutil.Line(bound))
}

// summarize says what the debate produced and cost. Its calls are those
// the live display counted (calls), as the run's journal records them:
// one answer a call, replayed and cached ones included.
func summarize(w io.Writer, out *debate.Outcome, calls status.Counts) {
	r := out.Result
	merged := 0
	for _, b := range r.Branches {
		if b.Complete() {
			merged++
		}
	}
	fmt.Fprintf(w, "sot: %d turn(s) in the main debate; %d branch question(s), %d branch(es) debated, %d merged back", len(r.Main.Turns), len(r.Questions), len(r.Branches), merged)
	if len(r.Merged) > 0 {
		fmt.Fprintf(w, "; %d near-duplicate question(s) merged", len(r.Merged))
	}
	fmt.Fprintln(w)
	if d := r.Diversity; d != nil {
		fmt.Fprintf(w, "sot: observer diversity: seed Jaccard %.2f avg (min %.2f)", d.Seed.Avg, d.Seed.Min)
		if q := d.Questions; q != nil {
			fmt.Fprintf(w, "; branch questions %.2f apart against a baseline of %.2f (distinctness %.2f)", q.Observed, q.Baseline, q.Distinctness)
		}
		fmt.Fprintln(w)
	}
	u := r.Usage
	fmt.Fprintf(w, "sot: %d call(s) in %d step(s), %d input tokens (%d cached), %d output, $%.4f, %.1fs", calls.Done, u.Steps, u.InputTokens, u.CachedInputTokens, u.OutputTokens, u.CostUSD, float64(u.WallMS)/1000)
	switch {
	case calls.Replayed > 0 && calls.Cached > 0:
		fmt.Fprintf(w, " (%d replayed from the journal, %d answered from the response cache)", calls.Replayed, calls.Cached)
	case calls.Replayed > 0:
		fmt.Fprintf(w, " (%d replayed from the journal)", calls.Replayed)
	case calls.Cached > 0:
		fmt.Fprintf(w, " (%d of them answered from the response cache)", calls.Cached)
	}
	fmt.Fprintln(w)
	if r.Partial() {
		fmt.Fprintf(w, "sot: PARTIAL debate: %d part(s) missing:\n", len(r.Missing))
		var parts []cmdutil.MissingPart
		for _, m := range r.Missing {
			parts = append(parts, cmdutil.MissingPart{Name: m.Step + ", " + m.What, Error: m.Error, Budget: m.Budget})
		}
		cmdutil.PrintMissing(w, parts)
	}
	if out.Stopped != nil {
		cmdutil.Say(w, llm.Redact(out.Stopped.Error()))
		fmt.Fprintln(w, "sot: raise the budget and run the same command again to finish; finished calls are replayed, not paid again")
	} else if r.Partial() {
		fmt.Fprintln(w, "sot: run the same command again to retry the missing parts; finished calls are replayed, not paid again")
	}
	if g := r.Graph; g != nil {
		summarizeGraph(w, g)
	}
	var also []string
	for _, f := range out.Files[1:] {
		also = append(also, filepath.Base(f))
	}
	fmt.Fprintf(w, "sot: wrote %s (and %s)\n", out.Files[0], strings.Join(also, ", "))
}

// writeJSON writes v as one indented JSON document.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
