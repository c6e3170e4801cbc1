package debatecmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/debate"
	"github.com/sotlabs/sot/debate/graph"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/project"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/stack"
)

// readPassages reads the passages of sot debate --graph: the files given,
// standard input for - (once), or --passage alone.
func readPassages(f *cmdutil.Factory, o *Options) ([]debate.Passage, error) {
	switch {
	case o.Passage != "" && len(o.Files) > 0:
		return nil, cmdutil.UsageError("with --graph, give the passages as files (- once for standard input); --passage gives one passage alone")
	case o.Passage != "":
		p, err := debate.NewPassage("--passage", []byte(o.Passage))
		return []debate.Passage{p}, err
	case len(o.Files) == 0:
		return nil, cmdutil.UsageError("give the passages to debate into the graph: sot debate --graph FILE PASSAGE_FILE... (see 'sot debate --help')")
	}
	stdin := 0
	for _, name := range o.Files {
		if name == "-" {
			if stdin++; stdin > 1 {
				return nil, cmdutil.UsageError("- (standard input) is given twice; standard input can be read once")
			}
		}
	}
	var out []debate.Passage
	for _, name := range o.Files {
		var p debate.Passage
		var err error
		if name == "-" {
			p, err = debate.ReadPassage("stdin", f.IO.In)
		} else {
			p, err = readFile(name, o.FollowSymlinks)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if err := debate.CheckPassages(out); err != nil {
		return nil, err
	}
	return out, nil
}

func readFile(name string, follow bool) (debate.Passage, error) {
	file, err := project.OpenInput(name, follow)
	if err != nil {
		return debate.Passage{}, &engine.UserError{Field: "passage", Msg: err.Error()}
	}
	defer file.Close()
	return debate.ReadPassage(name, file)
}

// graphPlans is the dry run of sot debate --graph as JSON.
type graphPlans struct {
	Graph   string               `json:"graph"`
	Plans   []debate.PlanSummary `json:"plans"`
	Skipped []skippedPassage     `json:"skipped,omitempty"`
	Total   debate.Estimate      `json:"total"`
	Stats   graph.Stats          `json:"graph_stats"`
}

// graphRun is sot debate --graph --stdout json's output.
type graphRun struct {
	Graph   string           `json:"graph"`
	Debates []*debate.Result `json:"debates"`
	Skipped []skippedPassage `json:"skipped,omitempty"`
	Stats   graph.Stats      `json:"graph_stats"`
}

type skippedPassage struct {
	Name  string `json:"name"`
	ID    string `json:"id"`
	Nodes int    `json:"nodes"`
}

// runGraph runs sot debate --graph FILE PASSAGE...: each passage debated
// in turn into the graph.
func runGraph(ctx context.Context, f *cmdutil.Factory, o *Options) error {
	passages, err := readPassages(f, o)
	if err != nil {
		return err
	}
	do, err := debateOptions(f, o)
	if err != nil {
		return err
	}
	// Between the passages (their preparation, a passage the graph holds)
	// no display is live, and warnings and progress go to stderr as they
	// are; each passage's own go through its display (Start below).
	cmdutil.NewLive(f, &do.Hooks)
	budget := o.GraphBudget
	if !o.GraphBudgetSet && do.Config.Debate.GraphBudget > 0 {
		budget = do.Config.Debate.GraphBudget
	}
	g, err := debate.OpenGraph(o.Graph, debate.ProjectTop(f.WorkDir()), budget)
	if err != nil {
		return cmdutil.AsUsage(err)
	}
	do.Graph = g
	prices := llm.DefaultPrices().Merge(do.Config.Prices)
	human := f.IO.Out
	if o.Stdout != "" {
		human = f.IO.ErrOut
	}
	skip := func(w io.Writer, p debate.Passage, nodes int) skippedPassage {
		id := graph.PassageID(p.Name, p.Text)
		cmdutil.Fprintf(w, "sot: passage %s: the graph holds it already (%d node(s) of %s); not debated again\n", p.Name, nodes, id)
		return skippedPassage{Name: p.Name, ID: id, Nodes: nodes}
	}

	if o.DryRun {
		plans, skipped, err := debate.PlanAll(ctx, passages, do)
		if err != nil {
			return err
		}
		for _, p := range plans {
			if err := p.CheckPrices(do); err != nil {
				return err // as the run would refuse it
			}
		}
		out := graphPlans{Graph: o.Graph, Stats: g.DAG.Stats()}
		for _, p := range skipped {
			_, n := g.Holds(p)
			out.Skipped = append(out.Skipped, skip(human, p, n))
		}
		for i, p := range plans {
			sum := p.Summary(prices)
			out.Plans = append(out.Plans, sum)
			if i > 0 {
				fmt.Fprintln(human)
			}
			printPlan(human, sum)
			t, e := &out.Total, sum.Estimate
			t.Calls += e.Calls
			t.Steps += e.Steps
			t.TypicalOutput += e.TypicalOutput
			t.BoundOutput += e.BoundOutput
			t.Typical.InputTokens += e.Typical.InputTokens
			t.Typical.CachedTokens += e.Typical.CachedTokens
			t.Typical.Cost += e.Typical.Cost
			t.Bound.InputTokens += e.Bound.InputTokens
			t.Bound.Cost += e.Bound.Cost
		}
		if len(plans) > 1 {
			t := out.Total
			fmt.Fprintf(human, "\nsot: in all, %d passage(s) into %s: at most %d call(s) in %d step(s); typically ~$%.4f, at most $%.4f\n", len(plans), o.Graph, t.Calls, t.Steps, t.Typical.Cost, t.Bound.Cost)
			fmt.Fprintf(human, "sot: each later passage is given the graph with the passages before it (at most %d tokens of it); the estimate of its typical cost counts the graph as it is now\n", plans[0].Graph.Budget)
		}
		if len(plans) == 0 {
			fmt.Fprintf(human, "sot: the graph %s holds every passage given; nothing to debate\n", o.Graph)
		}
		if o.Stdout == "json" {
			return writeJSON(f.IO.Out, out)
		}
		return nil
	}

	run := graphRun{Graph: o.Graph, Debates: []*debate.Result{}}
	// live is the display of the passage being debated, one a passage: it
	// counts that passage's calls, as that passage's journal holds them.
	var live *cmdutil.Live
	// The budgets (--max-calls, --max-tokens, --max-cost) hold for the whole
	// command: each passage's stack counts what the ones before it spent.
	var ledger stack.Ledger
	hooks := debate.GraphHooks{
		Skip: func(p debate.Passage, nodes int) { run.Skipped = append(run.Skipped, skip(f.IO.ErrOut, p, nodes)) },
		Start: func(plan *debate.Plan, po *debate.Options) error {
			calls, u, cost := ledger.Used()
			if out := budgetUsedUp(do.Config.Budget, config.Budget{MaxCalls: calls, MaxTokens: u.InputTokens + u.OutputTokens, MaxCost: cost}); out != "" {
				return &cmdutil.ExitError{Code: cmdutil.ExitPartial, Err: fmt.Errorf("the %s is spent before %s; raise it and run the same command again to debate the passages left (the graph keeps those done)", out, plan.Passage.Name)}
			}
			newStack := po.NewStack
			po.NewStack = func(journal string) (*stack.Stack, error) {
				st, err := newStack(journal)
				if err != nil {
					return nil, err
				}
				return ledger.Track(st), nil
			}
			printPlan(f.IO.ErrOut, plan.Summary(prices))
			if err := f.MissingKey(do.Config, plan.Model); err != nil {
				return err
			}
			// All the passage's run prints goes through its display: on a
			// terminal above its live lines, otherwise a line at a time,
			// never two at once (a detached summary may end as the next
			// step begins).
			live = cmdutil.NewLive(f, &po.Hooks)
			live.Plain()
			live.Start(plan.TypicalCalls())
			return nil
		},
		Done: func(out *debate.Outcome) {
			// The passage is over: nothing draws over its summary.
			calls := live.Stop()
			run.Debates = append(run.Debates, out.Result)
			summarize(human, out, calls)
		},
	}
	_, err = debate.DebateAll(ctx, passages, do, hooks)
	if live != nil {
		live.Stop() // a passage that stopped the command before Done
	}
	if err != nil && !isVerdict(err) {
		return cmdutil.ExecuteError(err)
	}
	run.Stats = g.DAG.Stats()
	if err := printGraphStdout(f.IO.Out, o, run); err != nil {
		return err
	}
	s := run.Stats
	fmt.Fprintf(human, "sot: argument graph %s: %d node(s) from %d passage(s), %d edge(s) (sot graph show %s; sot graph export %s --format mermaid)\n",
		o.Graph, s.Nodes, len(s.Passages), s.Edges, o.Graph, o.Graph)
	var partial *debate.PartialError
	if errors.As(err, &partial) {
		fmt.Fprintln(human, "sot: the passages after it were not debated: run the same command again to finish the debate and go on")
	}
	return cmdutil.Verdict(err)
}

// printGraphStdout prints on w what --stdout names for sot debate
// --graph: each passage's dialectic log in turn, or one JSON document of
// every debate and the graph.
func printGraphStdout(w io.Writer, o *Options, run graphRun) error {
	if o.Stdout == "json" {
		return writeJSON(w, run)
	}
	for i, r := range run.Debates {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if err := printStdout(w, o, r); err != nil {
			return err
		}
	}
	return nil
}

// isVerdict reports whether err is a debate's verdict (partial, failed)
// rather than an error that stopped the command.
func isVerdict(err error) bool {
	var partial *debate.PartialError
	var failed *debate.FailedError
	return errors.As(err, &partial) || errors.As(err, &failed)
}

// summarizeGraph says what a debate took from the graph and added to it.
func summarizeGraph(w io.Writer, g *debate.GraphRecord) {
	if g.NotAdded != "" {
		cmdutil.Fprintf(w, "sot: argument graph %s: not added: %s\n", g.File, g.NotAdded)
		return
	}
	var types []string
	for _, n := range g.Nodes {
		types = append(types, string(n.Type))
	}
	judged := 0
	for _, e := range g.Edges {
		if e.Type != graph.BranchesFrom {
			judged++
		}
	}
	line := fmt.Sprintf("sot: argument graph %s: %d node(s) from %s (%s), %d judged edge(s) to earlier passages", g.File, len(g.Nodes), g.Passage.ID, strings.Join(types, ", "), judged)
	if r := g.Report; r != nil && r.Edges != nil {
		line += fmt.Sprintf(" (%d candidate pair(s) judged, %d below the threshold, %d unrelated)", len(r.Pairs), len(r.Edges.Below), r.Edges.None)
	}
	fmt.Fprintln(w, cmdutil.Line(line))
}

// budgetUsedUp names the budget of total that spent has used up, if one
// has been.
func budgetUsedUp(total, spent config.Budget) string {
	switch {
	case total.MaxCalls > 0 && spent.MaxCalls >= total.MaxCalls:
		return fmt.Sprintf("call budget (--max-calls %d)", total.MaxCalls)
	case total.MaxTokens > 0 && spent.MaxTokens >= total.MaxTokens:
		return fmt.Sprintf("token budget (--max-tokens %d)", total.MaxTokens)
	case total.MaxCost > 0 && spent.MaxCost >= total.MaxCost:
		return fmt.Sprintf("cost budget (--max-cost %g)", total.MaxCost)
	}
	return ""
}
