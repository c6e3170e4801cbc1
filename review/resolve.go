package review

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/safedir"
	"github.com/sotlabs/sot/persona"
	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/review/history"
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

// record appends one decision about it to f (the run's resolutions),
// synced before the run's result is saved with it.
func (r *Run) record(f *os.File, it *synthesis.Item, status, reason, by, version string) error {
	clock := engine.Hooks{Now: r.Now} // the caller's clock, the system's when it set none
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
	if err := r.recordForProject(it, rec); err != nil {
		return err
	}
	return r.Save(version)
}

// projectDecision is one line of the project's record of decisions
// (.sot/resolutions.jsonl): a decision by the finding's fingerprint, so
// that a later review of the same work keeps a dismissed finding out.
type projectDecision struct {
	history.Dismissal
	Status string    `json:"status"`
	At     time.Time `json:"at"`
	// What sot stats counts: the item, the findings under it, who made
	// them, and who decided.
	Item        string   `json:"item"`
	Severity    string   `json:"severity,omitempty"`
	FindingIDs  []string `json:"finding_ids,omitempty"`
	Specialists []string `json:"specialists,omitempty"`
	By          string   `json:"by,omitempty"`
}

// recordForProject adds a decision about it to the project's record
// (with its fingerprint when it points at lines of a file).
func (r *Run) recordForProject(it *synthesis.Item, rec Resolution) error {
	if r.top == "" {
		return nil
	}
	d, err := safedir.Open(r.top, filepath.Join(r.top, filepath.Dir(projectResolutions)))
	if err != nil {
		return fmt.Errorf("the project's resolutions: %w", err)
	}
	defer d.Close()
	f, err := d.OpenFile(filepath.Base(projectResolutions), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("the project's resolutions: %w", err)
	}
	defer f.Close()
	line, _ := json.Marshal(projectDecision{Dismissal: history.Dismissal{Fingerprint: it.Fingerprint, File: it.Location.File, Anchor: it.Anchor,
		Claim: it.Claim, Reason: rec.Reason, RunID: rec.RunID}, Status: rec.Status, At: rec.At,
		Item: rec.Item, Severity: rec.Severity, FindingIDs: rec.FindingIDs, Specialists: rec.Specialists, By: rec.By})
	if _, err := f.Write(append(line, '\n')); err != nil {
		return err
	}
	return f.Sync()
}

// Record records one decision about the finding item (an id such as F1)
// without asking: status is accepted, dismissed (which needs a reason) or
// deferred (accept, dismiss and defer are read the same), and by says who
// decided ("user", or the front end that asked for it). A later decision
// about the same finding replaces the earlier one. A bad id or status is
// an *engine.UserError that names the valid ones.
func (r *Run) Record(item, status, reason, by, version string) (Resolution, error) {
	switch strings.ToLower(strings.TrimSpace(status)) {
	case "accept", Accepted:
		status = Accepted
	case "dismiss", Dismissed:
		status = Dismissed
	case "defer", Deferred:
		status = Deferred
	default:
		return Resolution{}, &engine.UserError{Msg: fmt.Sprintf("status %q: give accepted, dismissed or deferred", status)}
	}
	reason = strings.TrimSpace(reason)
	if status == Dismissed && reason == "" {
		return Resolution{}, &engine.UserError{Msg: "a dismissal needs a reason: say why the finding does not hold"}
	}
	var it *synthesis.Item
	var ids []string
	for i := range r.Result.Items {
		ids = append(ids, r.Result.Items[i].ID)
		if r.Result.Items[i].ID == item {
			it = &r.Result.Items[i]
		}
	}
	if it == nil {
		return Resolution{}, &engine.UserError{Msg: fmt.Sprintf("review %s has no finding %q; its findings are %s", r.Result.RunID, item, strings.Join(ids, ", "))}
	}
	f, err := r.openAppend(resolutionsFile)
	if err != nil {
		return Resolution{}, err
	}
	defer f.Close()
	if err := r.record(f, it, status, reason, by, version); err != nil {
		return Resolution{}, err
	}
	return Resolution{RunID: r.Result.RunID, Item: it.ID, Claim: it.Claim, Status: status, Reason: reason, By: by}, nil
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
	record := func(it *synthesis.Item, status, reason, by string) error {
		if err := r.record(f, it, status, reason, by, version); err != nil {
			return err
		}
		recorded++
		return nil
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
