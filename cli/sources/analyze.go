package sources

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	askanalyze "github.com/sotlabs/sot/ask/analyze"
	"github.com/sotlabs/sot/ask/corpus"
	"github.com/sotlabs/sot/cli/cmdutil"
)

// AnalyzeOptions are the flags of "sot sources analyze".
type AnalyzeOptions struct {
	DryRun bool
	Fresh  bool
}

func newAnalyzeCmd(f *cmdutil.Factory, o *Options) *cobra.Command {
	ao := &AnalyzeOptions{}
	cmd := &cobra.Command{
		Use:   "analyze",
		Short: "Extract the SoT metadata of the sources that have none, and report the coverage",
		Long: `Give every indexed source its Societies of Thought metadata: meeting type,
key entities (people, projects, organizations, products), temporal context
(quarter, dates, deadlines, timeframe), 3 to 7 topic tags, content signals
(risks, decisions, actions, questions, conflicts) and a suggested
perspective. sot ask uses them to pick varied sources and, with the
adaptive strategy, to give each source its role.

A northstar export brings its metadata in its payload; those sources are
left alone. Every other source without metadata is read by the default
model (--model) in one structured call, all at once. An answer that does
not fit (a meeting type or perspective outside the lists, fewer than 3 or
more than 7 topic tags) is asked for once more with the problem, then the
source is reported as failed. The metadata is stored in the index (see
sot sources show) and goes out with sot sources export.

Every finished call is journaled in .sot/index/analyze/: after Ctrl-C or a
crash, the same command continues and pays for nothing twice. Calls also go
through the response cache; --fresh bypasses both, to ask again for the
sources that failed.

The report ends with the coverage: the share of sources that have
metadata, against the target of more than 95%.

Exit codes: 0 every source has metadata or got it; 2 usage (no model, no
key); 3 some sources failed (the others are stored); 130 interrupted.`,
		Example: `  sot sources analyze --dry-run
  sot sources analyze
  sot --model anthropic:claude-sonnet-4-5 sources analyze --json`,
		Args: exactly(0, "analyze takes no arguments: it analyses every indexed source that has no metadata (add sources with sot sources add)"),
		RunE: func(c *cobra.Command, _ []string) error {
			o.WorkDir = f.WorkDir()
			return Analyze(c.Context(), f, o, ao)
		},
	}
	cmd.Flags().BoolVar(&ao.DryRun, "dry-run", false, "say how many calls the analysis would make, and send none")
	cmd.Flags().BoolVar(&ao.Fresh, "fresh", false, "neither replay the journal of an interrupted analysis nor answer from the response cache")
	return cmd
}

// Analyze runs "sot sources analyze"; Ctrl-C stops it with exit code 130
// and the command that resumes it.
func Analyze(ctx context.Context, f *cmdutil.Factory, o *Options, ao *AnalyzeOptions) error {
	return cmdutil.Interruptible(ctx, "the analysis's journal", func(ctx context.Context) error { return analyze(ctx, f, o, ao) })
}

func analyze(ctx context.Context, f *cmdutil.Factory, o *Options, ao *AnalyzeOptions) error {
	cfg, _, err := f.Config()
	if err != nil {
		return cmdutil.AsUsage(err)
	}
	errOut := o.IO.ErrOut
	opts := &askanalyze.Options{Dir: o.WorkDir, Config: cfg, Getenv: f.Getenv, DryRun: ao.DryRun, Fresh: ao.Fresh,
		NewStack: f.NewStack(cfg, cmdutil.StackOptions{NoCache: ao.Fresh})}
	opts.Warn = func(s string) { cmdutil.Warn(errOut, s) }
	opts.Progress = func(s string) { cmdutil.Say(errOut, s) }
	rep, err := askanalyze.Analyze(ctx, opts)
	if err != nil {
		return err // a user error exits 2 (cmdutil.Code)
	}
	if o.JSON {
		if err := writeJSON(o.IO.Out, rep); err != nil {
			return err
		}
	} else {
		printReport(o.IO.Out, rep)
	}
	var failed *askanalyze.FailedError
	if err := rep.Verdict(); errors.As(err, &failed) {
		return &cmdutil.ExitError{Code: cmdutil.ExitPartial, Err: fmt.Errorf("%w; run sot sources analyze --fresh to ask again", err)}
	}
	return nil
}

// printReport says what the analysis did and the coverage it reached.
func printReport(w io.Writer, r *askanalyze.Report) {
	if r.Sources == 0 {
		for _, n := range r.Notes {
			cmdutil.Fprintf(w, "sot: %s\n", n)
		}
		return
	}
	cmdutil.Fprintf(w, "sot: %d source(s) in the index; metadata from the export payload: %d, from an earlier analysis: %d\n", r.Sources, r.FromPayload, r.FromAnalysis)
	if r.DryRun {
		model := r.Model
		if model == "" {
			model = "the default model (none is set)"
		}
		if r.Calls == 0 {
			fmt.Fprintln(w, "sot: nothing to analyse; no call would be made")
		} else {
			cmdutil.Fprintf(w, "sot: would analyse %d source(s) with %s: %d call(s), more if answers must be asked for again, about %d input token(s); nothing was sent (--dry-run)\n",
				len(r.Pending), model, r.Calls, r.InputTokens)
			for _, p := range r.Pending {
				cmdutil.Fprintf(w, "  - %s %s\n", p.ID, oneLine(p.Title))
			}
		}
	} else {
		cmdutil.Fprintf(w, "sot: analysed now: %d", len(r.Analyzed))
		if len(r.Analyzed) > 0 {
			cmdutil.Fprintf(w, " with %s", r.Model)
		}
		fmt.Fprintln(w)
		for _, a := range r.Analyzed {
			cmdutil.Fprintf(w, "  - %s %s: %s\n", a.ID, oneLine(a.Title), summary(a.Metadata))
		}
		if len(r.Failed) > 0 {
			cmdutil.Fprintf(w, "sot: failed: %d\n", len(r.Failed))
			for _, fl := range r.Failed {
				cmdutil.Fprintf(w, "  - %s %s: %s\n", fl.ID, oneLine(fl.Title), oneLine(fl.Reason))
			}
		}
	}
	for _, n := range r.Notes {
		cmdutil.Fprintf(w, "sot: note: %s\n", n)
	}
	verdict := "met"
	if !r.MeetsTarget {
		verdict = "not met"
	}
	cmdutil.Fprintf(w, "sot: coverage: %d of %d source(s) have SoT metadata (%.1f%%); the target is more than %.0f%%: %s\n",
		r.WithMetadata, r.Sources, 100*r.Coverage, 100*r.Target, verdict)
	if u := r.Usage; u != nil {
		cmdutil.Fprintf(w, "sot: %d call(s), $%.4f", u.Calls, u.CostUSD)
		if u.Replayed > 0 {
			cmdutil.Fprintf(w, " (%d replayed from the journal)", u.Replayed)
		}
		fmt.Fprintln(w)
	}
}

// summary is metadata on one line.
func summary(m *corpus.Metadata) string {
	if m == nil {
		return "-"
	}
	parts := []string{or(m.MeetingType, "-")}
	if m.SuggestedPerspective != "" {
		parts = append(parts, "for the "+m.SuggestedPerspective)
	}
	if t := m.TemporalContext; t != nil && t.Quarter != "" {
		parts = append(parts, t.Quarter)
	}
	if len(m.TopicTags) > 0 {
		parts = append(parts, "tags "+strings.Join(m.TopicTags, ", "))
	}
	return strings.Join(parts, "; ")
}
