package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/llm/llmtest"
)

// actionRun is one run of the action's review step, as the runner would
// run it for a pull_request event.
type actionRun struct {
	code            int
	log             string
	summary, output string
}

// firstLine is the summary's first line.
func (r actionRun) firstLine() string { return strings.SplitN(r.summary, "\n", 2)[0] }

// outputs parses the step's outputs.
func (r actionRun) outputs() map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(r.output, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			m[k] = v
		}
	}
	return m
}

// runAction plays a pull_request event from main to the repository's HEAD
// through action/review.sh, with this test binary as sot against srv.
func runAction(t *testing.T, repo string, srv *llmtest.Server, runID string, inputs map[string]string) actionRun {
	t.Helper()
	tmp := t.TempDir()
	exe, _ := os.Executable()
	sotBin := filepath.Join(tmp, "sot")
	os.WriteFile(sotBin, []byte("#!/bin/sh\nexec "+exe+" \"$@\"\n"), 0o755)
	rev := func(r string) string {
		out, err := exec.Command("git", "-C", repo, "rev-parse", r).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	base, head := rev("main"), rev("HEAD")
	event, _ := json.Marshal(map[string]any{"pull_request": map[string]any{"number": 7, "base": map[string]any{"sha": base}, "head": map[string]any{"sha": head}}})
	eventPath, summary, output := filepath.Join(tmp, "event.json"), filepath.Join(tmp, "summary.md"), filepath.Join(tmp, "output")
	os.WriteFile(eventPath, event, 0o644)
	script, _ := filepath.Abs(filepath.Join("..", "..", "action", "review.sh"))
	cmd := exec.Command("bash", script)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), sotEnv(repo, srv)...)
	cmd.Env = append(cmd.Env, "SOT_BIN="+sotBin, "GITHUB_EVENT_NAME=pull_request", "GITHUB_EVENT_PATH="+eventPath, "GITHUB_STEP_SUMMARY="+summary,
		"GITHUB_OUTPUT="+output, "GITHUB_RUN_ID="+runID, "GITHUB_RUN_ATTEMPT=1",
		// What the runner evaluates from action.yml's defaults for this event.
		"INPUT_BASE="+base, "INPUT_HEAD="+head, "INPUT_SINCE=auto", "INPUT_FAIL_ON=must-fix", "INPUT_PERSPECTIVES=none", "INPUT_SPECIALISTS=security")
	for k, v := range inputs {
		cmd.Env = append(cmd.Env, "INPUT_"+strings.ToUpper(strings.ReplaceAll(k, "-", "_"))+"="+v)
	}
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	err := cmd.Run()
	s, _ := os.ReadFile(summary)
	o, _ := os.ReadFile(output)
	return actionRun{code: exitCode(err), log: log.String(), summary: string(s), output: string(o)}
}

