package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sotlabs/sot/llm/llmtest"
)

// gitRepo makes a repository with one commit and an uncommitted change.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".gitignore", "out*/\n.cache/\n.config/\n")
	write("app.go", "package app\n\nfunc Add(a, b int) int { return a + b }\n")
	run("init", "-q", "-b", "main")
	run("add", ".")
	run("commit", "-qm", "init")
	write("app.go", "package app\n\nfunc Add(a, b int) int {\n\tif a < 0 {\n\t\treturn b\n\t}\n\treturn a + b\n}\n")
	return dir
}

// sot runs the sot binary (this test binary) in dir.
func sotCmd(dir string, srv *llmtest.Server, args ...string) *exec.Cmd {
	exe, _ := os.Executable()
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), sotEnv(dir, srv)...)
	return cmd
}

// sotEnv is what sotCmd adds to a child's environment: this test binary
// runs as sot, against srv, with its caches and configuration in dir.
func sotEnv(dir string, srv *llmtest.Server) []string {
	return []string{"SOT_TEST_RUN_MAIN=1", "SOT_MODEL=openai:gpt-4.1", "OPENAI_BASE_URL=" + srv.OpenAIBaseURL(),
		"OPENAI_API_KEY=sk-crash-0123456789", "XDG_CACHE_HOME=" + filepath.Join(dir, ".cache"), "XDG_CONFIG_HOME=" + filepath.Join(dir, ".config"), "HOME=" + dir}
}

var usageLine = regexp.MustCompile(`(?m)^- Usage: .*$`)

func synthesis(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "REVIEW-SYNTHESIS.md"))
	if err != nil {
		t.Fatal(err)
	}
	return usageLine.ReplaceAllString(string(b), "- Usage: (differs between runs)")
}

// signature identifies a specialist call on the wire.
var signature = regexp.MustCompile(`# You are the ([a-z-]+) specialist[\s\S]*?(?:# Perspective: ([a-z-]+)|# How to report)`)

func TestReviewCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	repo := gitRepo(t)
	srv := llmtest.NewServer(llmtest.Config{Latency: 150 * time.Millisecond})
	defer srv.Close()
	args := []string{"review", "--seed", "42", "--perspectives", "none", "--concurrency", "2", "--no-cache"}

	// An uninterrupted run, for comparison.
	if out, err := sotCmd(repo, srv, append(args, "--output-dir", "out-a")...).CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, out)
	}
	want := synthesis(t, filepath.Join(repo, "out-a"))
	before := srv.Count()

	// Kill a second run once some calls are journaled.
	cmd := sotCmd(repo, srv, append(args, "--output-dir", "out-b")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(repo, "out-b", "journal.jsonl")
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(journal)
		if n := bytes.Count(b, []byte("\n")); n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the run never got going:\n%s", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, err := os.Stat(filepath.Join(repo, "out-b", "REVIEW-SYNTHESIS.md")); err == nil {
		t.Fatal("the run finished before the kill; nothing was tested")
	}
	journaled, _ := os.ReadFile(journal)

	if out, err := sotCmd(repo, srv, append(args, "--output-dir", "out-b")...).CombinedOutput(); err != nil {
		t.Fatalf("re-run: %v\n%s", err, out)
	}
	// Every specialist call of run b reached the server exactly once, except
	// those still in flight at the kill, which are sent at most twice.
	seen := map[string]int{}
	for _, r := range srv.Requests()[before:] {
		if m := signature.FindStringSubmatch(r.System); m != nil {
			seen[m[1]+"/"+m[2]]++
		}
	}
	for sig, n := range seen {
		label := "review/" + strings.TrimSuffix(sig, "/")
		if n > 1 && strings.Contains(string(journaled), `"label":"`+label+`"`) {
			t.Errorf("%s had finished before the kill but was sent %d times", label, n)
		}
	}
	if got := synthesis(t, filepath.Join(repo, "out-b")); got != want {
		t.Errorf("REVIEW-SYNTHESIS.md after the crash differs from the uninterrupted run:\n--- want\n%s\n--- got\n%s", want, got)
	}
}

// A second process running the same review into the same directory while
// the first is still at it is refused with exit 2, and pays for nothing.
func TestReviewRefusesAConcurrentRun(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	repo := gitRepo(t)
	srv := llmtest.NewServer(llmtest.Config{Latency: 3 * time.Second})
	defer srv.Close()
	args := []string{"review", "--specialists", "security", "--perspectives", "none", "--no-cache", "--output-dir", "out"}
	first := sotCmd(repo, srv, args...)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { first.Process.Kill(); first.Wait() }()
	for deadline := time.Now().Add(20 * time.Second); srv.Count() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first run never sent its call")
		}
	}
	out, err := sotCmd(repo, srv, args...).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), fmt.Sprintf("process %d is running a review into out", first.Process.Pid)) {
		t.Fatalf("second run: %v\n%s\nwant exit 2 naming process %d", err, out, first.Process.Pid)
	}
	if n := srv.Count(); n != 1 {
		t.Errorf("%d requests; the refused run must send none", n)
	}
}
