package review

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/safedir"
	"github.com/sotlabs/sot/persona"
	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/review/synthesis"
)

// Outcome statuses of a resolved finding.
const (
	Accepted  = "accepted"
	Dismissed = "dismissed"
	Deferred  = "deferred"
)

// Resolution is one recorded decision about a finding. The records are kept
// with the run (resolutions.jsonl), one per decision, so that later we can
// measure which specialists' findings users accept.
type Resolution struct {
	RunID      string   `json:"run_id"`
	Item       string   `json:"item"`
	Severity   string   `json:"severity"`
	Confidence string   `json:"confidence"`
	Grounding  string   `json:"grounding"`
	FindingIDs []string `json:"finding_ids"`
	// Claim is the item's claim when it was resolved: a later run of the
	// same review applies the outcome only to the same finding.
	Claim       string    `json:"claim,omitempty"`
	Specialists []string  `json:"specialists"`
	Status      string    `json:"status"`
	Reason      string    `json:"reason,omitempty"`
	By          string    `json:"by"` // "user" or "smart" (accepted without asking)
	At          time.Time `json:"at"`
}

const resolutionsFile = "resolutions.jsonl"

// applyResolutions puts the outcomes recorded in dir's resolutions.jsonl
// back on the items of res, so that a run rendered again (a re-run, a new
// output format) keeps the user's decisions. A record counts for an item of
// the same run with the same id, the same findings and the same claim (a
// fresh run can put a different finding under the same ids); the latest
// wins.
func applyResolutions(d *safedir.Dir, res *synthesis.Result) error {
	b, err := d.ReadFile(resolutionsFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the recorded resolutions: %w", err)
	}
	latest := map[string]Resolution{}
	for _, line := range strings.Split(string(b), "\n") {
		var rec Resolution
		if strings.TrimSpace(line) == "" || json.Unmarshal([]byte(line), &rec) != nil || rec.RunID != res.RunID {
			continue // a torn last line, or another run's record
		}
		latest[rec.Item] = rec
	}
	for i := range res.Items {
		it := &res.Items[i]
		if rec, ok := latest[it.ID]; ok && slices.Equal(rec.FindingIDs, it.SourceIDs()) && rec.Claim == it.Claim {
			it.Outcome = &synthesis.Outcome{Status: rec.Status, Reason: rec.Reason}
		}
	}
	return nil
}

// openAppend opens one of the run's records (the resolutions, the moderator's
// exchanges) for appending, creating it if needed. A symlink under its name,
// or anywhere in the run's directory, is refused rather than followed.
func (r *Run) openAppend(name string) (*os.File, error) {
	d, err := r.open()
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
}

// autoAccept is smart mode's rule: a must-fix or should-fix finding with
// HIGH confidence and Direct grounding is accepted without asking.
func autoAccept(it *synthesis.Item) bool {
	return (it.Severity == finding.MustFix || it.Severity == finding.ShouldFix) && it.Confidence == finding.High && it.Grounding == synthesis.Direct
}

// Resolve walks the run's actionable findings and records an outcome for
// each: accepted, dismissed with a reason, or deferred. Findings already
// resolved are left alone, so an interrupted walk can be resumed. In smart
// mode the findings smart mode trusts are accepted without asking.
func (r *Run) Resolve(ask persona.Asker, out io.Writer, version string) (int, error) {
	smart := r.rec.Context.Interactive == persona.InteractiveSmart
	f, err := r.openAppend(resolutionsFile)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	recorded := 0
	clock := engine.Hooks{Now: r.Now} // the caller's clock, the system's when it set none
	record := func(it *synthesis.Item, status, reason, by string) error {
		it.Outcome = &synthesis.Outcome{Status: status, Reason: reason}
		rec := Resolution{RunID: r.Result.RunID, Item: it.ID, Severity: string(it.Severity), Confidence: string(it.Confidence),
			Grounding: string(it.Grounding), FindingIDs: it.SourceIDs(), Claim: it.Claim, Status: status, Reason: reason, By: by, At: clock.Time().UTC()}
		seen := map[string]bool{}
		for _, s := range it.Sources {
			if !seen[s.Specialist] {
				seen[s.Specialist] = true
				rec.Specialists = append(rec.Specialists, s.Specialist)
			}
		}
		b, _ := json.Marshal(rec)
		if _, err := f.Write(append(b, '\n')); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		recorded++
		return r.Save(version)
	}
	items := r.Result.Items
	pending := 0
	for i := range items {
		if items[i].Outcome == nil {
			pending++
		}
	}
	if pending == 0 {
		fmt.Fprintln(out, "Every finding of this review is already resolved.")
		return 0, nil
	}
	fmt.Fprintf(out, "Resolving %d finding(s) of review %s. Answer accept, dismiss (with a reason), defer, skip or quit.\n", pending, r.Result.RunID)
	for i := range items {
		it := &items[i]
		if it.Outcome != nil {
			continue
		}
		if smart && autoAccept(it) {
			fmt.Fprintf(out, "%s [%s, %s, %s] accepted without asking (smart mode): %s\n", it.ID, it.Severity, it.Confidence, it.Grounding, it.Claim)
			if err := record(it, Accepted, "HIGH confidence and direct grounding", "smart"); err != nil {
				return recorded, err
			}
			continue
		}
		fmt.Fprintf(out, "\n%s [%s, %s, %s grounding] %s\n", it.ID, it.Severity, it.Confidence, it.Grounding, it.Claim)
		for _, s := range it.Sources {
			fmt.Fprintf(out, "  %s (%s): %s\n", s.ID, s.Source(), flat(s.Grounds))
		}
		if it.Decision != nil {
			fmt.Fprintf(out, "  Trade-off decided by %s: %s\n", it.Decision.By, it.Decision.Choice)
		}
		choice, err := ask("Outcome for "+it.ID+"?", []string{"accept", "dismiss", "defer", "skip", "quit"})
		if errors.Is(err, persona.ErrAborted) {
			break // no more answers: stop, keeping what was recorded
		}
		if err != nil {
			return recorded, err
		}
		switch choice {
		case "accept":
			err = record(it, Accepted, "", "user")
		case "defer":
			err = record(it, Deferred, "", "user")
		case "dismiss":
			var reason string
			for strings.TrimSpace(reason) == "" {
				reason, err = ask("Why dismiss "+it.ID+"? (a reason is required)", nil)
				if err != nil {
					return recorded, err
				}
			}
			err = record(it, Dismissed, strings.TrimSpace(reason), "user")
		case "quit":
			return recorded, nil
		}
		if err != nil {
			return recorded, err
		}
	}
	return recorded, nil
}
