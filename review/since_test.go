package review

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/review/synthesis"
)

// markerModel answers the security specialist with one finding for each
// planted marker ("BUG1", ...) its material shows, at the line of the
// file where the marker stands in the reviewed version; the lines are set
// per push.
type markerModel struct {
	mu    sync.Mutex
	lines map[string]string // marker -> file:line
}

func (m *markerModel) set(lines map[string]string) {
	m.mu.Lock()
	m.lines = lines
	m.mu.Unlock()
}

var markerRE = regexp.MustCompile(`BUG[0-9]`)

func (m *markerModel) respond(rec *llmtest.Recorded) llmtest.Reply {
	m.mu.Lock()
	defer m.mu.Unlock()
	text := rec.System
	for _, msg := range rec.Messages {
		text += "\n" + msg.Text
	}
	var findings []any
	seen := map[string]bool{}
	for _, mk := range markerRE.FindAllString(text, -1) {
		at, ok := m.lines[mk]
		if !ok || seen[mk] {
			continue
		}
		seen[mk] = true
		file, line, _ := strings.Cut(at, ":")
		var n int
		fmt.Sscan(line, &n)
		findings = append(findings, map[string]any{"finding": "The " + mk + " branch returns the wrong operand.", "severity": "should-fix", "confidence": "HIGH",
			"category": "logic", "grounds": at + " returns the wrong operand", "file": file, "start_line": n, "end_line": n, "section": "",
			"warrant": "Callers get a wrong sum.", "rebuttal_conditions": "The operand is never negative.", "suggested_verification": "Call it with a negative value.", "perspective": ""})
	}
	return llmtest.Reply{JSON: map[string]any{"examined": "the change", "findings": findings}}
}

// pr is a repository with a branch under review, a model that reports
// planted markers, and reviews of the branch against main.
type pr struct {
	tb    testing.TB
	repo  string
	model *markerModel
	srv   *llmtest.Server
}

func newPR(tb testing.TB) *pr {
	tb.Helper()
	p := &pr{tb: tb, repo: tb.TempDir(), model: &markerModel{}}
	p.write(".gitignore", ".sot/\n")
	p.write("app.go", "package app\n\nfunc Add(a, b int) int { return a + b }\n")
	p.write("util.go", "package app\n\nfunc Sub(a, b int) int { return a - b }\n")
	p.git("init", "-q", "-b", "main")
	p.git("add", ".")
	p.git("commit", "-qm", "base")
	p.git("checkout", "-qb", "feature")
	p.srv = llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{
		{System: "You are the security specialist", Respond: p.model.respond},
		{System: "triage lead", JSON: map[string]any{"clusters": []any{}, "narrative": ""}},
	}})
	tb.Cleanup(p.srv.Close)
	return p
}

