// Package debatecmd implements "sot debate": debaters with fixed
// interpretive stances argue over a passage, observers name the questions
// the debate missed, and each branch is debated, synthesized and merged
// back (seed 003).
package debatecmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/debate"
	"github.com/sotlabs/sot/debate/graph"
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
	// Stdout is --stdout: the output printed on standard output besides
	// its file (markdown, json), the human summary then going to standard
	// error. Formats are --format's machine outputs.
	Stdout  string
	Formats []string
	// JSON is --json, the deprecated alias of --stdout json.
	JSON  bool
	Fresh bool
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

Every run writes all of those files, so --format takes json (or markdown)
only, for scripts that name the machine output they read. --stdout markdown
also prints the dialectic log, and --stdout json debate.json (with
--dry-run, the plan), on standard output; the summary then goes to standard
error. With --graph, --stdout markdown prints each passage's log in turn and
--stdout json one document of every debate and the graph. --json is the
deprecated alias of --stdout json.

Exit codes: 0 the debate is whole; 1 no turn of the main debate came back;
2 usage (no passage, a bad flag, an unknown persona, a graph file that is
not one); 3 a partial debate (dialectic-log.md lists what is missing; with
--graph, the passages after it wait for the next run); 130 interrupted.`,
		Example: `  sot debate poem.txt
  sot debate --rounds 2 --observers generate:5 chapter.md
  sot debate --debaters literalist,symbolist,./pragmatist.md --turns simultaneous poem.txt
  sot debate --observers none --passage "Because I could not stop for Death, He kindly stopped for me."
  cat scene.txt | sot debate --observers-from .sot/debates/r1a2b3c4d5/ensemble.json -
  sot debate --dry-run --stdout json poem.txt     # the plan: calls, steps, tokens and cost, no call made
  sot debate --stdout markdown poem.txt > log.md  # the dialectic log on stdout, the summary on stderr
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
	fl.StringVar(&o.Stdout, "stdout", "", "also print one output on standard output: markdown (dialectic-log.md) or json (debate.json; with --dry-run, the plan); the summary then goes to standard error")
	fl.StringSliceVar(&o.Formats, "format", nil, "machine outputs to write: json (debate.json, written on every run anyway; markdown is accepted too); repeatable")
	fl.BoolVar(&o.JSON, "json", false, "deprecated: the same as --stdout json")
	fl.BoolVar(&o.Fresh, "fresh", false, "start afresh instead of replaying the run's journal")
	fl.StringVar(&o.Graph, "graph", "", "debate each passage given into the argument graph in this JSON file (created if missing)")
	fl.IntVar(&o.GraphBudget, "graph-budget", 0, fmt.Sprintf("with --graph: the most tokens of the graph each debater gets; past it, the nodes most relevant to the passage (default: debate.graph_budget, else %d)", graph.DefaultContextBudget))
	return cmd
}

// Run executes "sot debate"; Ctrl-C stops it with exit code 130 and the
// command that resumes it.
func Run(ctx context.Context, f *cmdutil.Factory, o *Options) error {
	return cmdutil.RunScenario(ctx, f, func(ctx context.Context) error { return run(ctx, f, o) })
}
