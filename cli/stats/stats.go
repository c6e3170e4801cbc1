// Package stats implements "sot stats": what the decisions recorded on a
// project's reviews (sot review --resolve, resolve over MCP) say about its
// specialists and lenses, over time, and which findings are dismissed most.
package stats

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/internal/project"
	"github.com/sotlabs/sot/review"
)

// Options are the inputs of "sot stats".
type Options struct {
	IO      *cmdutil.IOStreams
	WorkDir string
	JSON    bool
}

// NewCmd returns "sot stats".
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &Options{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "How often each specialist's and lens's findings were accepted or dismissed, over time",
		Long: `Read the decisions recorded on this project's reviews (sot review --resolve,
or resolve over sot mcp) and show, for each specialist and each lens, how many
of its findings were accepted, dismissed and deferred and its acceptance rate
(accepted over accepted and dismissed); the same by month; and the findings
dismissed most, with the reasons given. Each review's latest decision about a
finding counts once. No model is called.`,
		Example: `  sot stats
  sot stats --json | jq '.specialists[] | select(.acceptance < 0.5)'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.WorkDir = f.WorkDir()
			return Run(o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the statistics as JSON")
	return cmd
}

// Run prints the statistics.
func Run(o *Options) error {
	top, ok := project.Top(o.WorkDir)
	if !ok {
		return cmdutil.UsageError("%s is not in a project (no .git, .sot or .paw above it); run sot stats in the repository you reviewed", o.WorkDir)
	}
	st, err := review.ProjectStats(top)
	if err != nil {
		return err
	}
	if o.JSON {
		b, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			return err
		}
		o.IO.Out.Write(append(b, '\n'))
		return nil
	}
	w := o.IO.Out
	if st.Decisions == 0 {
		fmt.Fprintln(w, "sot: no decisions recorded yet: sot review --resolve RUN records accept, dismiss or defer for each finding")
		return nil
	}
	fmt.Fprintf(w, "%d decision(s) on %d review(s), %s to %s\n", st.Decisions, st.Reviews, st.FirstDecided.Format("2006-01-02"), st.LastDecided.Format("2006-01-02"))
	table(w, "specialist", st.Specialists)
	table(w, "lens", st.Lenses)
	table(w, "month", st.Months)
	if len(st.MostDismiss) > 0 {
		fmt.Fprintln(w, "\ndismissed most:")
		for _, d := range st.MostDismiss {
			cmdutil.Fprintf(w, "  %d× %s\n", d.Times, d.Claim)
			for _, r := range d.Reasons {
				cmdutil.Fprintf(w, "      because: %s\n", r)
			}
		}
	}
	return nil
}

func table(w io.Writer, what string, rows []Acceptance) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\taccepted\tdismissed\tdeferred\tacceptance\n", what)
	for _, r := range rows {
		rate := "-"
		if r.Accepted+r.Dismissed > 0 {
			rate = fmt.Sprintf("%.0f%%", 100*r.Rate)
		}
		cmdutil.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", r.Name, r.Accepted, r.Dismissed, r.Deferred, rate)
	}
	tw.Flush()
}

// Acceptance is review.Acceptance.
type Acceptance = review.Acceptance
