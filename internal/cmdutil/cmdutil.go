// Package cmdutil holds what every sot command shares: the I/O streams, the
// factory that loads configuration and builds the model stack, and the
// errors that decide the process exit code.
package cmdutil

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Exit codes. CI acts on these.
const (
	ExitOK      = 0 // success
	ExitFailure = 1 // a failure, or findings at or above --fail-on
	ExitUsage   = 2 // bad flags, arguments or configuration
	ExitPartial = 3 // the run finished without some of its parts
)

// IOStreams are a command's standard streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// TTY reports whether Out is a terminal (live status lines, colour).
	TTY bool
	// InTTY reports whether In is a terminal (interactive prompts).
	InTTY bool
}

// System returns the process's streams.
func System() *IOStreams {
	return &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, TTY: isTerminal(os.Stdout), InTTY: isTerminal(os.Stdin)}
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
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

// Code returns the exit code for an error returned by a command.
func Code(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return ExitFailure
}
