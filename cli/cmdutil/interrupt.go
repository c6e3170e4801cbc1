package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/sotlabs/sot/engine"
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
// run's journal") and which command resumes the run. A second signal
// ends the process at once, with the same words and code: a run that
// does not stop (a read the kernel will not give up) is not left to wait.
// Every finished call is already in the journal.
func Interruptible(ctx context.Context, journal string, run func(context.Context) error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	sigCtx, signalled := context.WithCancel(ctx)
	defer signalled()
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-sigs:
			signalled()
		case <-finished:
			return
		}
		select {
		case <-sigs:
			fmt.Fprintf(os.Stderr, "sot: interrupted again, stopping now; the calls that finished are kept in %s. Resume with: %s\n", journal, ResumeCommand())
			exitNow(ExitInterrupted)
		case <-finished:
		}
	}()
	// A part of the run may stop it as Ctrl-C does, saying why (a run on
	// Temporal whose workflow was cancelled): see engine.Stop.
	runCtx, cancel := context.WithCancelCause(sigCtx)
	defer cancel(nil)
	err := run(engine.WithStop(runCtx, cancel))
	if runCtx.Err() != nil && ctx.Err() == nil {
		why := "interrupted"
		if cause := context.Cause(runCtx); sigCtx.Err() == nil && cause != nil && !errors.Is(cause, context.Canceled) {
			why = "stopped: " + cause.Error()
		}
		return &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("%s; the calls that finished are kept in %s. Resume with: %s", why, journal, ResumeCommand())}
	}
	return err
}

// exitNow ends the process; tests replace it.
var exitNow = os.Exit
