package scenario

import (
	"errors"
	"fmt"

	"github.com/sotlabs/sot/engine"
)

// Exit codes for what a run came to, the same from every front end. CI
// acts on them.
const (
	ExitOK      = 0 // the run finished whole and passed
	ExitFailure = 1 // the run failed, or its result fails a gate
	ExitUsage   = 2 // the caller's mistake: flags, configuration, a key
	ExitPartial = 3 // the run finished without some of its parts
)

// PartialError: the run wrote its result without some of its parts. The
// result is there, and says what is missing; the same command finishes it,
// replaying what was done.
type PartialError struct {
	// Result names what is partial: "the review", "the answer".
	Result string
	// Missing counts the parts missing.
	Missing int
	// See is the file that lists them.
	See string
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("%s is partial: %d part(s) missing (see %s)", e.Result, e.Missing, e.See)
}

// ExitCode is the exit code for an error a run returned: ExitOK for nil,
// ExitPartial for a *PartialError, ExitUsage for an *engine.UserError and
// ExitFailure for anything else (a run with no result, a gate it failed,
// an interruption the front end did not map itself).
func ExitCode(err error) int {
	var partial *PartialError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &partial):
		return ExitPartial
	case engine.IsUserError(err):
		return ExitUsage
	}
	return ExitFailure
}
