package cmdutil

// What every scenario command (sot review, sot ask, sot debate) repeats
// around its run lives here, so that each shows a run the same way and
// ends it with the same exit codes and hints. A command uses it so:
//
//	// Run is the command's entry point, tested without cobra.
//	func Run(ctx context.Context, f *cmdutil.Factory, o *Options) error {
//		return cmdutil.RunScenario(ctx, f, func(ctx context.Context) error { return run(ctx, f, o) })
//	}
//
//	func run(ctx context.Context, f *cmdutil.Factory, o *Options) error {
//		so := &debate.Options{...}
//		live := cmdutil.NewLive(f, &so.Hooks) // warnings and progress to stderr
//		plan, err := debate.Prepare(ctx, so)
//		...                                   // print the plan, check keys
//		live.Plain()                          // when the answers are not findings
//		live.Start(plan.TypicalCalls())       // the live display of the calls
//		out, err := debate.Execute(ctx, plan, so)
//		calls := live.Stop()                  // before anything else is printed
//		if err != nil {
//			return cmdutil.ExecuteError(err)
//		}
//		summarize(human, out, calls)          // the scenario's own summary
//		return cmdutil.Verdict(out.Verdict())
//	}
//
// RunScenario gives Ctrl-C its exit code (130) and the command that
// resumes the run; Live sends the run's warnings and progress lines to
// stderr and, from Start to Stop, shows the calls (status.Display: live
// lines on a terminal, a log line a call otherwise); ExecuteError and
// Verdict turn what the run came to into the exit code and its one-line
// message.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/internal/gchold"
	"github.com/sotlabs/sot/internal/secrets"
	"github.com/sotlabs/sot/internal/status"
	"github.com/sotlabs/sot/llm"
)

// RunScenario runs a scenario command's run under Interruptible: Ctrl-C
// (or SIGTERM) stops it with exit code 130 and says that the finished
// calls are kept in the run's journal and which command resumes the run.
// The command a worker drives runs it as the workflow of its own run
// (see hosted).
func RunScenario(ctx context.Context, f *Factory, run func(context.Context) error) error {
	// Every run masks: the command line it records (ResumeCommand), its
	// material. The rules are built on another core while the command
	// reads its configuration.
	secrets.Warm()
	release := gchold.Hold(f.Getenv)
	defer release()
	f.StartupOver() // this hold takes over from the start's
	// The collector comes back once the run's first calls are sent: it
	// collects while the models think.
	ctx = engine.WithWaiting(ctx, release)
	return Interruptible(ctx, "the run's journal", func(ctx context.Context) error {
		if !f.Driven() {
			return run(ctx)
		}
		h, err := f.hosted()
		if err != nil {
			return err
		}
		return h.Run(ctx, run)
	})
}

// Live shows a scenario run on stderr: its warnings and progress lines
// from the start, and from Start to Stop the live display of its calls,
// through which everything the run prints then passes, so that nothing
// tears the display's lines.
type Live struct {
	f     *Factory
	hooks *engine.Hooks
	d     *status.Display
	stop  func()
}

// NewLive returns the display of a run whose hooks are h, and points h's
// Warn and Progress at stderr (through the display).
func NewLive(f *Factory, h *engine.Hooks) *Live {
	// Before Start the display has drawn nothing, so what is written
	// through it goes to stderr as it is.
	d := status.New(f.IO.ErrOut, f.IO.ErrTTY)
	h.Warn = func(s string) { Warn(d, s) }
	h.Progress = func(s string) { Say(d, s) }
	return &Live{f: f, hooks: h, d: d}
}

// Plain makes the display count calls only, for a scenario whose answers
// are not review findings.
func (l *Live) Plain() { l.d.Plain() }

// Start shows the run's calls from now on, expecting calls of them: it
// takes the hooks' Events, ends the live lines before any question put to
// the user (Ask), and sends log lines and notes through the display.
func (l *Live) Start(calls int) {
	l.d.Expect(calls)
	l.hooks.Events = l.d.Event
	l.hooks.Ask = l.d.Asking(l.hooks.Ask)
	l.f.LogTo(l.d)
	l.stop = l.d.Start(time.Second)
}

// Stop ends the display once the run is over, so that nothing draws over
// what comes next (the summary, a question), and returns the calls it
// counted: those the run's journal holds, for the summary. Log lines go
// straight to stderr again. Stop may be called more than once.
func (l *Live) Stop() status.Counts {
	if l.stop != nil {
		l.stop()
		l.stop = nil
		l.f.LogTo(l.f.IO.ErrOut)
	}
	l.d.Close()
	return l.d.Counts()
}

// ExecuteError is what a command returns for the error a scenario's
// Execute returned: a user error exits 2, and a key the provider refused
// or a model it does not know carries the hint to run sot doctor.
func ExecuteError(err error) error {
	switch {
	case err == nil:
		return nil
	case engine.IsUserError(err):
		return AsUsage(err)
	case errors.Is(err, llm.ErrAuth) || errors.Is(err, llm.ErrUnknownModel):
		return fmt.Errorf("%w (sot doctor checks each configured model and says what to fix)", err)
	}
	return err
}

// Verdict is what a command returns for what a finished run came to (its
// Outcome's Verdict): nil exits 0, a partial result (a
// *scenario.PartialError, whose message says what is missing and where it
// is listed) exits 3, a user error 2, and anything else (a run with no
// result, a gate such as --fail-on) 1.
func Verdict(err error) error {
	var partial *scenario.PartialError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &partial):
		return &ExitError{Code: ExitPartial, Err: err}
	case engine.IsUserError(err):
		return err
	}
	return &ExitError{Code: ExitFailure, Err: err}
}
