// Package runs implements "sot runs": the runs of the project (reviews,
// questions and debates), with their date, kind, material, state and
// cost, and the command that resumes each.
package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/sotlabs/sot/ask"
	"github.com/sotlabs/sot/blob"
	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/debate"
	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/engine/temporal"
	"github.com/sotlabs/sot/internal/project"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/review"
)

// Options are the inputs of "sot runs".
type Options struct {
	IO      *cmdutil.IOStreams
	WorkDir string
	Prices  llm.PriceTable
	JSON    bool
	// Resume prints, for each run, the command that resumes it.
	Resume bool
	// Temporal lists sot's workflows on the configured Temporal service
	// instead (with All, those that ended too); Cancel cancels one.
	Temporal, All bool
	Cancel        string
	// PruneBlobs removes from the blob store of runs on Temporal what
	// no run has written or used for this long (0: nothing).
	PruneBlobs time.Duration
	// Blobs opens that store (the configuration's executor.blobs).
	Blobs func(context.Context) (temporal.Blobs, error)
	// Dial connects to Temporal (the configuration's executor section).
	Dial func() (client.Client, error)
}

// NewCmd returns "sot runs".
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &Options{IO: f.IO}
	var prune string
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List this project's runs (reviews, questions, debates): date, kind, material, state, cost",
		Long: `List the runs of the project: reviews in their default output
directories (.sot/reviews/<run-id>) and PAW's (.paw/work/<id>/reviews), and
questions asked with sot ask (.sot/answers/<run-id>) and debates held with
sot debate (.sot/debates/<run-id>), newest first, with when each started,
what kind of run it was, what it read, its state, what it produced
(findings of a review, sentences of an answer, branches of a debate) and
what it cost.

States: finished; partial (written, with parts missing); interrupted
(stopped before the synthesis: the same command resumes it and pays only for
the calls that had not finished); running (a process holds its lock); not
yours (its run.json does not carry your signature, so it is never resumed).

--resume prints the command that resumes each run (or re-renders
a finished one without a call), rebuilt from its record.

--temporal lists instead the workflows of runs started with --executor
temporal, on the Temporal service your configuration names: their id,
state, when they started, and (while a worker answers) their calls, calls
in flight, failures and tokens; --all adds those that ended. --cancel ID
cancels one: its calls under way stop, and the command that started it
stops as Ctrl-C stops it, saying how to resume (exit 130). See
docs/scale-out.md.

--prune-blobs AGE removes from the blob store of runs on Temporal
(executor.blobs) the projects, requests and answers that no run has
written or used for AGE (72h, 7d): make it longer than your longest run.`,
		Example: `  sot runs
  sot runs --resume        # and the command that continues each run
  sot runs --json | jq '.[] | select(.state == "interrupted")'
  sot runs --temporal                    # workflows of runs on Temporal
  sot runs --cancel sot-a-review-r1a2b3c
  sot runs --prune-blobs 7d              # free the blob store of old runs`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.WorkDir = f.WorkDir()
			cfg, _, err := f.Config()
			if err != nil {
				return err
			}
			o.Prices = llm.DefaultPrices().Merge(cfg.Prices)
			o.Dial = func() (client.Client, error) { return temporal.Dial(cfg.Executor, f.Getenv, f.Logger) }
			o.Blobs = func(ctx context.Context) (temporal.Blobs, error) {
				return temporal.OpenBlobs(ctx, temporal.Settings(cfg.Executor), f.Getenv)
			}
			if prune != "" {
				age, err := parseAge(prune)
				if err != nil {
					return cmdutil.UsageError("--prune-blobs %q: %v", prune, err)
				}
				o.PruneBlobs = age
				return Prune(cmd.Context(), o)
			}
			if o.Temporal || o.Cancel != "" {
				return Workflows(cmd.Context(), o)
			}
			if o.All {
				return cmdutil.UsageError("--all goes with --temporal")
			}
			return Run(o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the runs as JSON")
	cmd.Flags().BoolVar(&o.Resume, "resume", false, "print the command that resumes each run")
	cmd.Flags().BoolVar(&o.Temporal, "temporal", false, "list the workflows of runs on Temporal instead (see docs/scale-out.md)")
	cmd.Flags().BoolVar(&o.All, "all", false, "with --temporal: the workflows that ended too")
	cmd.Flags().StringVar(&o.Cancel, "cancel", "", "cancel the workflow `ID` of a run on Temporal")
	cmd.Flags().StringVar(&prune, "prune-blobs", "", "remove from the blob store of runs on Temporal what no run used for `AGE` (72h, 7d)")
	for _, other := range []string{"cancel", "temporal", "resume", "json"} {
		cmd.MarkFlagsMutuallyExclusive("prune-blobs", other)
	}
	cmd.MarkFlagsMutuallyExclusive("cancel", "temporal")
	cmd.MarkFlagsMutuallyExclusive("cancel", "resume")
	cmd.MarkFlagsMutuallyExclusive("temporal", "resume")
	return cmd
}

