package debatecmd

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/debate"
	"github.com/sotlabs/sot/internal/status"
	"github.com/sotlabs/sot/llm"
)

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
