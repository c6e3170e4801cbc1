package cmdutil

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/sotlabs/sot/internal/secrets"
	"github.com/sotlabs/sot/internal/shell"
)

// ResumeCommand is the command line that was run, quoted for a POSIX
// shell: running it again resumes a journaled run.
// Its secrets are masked (a key typed in --passage or a question is
// written to run.json and printed with it), so the command resumes the run
// whenever the masked text is what the run sent, as it is.
func ResumeCommand() string { return "sot " + secrets.Mask(shell.Join(os.Args[1:])) }

// Interruptible runs a journaled run under a context that Ctrl-C (or
// SIGTERM) cancels. When a signal stopped it, the error exits 130 and says
// that the finished calls are kept in the journal (what names it: "the
// run's journal") and which command resumes the run.
func Interruptible(ctx context.Context, journal string, run func(context.Context) error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	sigCtx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(sigCtx)
	if sigCtx.Err() != nil && ctx.Err() == nil {
		return &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("interrupted; the calls that finished are kept in %s. Resume with: %s", journal, ResumeCommand())}
	}
	return err
}
