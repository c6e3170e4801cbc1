package askcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/sotlabs/sot/ask"
	askcompare "github.com/sotlabs/sot/ask/compare"
	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/internal/project"
	"github.com/sotlabs/sot/llm/stack"
)

// compare runs --compare: every question under every configuration, then
// the table, the rates and the corpus's SoT metadata coverage; it writes
// comparison.json, and compare.html with --format html, to --output-dir or
// .sot/answers/compare-<id>.
func compare(ctx context.Context, f *cmdutil.Factory, o *Options, base *ask.Options) error {
	questions := []string{o.Question}
	if o.Questions != "" {
		b, err := project.ReadInput(o.Questions, o.FollowSymlinks)
		if err != nil {
			return cmdutil.UsageError("--questions: %v", err)
		}
		questions = nil
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				questions = append(questions, l)
			}
		}
		if len(questions) == 0 {
			return cmdutil.UsageError("--questions %s holds no question (one a line; # starts a comment)", o.Questions)
		}
	}
	if o.DryRun {
		return cmdutil.UsageError("--compare makes a run of each configuration: leave out --dry-run (sot ask --dry-run shows one question's plan)")
	}
	if o.JSON && o.Stdout != "" && o.Stdout != "json" {
		return cmdutil.UsageError("--json and --stdout %s contradict each other; pick one", o.Stdout)
	}
	if o.Stdout == "markdown" {
		return cmdutil.UsageError("--stdout markdown: with --compare, use json or html")
	}
	if slices.Contains(o.Formats, "markdown") {
		return cmdutil.UsageError("--format markdown: --compare writes comparison.json, and compare.html with --format html")
	}
	// --output-dir is the comparison's directory; each configuration's run
	// keeps its own.
	if err := askcompare.CheckDir(base.Dir, o.OutputDir); err != nil {
		return err
	}
	base.Progress = nil
	// Under --max-cost every model needs a price: refuse a model without
	// one before the first run, once and as a usage error, as one run would.
	if err := checkPrices(base); err != nil {
		return err
	}
	// The budgets (--max-calls, --max-tokens, --max-cost) hold for the whole
	// comparison: each run's stack counts what the runs before it spent.
	var ledger stack.Ledger
	newOptions := func(q string) *ask.Options {
		ao := *base
		cfg := *base.Config
		ao.Config, ao.Question, ao.OutputDir = &cfg, q, ""
		ao.NewStack = func(journal string) (*stack.Stack, error) {
			st, err := base.NewStack(journal)
			if err != nil {
				return nil, err
			}
			return ledger.Track(st), nil
		}
		return &ao
	}
	c, err := askcompare.Compare(ctx, questions, newOptions)
	if err != nil {
		return err
	}
	files, err := c.Write(base.Dir, o.OutputDir, slices.Contains(o.Formats, "html"))
	if err != nil {
		return err
	}
	human := f.IO.Out
	switch {
	case o.JSON || o.Stdout == "json":
		human = f.IO.ErrOut
		b, _ := json.MarshalIndent(c, "", "  ")
		f.IO.Out.Write(append(b, '\n'))
	case o.Stdout == "html":
		human = f.IO.ErrOut
		b, err := c.HTML()
		if err != nil {
			return err
		}
		f.IO.Out.Write(b)
	}
	printComparison(human, c, len(questions))
	for _, p := range files {
		fmt.Fprintf(f.IO.ErrOut, "sot: wrote %s\n", p)
	}
	// A run that failed or has parts missing makes the comparison partial:
	// its figures are not comparable with the others'.
	incomplete := 0
	for _, m := range c.Runs {
		if m.Error != "" || m.Missing > 0 {
			incomplete++
		}
	}
	if incomplete > 0 {
		return &cmdutil.ExitError{Code: cmdutil.ExitPartial, Err: fmt.Errorf("%d of %d run(s) of the comparison failed or have parts missing, so their figures do not compare (a budget, --max-calls, --max-tokens or --max-cost, holds for the whole comparison); the same command finishes them, and pays only for the calls that did not finish", incomplete, len(c.Runs))}
	}
	return nil
}

// printComparison writes the comparison as text: the metadata coverage, a
// table a question, and the rates over several questions.
func printComparison(w io.Writer, c *askcompare.Comparison, questions int) {
	if mc := c.Metadata; mc != nil {
		met := "not met; sot sources analyze gives the others theirs"
		if mc.MeetsTarget {
			met = "met"
		}
		fmt.Fprintf(w, "SoT metadata: %d of %d source(s) (%.1f%%): %d from export payloads, %d from sot sources analyze; the seed's target is more than %.0f%%: %s\n",
			mc.WithMetadata, mc.Sources, mc.Coverage*100, mc.FromPayload, mc.FromAnalysis, mc.Target*100, met)
	}
	for i, m := range c.Runs {
		if i%len(askcompare.Configurations) == 0 {
			cmdutil.Fprintf(w, "\n%s\n%-18s %5s %8s %8s %7s  %7s %9s %-8s %3s %3s %7s %7s  %s\n", m.Question, "configuration", "calls", "input", "cached", "output", "cost", "wall", "run", "ten", "agr", "tokens", "latency", "groups")
		}
		groups := "-"
		if m.Groups != nil {
			groups = fmt.Sprint(*m.Groups)
			if m.ByGroup {
				groups += ", read by group"
			}
		}
		switch {
		case m.Error != "":
			cmdutil.Fprintf(w, "%-18s failed: %s\n", m.Configuration, m.Error)
		case m.Missing > 0:
			fmt.Fprintf(w, "%s  %s (%d part(s) missing)\n", m.String(), groups, m.Missing)
		default:
			fmt.Fprintf(w, "%s  %s\n", m.String(), groups)
		}
	}
	d := c.Definitions
	fmt.Fprintf(w, "\n(ten: tensions, agr: agreements: %s)\n", d.Tensions)
	fmt.Fprintf(w, "(wall: %s)\n", d.WallTime)
	fmt.Fprintf(w, "(run: new, the comparison sent calls for it; replayed, %s)\n", d.Replayed)
	if questions > 1 {
		rate := func(r *float64) string {
			if r == nil {
				return "-"
			}
			return fmt.Sprintf("%.0f%%", *r*100)
		}
		fmt.Fprintf(w, "\n%-18s %9s %9s %9s %9s\n", "configuration", "questions", "conflicts", "by group", "inter-grp")
		for _, r := range c.Rates {
			conflicts := "-"
			if r.Questions > 0 {
				conflicts = rate(&r.ConflictRate)
			}
			fmt.Fprintf(w, "%-18s %9d %9s %9s %9s\n", r.Configuration, r.Questions, conflicts, rate(r.GroupRate), rate(r.InterGroupRate))
		}
		fmt.Fprintln(w, "(by group: of the questions whose sources fell into 2 or more groups, for the configurations that ask for groups; inter-grp: of the questions read by group)")
		fmt.Fprintln(w, "(the seed's targets: conflict detection 15-30% of questions, group decomposition over 60%, inter-group conflicts 20-40%)")
	}
}

// checkPrices refuses, under --max-cost, a comparison whose model has no
// known price (see middleware.Meter.CheckPrices): every run would be
// refused the same way.
func checkPrices(o *ask.Options) error {
	model, err := o.Config.ResolveModel(o.Model)
	if err != nil {
		return nil // each run reports it
	}
	st, err := o.NewStack("")
	if err != nil {
		return err
	}
	defer st.Close()
	return cmdutil.AsUsage(st.Meter.CheckPrices(model.String()))
}
