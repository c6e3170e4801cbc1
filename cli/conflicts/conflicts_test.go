package conflicts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/cli/cmdutil"
)

// answersFile writes n answers, every pair of which conflicts or agrees.
func answersFile(t *testing.T, dir string, n int) string {
	t.Helper()
	var rs []map[string]string
	for i := range n {
		text := fmt.Sprintf("The rollout %d is safe and also confirms the plan.", i)
		if i%2 == 1 {
			text = fmt.Sprintf("However the rollout %d carries a risk, but the plan holds.", i)
		}
		rs = append(rs, map[string]string{"response": text, "agentName": fmt.Sprintf("note %d", i)})
	}
	b, err := json.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "answers.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type analysis struct {
	Conflicts       []json.RawMessage `json:"conflicts"`
	Agreements      []json.RawMessage `json:"agreements"`
	TotalConflicts  int               `json:"totalConflicts"`
	TotalAgreements int               `json:"totalAgreements"`
	Truncated       bool              `json:"truncated"`
}

// --keep bounds the lists and not the counts; --pairs writes every pair
// the counts count, one JSON line each.
func TestKeepAndPairs(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	o := &Options{IO: &cmdutil.IOStreams{Out: &out}, WorkDir: dir, Input: answersFile(t, dir, 30), Threshold: 0.75, Keep: 3, Pairs: "pairs.ndjson"}
	if err := Run(o); err != nil {
		t.Fatal(err)
	}
	var a analysis
	if err := json.Unmarshal(out.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	total := a.TotalConflicts + a.TotalAgreements
	if len(a.Conflicts) != 3 || len(a.Agreements) != 3 || !a.Truncated || total <= 6 {
		t.Errorf("%d conflicts and %d agreements listed of %d, %d; truncated %v", len(a.Conflicts), len(a.Agreements), a.TotalConflicts, a.TotalAgreements, a.Truncated)
	}
	b, err := os.ReadFile(filepath.Join(dir, "pairs.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(b), "\n"); lines != total {
		t.Errorf("pairs.ndjson has %d lines; the analysis counts %d pairs", lines, total)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// --pairs writes nothing through a symlink, and --keep takes no negative
// number.
func TestPairsRefused(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "link.ndjson")); err != nil {
		t.Skip(err)
	}
	in := answersFile(t, dir, 4)
	o := &Options{IO: &cmdutil.IOStreams{Out: &bytes.Buffer{}}, WorkDir: dir, Input: in, Threshold: 0.75, Keep: 200, Pairs: "link.ndjson"}
	if err := Run(o); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("--pairs through a symlink: error %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep me" {
		t.Errorf("the symlink's target was written: %q", b)
	}
	o = &Options{IO: &cmdutil.IOStreams{Out: &bytes.Buffer{}}, WorkDir: dir, Input: in, Threshold: 0.75, Keep: -1}
	if err := Run(o); err == nil || !strings.Contains(err.Error(), "--keep") {
		t.Errorf("--keep -1: error %v", err)
	}
}
