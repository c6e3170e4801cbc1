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

// Input that is not answers is a usage error that says where the mistake
// is and what sot conflicts reads, and nothing is printed.
func TestBadInput(t *testing.T) {
	tests := []struct {
		name, in  string
		threshold float64
		want      string
	}{
		{"not JSON", "[{\"response\": \"a\"},\n oops]", 0.75, "standard input:2:2: not valid JSON"},
		{"empty", "  \n", 0.75, "standard input is empty; sot conflicts reads a JSON array of answers"},
		{"no answers", "[]", 0.75, "standard input has no answers; sot conflicts compares two or more"},
		{"a string", `[{"response": "a"}, "b"]`, 0.75, `standard input: answer 2 is a string, not an object like {"response": "..."}`},
		{"threshold", `[{"response": "a"}]`, 1.5, "--threshold 1.5 is not a similarity from 0 to 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			o := &Options{IO: &cmdutil.IOStreams{In: strings.NewReader(tt.in), Out: &out}, Input: "-", Threshold: tt.threshold, Keep: 200}
			err := Run(o)
			if cmdutil.Code(err) != cmdutil.ExitUsage || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v (exit %d); want a usage error saying %q", err, cmdutil.Code(err), tt.want)
			}
			if out.Len() != 0 {
				t.Errorf("printed %q", out.String())
			}
		})
	}
}

// Two answers, one agreeing and one objecting, make one pair: a conflict
// that names both sources, read from standard input.
func TestConflictFromStandardInput(t *testing.T) {
	in := `[{"response": "The pilot confirms the savings and also supports the plan.", "agentName": "Q1 planning", "perspective": "Advocate"},
 {"response": "However, the pilot exposed a risk, but nobody owns the concern.", "agentName": "Q2 review", "perspective": {"roleLabel": "Critic"}}]`
	var out bytes.Buffer
	o := &Options{IO: &cmdutil.IOStreams{In: strings.NewReader(in), Out: &out}, Input: "-", Threshold: 0.75, Keep: 200}
	if err := Run(o); err != nil {
		t.Fatal(err)
	}
	var a struct {
		HasConflicts bool   `json:"hasConflicts"`
		Summary      string `json:"summary"`
		Conflicts    []struct {
			Source1 struct {
				AgentName string `json:"agentName"`
			} `json:"source1"`
			Source2 struct {
				AgentName   string `json:"agentName"`
				Perspective string `json:"perspective"`
			} `json:"source2"`
		} `json:"conflicts"`
	}
	if err := json.Unmarshal(out.Bytes(), &a); err != nil {
		t.Fatalf("printed %q: %v", out.String(), err)
	}
	if !a.HasConflicts || len(a.Conflicts) != 1 || a.Conflicts[0].Source1.AgentName != "Q1 planning" ||
		a.Conflicts[0].Source2.AgentName != "Q2 review" || a.Conflicts[0].Source2.Perspective != "Critic" {
		t.Errorf("printed:\n%s", out.String())
	}
	if !strings.HasPrefix(a.Summary, "1 tension(s) detected") {
		t.Errorf("summary %q", a.Summary)
	}
}