// Run lists the runs.
func Run(o *Options) error {
	top, ok := project.Top(o.WorkDir)
	if !ok {
		return cmdutil.UsageError("%s is not in a project (no .git, .sot or .paw above it); run sot runs inside the repository you reviewed", o.WorkDir)
	}
	var list []run.Listed
	for _, scenario := range []func(string, llm.PriceTable) ([]run.Listed, error){review.ListRuns, ask.ListRuns, debate.ListRuns} {
		runs, err := scenario(top, o.Prices)
		if err != nil {
			return err
		}
		list = append(list, runs...)
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Created.After(list[j].Created) })
	if o.JSON {
		enc := json.NewEncoder(o.IO.Out)
		enc.SetIndent("", "  ")
		if list == nil {
			list = []run.Listed{}
		}
		return enc.Encode(list)
	}
	if len(list) == 0 {
		fmt.Fprintf(o.IO.Out, "sot: no runs in %s yet; sot review, sot ask and sot debate make them\n", top)
		return nil
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTARTED\tKIND\tSTATE\tFINDINGS\tCALLS\tCOST\tMATERIAL")
	for _, r := range list {
		state := r.State
		if r.Missing > 0 {
			state = fmt.Sprintf("%s (%d missing)", state, r.Missing)
		}
		findings := "-"
		if r.State == run.StatusFinished || r.State == run.StatusPartial {
			findings = fmt.Sprint(r.Items)
		}
		started := "-"
		if !r.Created.IsZero() {
			started = r.Created.Local().Format("2006-01-02 15:04")
		}
		cmdutil.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t$%.4f\t%s\n", r.ID, started, r.Kind, state, findings, r.Calls, r.CostUSD, oneLine(r.Material, 60))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if o.Resume {
		fmt.Fprintln(o.IO.Out, "\nTo resume a run (or re-render a finished one without a call), run its command while the material is unchanged:")
		for _, r := range list {
			if r.Resume != "" {
				cmdutil.Fprintf(o.IO.Out, "  %s: %s\n", r.ID, r.Resume)
			}
		}
	}
	return nil
}

// minPruneAge is the least --prune-blobs takes: a run under way uses its
// blobs, and one sent again within the hour is not marked as used again.
const minPruneAge = 2 * time.Hour

// parseAge reads an age: a Go duration (72h) or a number of days (7d).
func parseAge(s string) (time.Duration, error) {
	var d time.Duration
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil {
			return 0, fmt.Errorf("not a number of days")
		}
		d = time.Duration(days) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("give an age such as 72h or 7d")
		}
	}
	if d < minPruneAge {
		return 0, fmt.Errorf("at least %v, longer than your longest run: what a run under way uses must stay", minPruneAge)
	}
	return d, nil
}

// Prune removes from the blob store what no run used for o.PruneBlobs.
func Prune(ctx context.Context, o *Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	b, err := o.Blobs(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	pr, ok := b.(interface {
		Prune(context.Context, time.Time) (blob.Pruned, error)
	})
	if !ok {
		return fmt.Errorf("this blob store cannot be pruned")
	}
	got, err := pr.Prune(ctx, time.Now().Add(-o.PruneBlobs))
	if err != nil {
		return err
	}
	fmt.Fprintf(o.IO.Out, "sot: removed %d objects (%.1f MB) that no run used for %v\n", got.Objects, float64(got.Bytes)/(1<<20), o.PruneBlobs)
	return nil
}

// Workflows lists sot's workflows on Temporal, or cancels one.
func Workflows(ctx context.Context, o *Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	c, err := o.Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	if o.Cancel != "" {
		if err := temporal.Cancel(ctx, c, o.Cancel); err != nil {
			return err
		}
		cmdutil.Fprintf(o.IO.Out, "sot: cancelled %s; the command that started it stops as Ctrl-C stops it, and run again continues in a new workflow\n", o.Cancel)
		return nil
	}
	list, err := temporal.List(ctx, c, o.All)
	if err != nil {
		return err
	}
	if o.JSON {
		enc := json.NewEncoder(o.IO.Out)
		enc.SetIndent("", "  ")
		if list == nil {
			list = []temporal.Workflow{}
		}
		return enc.Encode(list)
	}
	if len(list) == 0 {
		fmt.Fprintln(o.IO.Out, "sot: no workflows of sot runs on Temporal (--all adds those that ended)")
		return nil
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKFLOW\tSTARTED\tSTATE\tCALLS\tIN FLIGHT\tFAILED\tTOKENS\tCOST")
	for _, w := range list {
		calls, flight, failed, tokens, cost := "-", "-", "-", "-", "-"
		state := w.Status
		if w.Drives {
			// The run's calls are counted by its call workflow, listed too.
			state += ", drives a run"
		} else if w.Queried {
			calls, flight, failed, tokens = fmt.Sprint(w.Run.Calls), fmt.Sprint(w.Run.InFlight), fmt.Sprint(w.Run.Failed), fmt.Sprint(w.Run.Usage.Total())
			cost = fmt.Sprintf("$%.4f", w.Run.CostUSD)
		}
		cmdutil.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", w.ID, w.Started.Local().Format("2006-01-02 15:04"), state, calls, flight, failed, tokens, cost)
	}
	return tw.Flush()
}

// oneLine cuts s to n runes on one line.
func oneLine(s string, n int) string {
	r := []rune(s)
	for i, c := range r {
		if c == '\n' || c == '\r' {
			r[i] = ' '
		}
	}
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return string(r)
}
