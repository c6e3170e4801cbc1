// Package cmdutil holds what every sot command shares: the I/O streams, the
// factory that loads configuration and builds the model stack, and the
// errors that decide the process exit code.
package cmdutil

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/engine/temporal"
	"golang.org/x/term"
)

// Exit codes. CI acts on these.
const (
	ExitOK      = scenario.ExitOK      // success
	ExitFailure = scenario.ExitFailure // a failure, or findings at or above --fail-on
	ExitUsage   = scenario.ExitUsage   // bad flags, arguments or configuration
	ExitPartial = scenario.ExitPartial // the run finished without some of its parts
	// ExitInterrupted is the shell's code for a process stopped by Ctrl-C.
	ExitInterrupted = 130
)

// IOStreams are a command's standard streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// TTY reports whether Out is a terminal.
	TTY bool
	// ErrTTY reports whether ErrOut is a terminal (live status lines).
	ErrTTY bool
	// InTTY reports whether In is a terminal (interactive prompts).
	InTTY bool
}

// System returns the process's streams.
func System() *IOStreams {
	return &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		TTY: isTerminal(os.Stdout), ErrTTY: isTerminal(os.Stderr), InTTY: isTerminal(os.Stdin)}
}

// isTerminal asks the terminal driver, not the file mode: /dev/null is a
// character device too, and a job run with </dev/null (cron, CI, ssh -n)
// must never be taken for a person at a keyboard.
func isTerminal(f *os.File) bool {
	return term.IsTerminal(int(f.Fd()))
}

// ExitError carries an exit code other than 1. A nil Err exits silently.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// UsageError is a mistake in how sot was called; it exits 2.
func UsageError(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// AsUsage marks err as a usage error.
func AsUsage(err error) error {
	if err == nil {
		return nil
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	return &ExitError{Code: ExitUsage, Err: err}
}

// Code returns the exit code for an error returned by a command: its
// ExitError's code, else the code the scenario runner gives what a run
// came to (scenario.ExitCode: ExitPartial for a partial result, ExitUsage
// for the engine's user errors, ExitFailure for anything else).
func Code(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	var he *temporal.HostedError
	if errors.As(err, &he) && he.Code != 0 {
		return he.Code // a driven run another process finished
	}
	return scenario.ExitCode(err)
}

// ExitFileEnv names the variable through which a process that started sot
// (sot mcp) asks to be told its exit code: sot writes it, as a decimal
// line, to the file the variable names, so that it is known even when the
// process that started sot is gone by then.
const ExitFileEnv = "SOT_EXIT_FILE"

// RecordExit writes code where ExitFileEnv asks for it, creating the file
// and never following a symlink at its name.
func RecordExit(getenv func(string) string, code int) {
	p := getenv(ExitFileEnv)
	if p == "" {
		return
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|noFollow, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintf(f, "%d\n", code)
	f.Close()
}
