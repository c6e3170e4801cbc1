package review

import (
	"fmt"
	"slices"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/review/report"
	"github.com/sotlabs/sot/review/synthesis"
)

// FailedError: no specialist came back, so there is no review to speak of.
type FailedError struct{ Calls int }

func (e *FailedError) Error() string {
	return fmt.Sprintf("the review failed: none of the %d specialist call(s) succeeded (see REVIEW-SYNTHESIS.md; sot doctor checks that each model answers)", e.Calls)
}

// GateError: the review holds open findings at or above the gate's
// severity (--fail-on).
type GateError struct {
	Count  int
	FailOn string
}

func (e *GateError) Error() string {
	return fmt.Sprintf("%d finding(s) at or above %s (--fail-on %s)", e.Count, e.FailOn, e.FailOn)
}

// PartialError: the review finished without some of its parts (exit 3).
type PartialError = scenario.PartialError

// CheckFailOn checks a gate's severity: must-fix, should-fix, consider or
// never.
func CheckFailOn(failOn string) error {
	switch failOn {
	case "never", string(finding.MustFix), string(finding.ShouldFix), string(finding.Consider):
		return nil
	}
	return &engine.UserError{Msg: fmt.Sprintf("--fail-on %q: use must-fix, should-fix, consider or never", failOn)}
}

// Verdict is what a finished review means for whoever gates on it (a CI
// step, a server's status): nil when it passed, else a *FailedError when
// no specialist came back, a *GateError when open findings reach failOn
// (a finding the user dismissed no longer counts), or a *PartialError when
// parts are missing, in that order of precedence. failOn is a severity or
// "never".
func (out *Outcome) Verdict(failOn string) error {
	if err := CheckFailOn(failOn); err != nil {
		return err
	}
	if out.Completed == 0 && out.Stopped == nil {
		return &FailedError{Calls: len(out.Plan.Tasks)}
	}
	if failOn != "never" {
		sev, _ := finding.ParseSeverity(failOn)
		open := *out.Result
		open.Items = slices.DeleteFunc(slices.Clone(open.Items), func(it synthesis.Item) bool {
			return it.Outcome != nil && it.Outcome.Status == Dismissed
		})
		if n := report.Summarize(&open).AtLeast(sev); n > 0 {
			return &GateError{Count: n, FailOn: failOn}
		}
	}
	if out.Result.Partial() {
		return &PartialError{Result: "the review", Missing: len(out.Result.Missing), See: synthesisFile}
	}
	return nil
}
