// Package moderate implements "sot moderate": moderator mode on a finished
// review, where the user talks to the specialists directly.
package moderate

import (
	"context"
	"errors"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/review"
)

// Options are the inputs of "sot moderate".
type Options struct {
	// Run is the finished review: its output directory or its run id.
	Run string
	// Force enters moderator mode even where it would be skipped.
	Force   bool
	NoTools bool
}

// NewCmd returns "sot moderate".
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "moderate RUN",
		Short: "Talk to a finished review's specialists: summon, challenge, dig deeper",
		Long: `Moderator mode on a finished review. RUN is its output directory, or a run
id under .sot/reviews/. Commands, one per line:

  ask <specialist> <question>          the specialist answers in character
  challenge <finding> <argument>       the finding's author defends it with new
                                       evidence or concedes with a specific reason
  deeper <file or area> [with <name>]  focused analysis by the most relevant
                                       (or the named) specialist
  done | continue | proceed            leave

Answers stream as they arrive; every exchange is appended to MODERATOR.md in
the run's directory. Moderator mode is skipped when the review ran with
--interactive false, has no findings, or ran in smart mode with only
consider-tier findings (--force enters anyway).`,
		Example: `  sot moderate .sot/reviews/r1a19f0178e
  printf 'ask security is the cookie really attacker controlled?\ndone\n' | sot moderate r1a19f0178e`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			o.Run = args[0]
			return Run(ctx, f, o)
		},
	}
	cmd.Flags().BoolVar(&o.Force, "force", false, "enter moderator mode even when it would be skipped")
	cmd.Flags().BoolVar(&o.NoTools, "no-tools", false, "a challenged specialist answers from what it is shown, without looking at the project with tools (config: review.tools)")
	return cmd
}

// Run starts moderator mode on the review o names; the user's lines come
// from f's input and the answers go to its output.
func Run(ctx context.Context, f *cmdutil.Factory, o *Options) error {
	run, err := review.LoadRun(o.Run)
	if err != nil {
		return cmdutil.AsUsage(err)
	}
	cfg, _, err := f.Config()
	if err != nil {
		return err
	}
	lib, err := f.Library()
	if err != nil {
		return err
	}
	err = run.Moderate(ctx, review.ModerateOptions{
		Library: lib, In: f.IO.In, Out: f.IO.Out, Force: o.Force,
		NewStack: f.NewStack(cfg, cmdutil.StackOptions{}), Config: cfg, NoTools: o.NoTools,
	})
	if errors.As(err, new(*review.FieldError)) {
		return cmdutil.AsUsage(err)
	}
	return err
}