func (p *pr) git(args ...string) {
	p.tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = p.repo
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
	if out, err := cmd.CombinedOutput(); err != nil {
		p.tb.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func (p *pr) write(name, body string) {
	p.tb.Helper()
	os.MkdirAll(filepath.Dir(filepath.Join(p.repo, name)), 0o755)
	if err := os.WriteFile(filepath.Join(p.repo, name), []byte(body), 0o644); err != nil {
		p.tb.Fatal(err)
	}
}

// review reviews main...HEAD with the security specialist alone, into
// .sot/reviews/<run-id>, where --since auto looks.
func (p *pr) review(since string) *Outcome {
	p.tb.Helper()
	o := benchOptions(p.tb, p.repo, p.srv, "openai:gpt-4.1")
	o.Context.OutputDir = ""
	o.Context.Specialists, o.Context.Perspectives = "security", "none"
	o.Diff, o.Since, o.NoTools = "main...HEAD", since, true
	plan, err := Prepare(context.Background(), o)
	if err != nil {
		p.tb.Fatal(err)
	}
	out, err := Execute(context.Background(), plan, o)
	if err != nil {
		p.tb.Fatal(err)
	}
	return out
}

// A pull request's history of pushes, re-reviewed with --since auto after
// each: a finding on lines no push touched is carried over, not found
// again; one the user dismissed never comes back, even when the model
// reports it again; one whose lines were fixed is reported resolved; and
// each re-review's material is only what changed since the last review.
func TestReReviewSincePushes(t *testing.T) {
	pr := newPR(t)
	write, git, review := pr.write, pr.git, pr.review
	model := pr.model
	claims := func(items []synthesis.Item) map[string]string {
		m := map[string]string{}
		for _, it := range items {
			m[markerRE.FindString(it.Claim)] = it.History + " " + it.Location.String()
		}
		return m
	}

	// Push 1: two findings.
	write("app.go", "package app\n\nfunc Add(a, b int) int {\n\tif a < 0 {\n\t\treturn b // BUG1\n\t}\n\treturn a + b\n}\n")
	write("util.go", "package app\n\nfunc Sub(a, b int) int {\n\treturn b - a // BUG2\n}\n")
	git("commit", "-qam", "push 1")
	model.set(map[string]string{"BUG1": "app.go:5", "BUG2": "util.go:4"})
	first := review("auto") // never reviewed before: the whole change
	if got := claims(first.Result.Items); len(got) != 2 || first.Result.Since != nil {
		t.Fatalf("the first review: %v, since %+v", got, first.Result.Since)
	}
	run, err := LoadRun(first.Plan.OutputDir)
	if err != nil {
		t.Fatal(err)
	}
	var bug2 string
	for _, it := range run.Result.Items {
		if strings.Contains(it.Claim, "BUG2") {
			bug2 = it.ID
		}
	}
	if _, err := run.Record(bug2, "dismiss", "Sub is meant to subtract that way", "user", "test"); err != nil {
		t.Fatal(err)
	}

	// Push 2: a new file, and two lines added above BUG1. The re-review
	// reads only what changed; BUG1 is carried to its new line.
	write("extra.go", "package app\n\nfunc Mul(a, b int) int { return a * b }\n")
	write("app.go", "package app\n\n// Add adds.\n// It has a bug.\nfunc Add(a, b int) int {\n\tif a < 0 {\n\t\treturn b // BUG1\n\t}\n\treturn a + b\n}\n")
	git("add", ".")
	git("commit", "-qm", "push 2")
	model.set(map[string]string{"BUG1": "app.go:7", "BUG2": "util.go:4"})
	second := review("auto")
	if paths := second.Plan.Material.Paths(); strings.Join(paths, ",") != "app.go,extra.go" {
		t.Errorf("the re-review's material is %v, want what push 2 changed", paths)
	}
	if got := claims(second.Result.Items); len(got) != 1 || got["BUG1"] != "carried over app.go:7" {
		t.Errorf("after push 2: %v, want BUG1 carried over to app.go:7", got)
	}
	if len(second.Result.DismissedEarlier) != 1 || !strings.Contains(second.Result.DismissedEarlier[0].Claim, "BUG2") {
		t.Errorf("after push 2, dismissed earlier: %+v", second.Result.DismissedEarlier)
	}

	// Push 3: BUG1 fixed, and a change next to the dismissed BUG2, which
	// the model reports again.
	write("app.go", "package app\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n")
	write("util.go", "package app\n\n// Sub subtracts.\nfunc Sub(a, b int) int {\n\treturn b - a // BUG2\n}\n")
	git("commit", "-qam", "push 3")
	model.set(map[string]string{"BUG2": "util.go:5"})
	third := review("auto")
	if got := claims(third.Result.Items); len(got) != 0 {
		t.Errorf("after push 3: %v, want no finding (BUG1 fixed, BUG2 dismissed)", got)
	}
	if got := claims(third.Result.Resolved); got["BUG1"] != "resolved app.go:7" {
		t.Errorf("after push 3, resolved: %v", got)
	}
	if len(third.Result.DismissedEarlier) != 1 || !strings.Contains(third.Result.DismissedEarlier[0].Claim, "BUG2") {
		t.Errorf("after push 3, dismissed earlier: %+v", third.Result.DismissedEarlier)
	}
	b, _ := os.ReadFile(filepath.Join(third.Plan.OutputDir, synthesisFile))
	for _, want := range []string{"## Resolved Since the Last Review", "## Dismissed Earlier", "Re-review: the changes since review"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("REVIEW-SYNTHESIS.md lacks %q", want)
		}
	}
}
