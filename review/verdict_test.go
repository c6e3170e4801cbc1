package review

import (
	"errors"
	"testing"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/review/synthesis"
)

// The verdict a gate acts on: no specialist back fails; open findings at
// the gate fail, dismissed ones do not; a partial review is partial; in
// that order.
func TestVerdict(t *testing.T) {
	item := func(sev finding.Severity, dismissed bool) synthesis.Item {
		it := synthesis.Item{Severity: sev}
		if dismissed {
			it.Outcome = &synthesis.Outcome{Status: Dismissed}
		}
		return it
	}
	plan := &Plan{Tasks: nil}
	tests := []struct {
		name      string
		out       Outcome
		failOn    string
		want      any
		wantError bool
	}{
		{"clean", Outcome{Completed: 2, Result: &synthesis.Result{}}, "must-fix", nil, false},
		{"nothing came back", Outcome{Completed: 0, Result: &synthesis.Result{}}, "never", &FailedError{}, true},
		{"a must-fix at the gate", Outcome{Completed: 2, Result: &synthesis.Result{Items: []synthesis.Item{item(finding.MustFix, false)}}}, "should-fix", &GateError{}, true},
		{"dismissed", Outcome{Completed: 2, Result: &synthesis.Result{Items: []synthesis.Item{item(finding.MustFix, true)}}}, "must-fix", nil, false},
		{"below the gate", Outcome{Completed: 2, Result: &synthesis.Result{Items: []synthesis.Item{item(finding.Consider, false)}}}, "should-fix", nil, false},
		{"partial", Outcome{Completed: 1, Result: &synthesis.Result{Missing: []synthesis.Missing{{Specialist: "security"}}}}, "never", &PartialError{}, true},
		{"gate over partial", Outcome{Completed: 1, Result: &synthesis.Result{Items: []synthesis.Item{item(finding.MustFix, false)}, Missing: []synthesis.Missing{{Specialist: "security"}}}}, "must-fix", &GateError{}, true},
		{"bad gate", Outcome{Completed: 1, Result: &synthesis.Result{}}, "Must_Fix", &engine.UserError{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.out.Plan = plan
			err := tt.out.Verdict(tt.failOn)
			if (err != nil) != tt.wantError {
				t.Fatalf("Verdict = %v, want an error: %v", err, tt.wantError)
			}
			switch tt.want.(type) {
			case *FailedError:
				var e *FailedError
				if !errors.As(err, &e) {
					t.Errorf("Verdict = %v, want a FailedError", err)
				}
			case *GateError:
				var e *GateError
				if !errors.As(err, &e) || e.Count != 1 {
					t.Errorf("Verdict = %v, want a GateError counting 1", err)
				}
			case *PartialError:
				var e *PartialError
				if !errors.As(err, &e) || e.Missing != 1 {
					t.Errorf("Verdict = %v, want a PartialError missing 1", err)
				}
			case *engine.UserError:
				if !engine.IsUserError(err) {
					t.Errorf("Verdict = %v, want a user error", err)
				}
			}
		})
	}
}