// commitAll commits the repository's changes.
func commitAll(t *testing.T, repo, msg string) {
	t.Helper()
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-qm", msg}} {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// prRepo is a repository whose branch feature changes app.go from main.
func prRepo(t *testing.T) string {
	t.Helper()
	repo := gitRepo(t) // main, with app.go changed in the working tree
	os.WriteFile(filepath.Join(repo, ".gitignore"), []byte(".cache/\n.config/\n.sot/\n"), 0o644)
	cmd := exec.Command("git", "-C", repo, "checkout", "-qb", "feature")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	commitAll(t, repo, "the change")
	// A configuration that gives a failing call no second try, so that an
	// injected rate limit ends the call at once.
	cfg := filepath.Join(repo, ".config", "sot")
	os.MkdirAll(cfg, 0o755)
	os.WriteFile(filepath.Join(cfg, "config.yaml"), []byte("retries: 0\n"), 0o644)
	return repo
}

// The action's review step on a pull request: a review passes and says
// so first; a second push is re-reviewed from the last review; a partial
// review fails the step unless allowed, and then says so first; a pull
// request of a binary file alone says what was skipped and does not pass.
func TestActionReviewStep(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	t.Run("a pull request and a second push", func(t *testing.T) {
		repo := prRepo(t)
		srv := llmtest.NewServer(llmtest.Config{})
		defer srv.Close()
		r := runAction(t, repo, srv, "100", nil)
		out := r.outputs()
		if r.code != 0 || out["verdict"] != "passed" || !strings.HasPrefix(r.firstLine(), "**sot review passed.**") {
			t.Fatalf("exit %d, outputs %v, summary starts %q\n%s", r.code, out, r.firstLine(), r.log)
		}
		if !strings.Contains(r.summary, "# Review Synthesis") {
			t.Error("the job summary lacks the synthesis")
		}
		if _, err := os.Stat(filepath.Join(repo, out["sarif"])); err != nil || out["sarif"] == "" {
			t.Errorf("the SARIF output %q: %v", out["sarif"], err)
		}
		calls := srv.Count()

		os.WriteFile(filepath.Join(repo, "more.go"), []byte("package app\n\nfunc Neg(a int) int { return -a }\n"), 0o644)
		commitAll(t, repo, "a second push")
		r = runAction(t, repo, srv, "101", nil)
		if r.code != 0 || !strings.Contains(r.summary, "Re-review: the changes since review") {
			t.Fatalf("the second push: exit %d, summary %q\n%s", r.code, r.summary, r.log)
		}
		if srv.Count() == calls {
			t.Error("the second push called no model")
		}

		r = runAction(t, repo, srv, "102", nil)
		if r.code != 0 || r.outputs()["verdict"] != "no-changes" || !strings.Contains(r.firstLine(), "nothing new to review") {
			t.Errorf("a run with nothing pushed since: exit %d, %v, %q", r.code, r.outputs(), r.firstLine())
		}
	})
	t.Run("a partial review", func(t *testing.T) {
		repo := prRepo(t)
		srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{System: "You are the testing specialist", Fault: llmtest.Fault429}}})
		defer srv.Close()
		r := runAction(t, repo, srv, "200", map[string]string{"specialists": "security,testing"})
		if r.code != 3 || r.outputs()["verdict"] != "partial" || !strings.Contains(r.firstLine(), "partial, so the check fails") {
			t.Fatalf("exit %d, outputs %v, summary starts %q\n%s", r.code, r.outputs(), r.firstLine(), r.log)
		}
		r = runAction(t, repo, srv, "201", map[string]string{"specialists": "security,testing", "allow-partial": "true", "since": "none"})
		if r.code != 0 || r.outputs()["verdict"] != "partial-allowed" || !strings.HasPrefix(r.firstLine(), "**Partial review, allowed by allow-partial") {
			t.Fatalf("with allow-partial: exit %d, outputs %v, summary starts %q\n%s", r.code, r.outputs(), r.firstLine(), r.log)
		}
	})
	t.Run("a binary file alone", func(t *testing.T) {
		repo := prRepo(t)
		exec.Command("git", "-C", repo, "reset", "-q", "--hard", "main").Run()
		os.WriteFile(filepath.Join(repo, "logo.png"), []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00"), 0o644)
		commitAll(t, repo, "a binary file")
		srv := llmtest.NewServer(llmtest.Config{})
		defer srv.Close()
		r := runAction(t, repo, srv, "300", nil)
		if r.code == 0 || r.outputs()["verdict"] == "passed" || !strings.Contains(r.summary, "logo.png") || srv.Count() != 0 {
			t.Fatalf("exit %d, outputs %v, %d calls, summary %q\n%s", r.code, r.outputs(), srv.Count(), r.summary, r.log)
		}
	})
}

// actionlint passes on the example workflow and on a workflow that uses
// the action with every input it declares.
func TestActionLints(t *testing.T) {
	lint, err := exec.LookPath("actionlint")
	if err != nil {
		if os.Getenv("SOT_REQUIRE_ACTIONLINT") == "1" {
			t.Fatal("actionlint is not on PATH: go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12")
		}
		t.Skip("actionlint is not on PATH")
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".github", "workflows"), 0o755)
	action, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "action.yml"), action, 0o644)
	example, err := os.ReadFile(filepath.Join("..", "..", "examples", "github", "sot-review.yml"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, ".github", "workflows", "example.yml"), example, 0o644)
	// The example with the action as a local one, so that actionlint checks
	// its inputs against action.yml.
	local := strings.Replace(string(example), "uses: sotlabs/sot@v1", "uses: ./", 1)
	local = strings.Replace(local, "max-cost: \"2\"", "max-cost: \"2\"\n          allow-partial: \"false\"\n          since: auto\n          args: --no-tools", 1)
	os.WriteFile(filepath.Join(dir, ".github", "workflows", "local.yml"), []byte(local), 0o644)
	exec.Command("git", "-C", dir, "init", "-q").Run()
	cmd := exec.Command(lint, "-no-color")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("actionlint: %v\n%s", err, out)
	}
}

// The action's first step builds sot from the action's own source and
// puts it on the PATH of the steps after it.
func TestActionInstallStep(t *testing.T) {
	if testing.Short() {
		t.Skip("builds sot")
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	tmp := t.TempDir()
	ghPath := filepath.Join(tmp, "path")
	cmd := exec.Command("bash", filepath.Join(root, "action", "install.sh"))
	cmd.Env = append(os.Environ(), "SOT_ACTION_PATH="+root, "RUNNER_TEMP="+tmp, "GITHUB_PATH="+ghPath)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "go") {
		t.Errorf("install.sh did not print the version it built: %s", out)
	}
	dir, _ := os.ReadFile(ghPath)
	bin := filepath.Join(strings.TrimSpace(string(dir)), "sot")
	if v, err := exec.Command(bin, "version").CombinedOutput(); err != nil {
		t.Errorf("the sot on GITHUB_PATH (%s): %v\n%s", bin, err, v)
	}
}
