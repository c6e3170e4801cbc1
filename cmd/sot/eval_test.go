package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/eval"
	"github.com/sotlabs/sot/llm/llmtest"
)

// evalModel is a fake model for sot eval: every reviewer, specialist or
// general, reports the planted markers its material shows (BUGA as an
// injection at app.go:4, NOISE as a naming nit at hello.go:3).
func evalModel(rec *llmtest.Recorded) llmtest.Reply {
	text := rec.System
	for _, m := range rec.Messages {
		text += "\n" + m.Text
	}
	findings := []any{}
	add := func(file string, line int, category, claim string) {
		findings = append(findings, map[string]any{"finding": claim, "severity": "should-fix", "confidence": "HIGH", "category": category,
			"grounds": file + " says so", "file": file, "start_line": line, "end_line": line, "section": "", "warrant": "It matters.",
			"rebuttal_conditions": "It does not.", "suggested_verification": "Look.", "perspective": ""})
	}
	if strings.Contains(text, "BUGA") {
		add("app.go", 4, "SQL injection", "The name is concatenated into the query.")
	}
	if strings.Contains(text, "NOISE") {
		add("hello.go", 3, "naming", "Hello is a vague name.")
	}
	return llmtest.Reply{JSON: map[string]any{"examined": "the change", "findings": findings}}
}

// sot eval review over three cases (one defect found, one missed, one
// clean change with a false finding) in three modes: the report's figures
// are the ones the fake model's findings make, it is written as Markdown
// and JSON, and running it again pays for nothing.
func TestEvalReview(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".git"), 0o755)
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{
		{System: "triage lead", JSON: map[string]any{"clusters": []any{}, "narrative": ""}},
		{System: "# You are the", Respond: evalModel},
	}})
	defer srv.Close()
	cases, _ := filepath.Abs(filepath.Join("testdata", "eval-cases"))
	args := []string{"eval", "review", "--cases", cases, "--name", "t", "--modes", "sot,single,self-consistency", "--specialists", "security,testing", "--json"}
	cmd := sotCmd(dir, srv, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sot eval review: %v\n%s%s", err, out, stderr.String())
	}
	var rep eval.Report
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("eval.json: %v\n%s", err, out)
	}
	if rep.Cases != 3 || rep.Defects != 2 || rep.Clean != 1 || len(rep.Modes) != 4 {
		t.Fatalf("report: %d cases, %d defects, %d clean, %d modes", rep.Cases, rep.Defects, rep.Clean, len(rep.Modes))
	}
	for _, m := range rep.Modes {
		f := m.Figures
		if f.Found != 1 || f.Recall.Value != 0.5 || f.FalsePerCleanCase.Value != 1 || f.Precision.Value != 0.5 || f.Failed != 0 {
			t.Errorf("%s: found %d, recall %v, precision %v, false per clean case %v, failed %d", m.Name, f.Found, f.Recall.Value, f.Precision.Value, f.FalsePerCleanCase.Value, f.Failed)
		}
		if f.CostUSD <= 0 {
			t.Errorf("%s spent nothing", m.Name)
		}
	}
	if s := rep.Modes[0].Specialists; len(s) == 0 {
		t.Error("the society's specialists have no figures of their own")
	}
	md, err := os.ReadFile(filepath.Join(dir, ".sot", "eval", "t", "EVAL.md"))
	if err != nil || !strings.Contains(string(md), "| sot | 50% [") || !strings.Contains(string(md), "| t-clean | clean: 1 false |") {
		t.Errorf("EVAL.md: %v\n%s", err, md)
	}
	if page, err := os.ReadFile(filepath.Join(dir, ".sot", "eval", "t", "eval.html")); err != nil || !strings.Contains(string(page), "<svg") {
		t.Errorf("eval.html: %v", err)
	}
	calls := srv.Count()
	if out, err := sotCmd(dir, srv, args...).CombinedOutput(); err != nil {
		t.Fatalf("again: %v\n%s", err, out)
	}
	if srv.Count() != calls {
		t.Errorf("running the evaluation again made %d calls; its reviews are journaled", srv.Count()-calls)
	}
}
