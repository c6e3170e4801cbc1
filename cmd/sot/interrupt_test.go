package main

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sotlabs/sot/llm/llmtest"
)

// Ctrl-C stops a review with exit 130 and prints the command that resumes
// it; running that command finishes the review.
func TestInterruptedReviewSaysHowToResume(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	repo := gitRepo(t)
	srv := llmtest.NewServer(llmtest.Config{Latency: 5 * time.Second})
	defer srv.Close()
	args := []string{"review", "--specialists", "security,testing", "--perspectives", "none", "--output-dir", "out dir"}
	cmd := sotCmd(repo, srv, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); srv.Count() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the review never sent a call:\n%s", stderr.String())
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\n%s", err, stderr.String())
	}
	want := "Resume with: sot review --specialists security,testing --perspectives none --output-dir 'out dir'"
	if !strings.Contains(stderr.String(), want) {
		t.Fatalf("stderr does not say how to resume (%q):\n%s", want, stderr.String())
	}
	srv.SetConfig(llmtest.Config{})
	if out, err := sotCmd(repo, srv, args...).CombinedOutput(); err != nil {
		t.Fatalf("the resumed review: %v\n%s", err, out)
	}
}
