package review

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/review/synthesis"
)

// A recorded outcome returns to the item it was given for, and only to it:
// a fresh run of the same review can put another finding under the same
// ids, and a dismissal must not carry over to it.
func TestApplyResolutions(t *testing.T) {
	dir := t.TempDir()
	var lines []byte
	for _, rec := range []Resolution{
		{RunID: "r1", Item: "S1", FindingIDs: []string{"security.1"}, Claim: "The cookie lacks Secure.", Status: Accepted},
		{RunID: "r1", Item: "S1", FindingIDs: []string{"security.1"}, Claim: "The cookie lacks Secure.", Status: Dismissed, Reason: "behind TLS"},
		{RunID: "r0", Item: "S2", FindingIDs: []string{"testing.1"}, Claim: "Refresh has no test.", Status: Deferred},
	} {
		b, _ := json.Marshal(rec)
		lines = append(append(lines, b...), '\n')
	}
	lines = append(lines, `{"run_id":"r1","item":"S3"`...) // a torn last line
	os.WriteFile(filepath.Join(dir, resolutionsFile), lines, 0o644)

	item := func(id, src, claim string) synthesis.Item {
		return synthesis.Item{ID: id, Claim: claim, Sources: []finding.Finding{{ID: src}}}
	}
	tests := []struct {
		name string
		it   synthesis.Item
		want string // the status applied, "" for none
	}{
		{"the same finding: the latest record", item("S1", "security.1", "The cookie lacks Secure."), Dismissed},
		{"another finding under the same ids", item("S1", "security.1", "SQL injection in the login handler."), ""},
		{"other findings", item("S1", "security.2", "The cookie lacks Secure."), ""},
		{"another run's record", item("S2", "testing.1", "Refresh has no test."), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &synthesis.Result{RunID: "r1", Items: []synthesis.Item{tt.it}}
			if err := applyResolutions(openDir(t, dir).Dir, res); err != nil {
				t.Fatal(err)
			}
			got := ""
			if o := res.Items[0].Outcome; o != nil {
				got = o.Status
			}
			if got != tt.want {
				t.Errorf("outcome %q, want %q", got, tt.want)
			}
		})
	}
}
