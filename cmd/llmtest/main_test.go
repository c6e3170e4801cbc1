package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestRun(t *testing.T) {
	cfgPath := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(cfgPath, []byte("rules:\n  - reply: scripted\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", "127.0.0.1:0", "--config", cfgPath, "--latency", "1ms", "--first-token", "1ms", "--prefix-cache"}, &out, io.Discard)
	}()
	re := regexp.MustCompile(`export OPENAI_BASE_URL=(\S+)`)
	var base string
	for deadline := time.Now().Add(5 * time.Second); base == ""; time.Sleep(5 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no base URL printed: %q", out.String())
		}
	}
	res, err := http.Post(base+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), "scripted") {
		t.Errorf("answer %s", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ANTHROPIC_BASE_URL=http://127.0.0.1:", "OPENAI_API_KEY=test-key", "served 1 requests"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRunErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--fault-rate", "2"},
		{"--first-token", "-1s"},
		{"--config", "/nonexistent.yaml"},
		{"extra"},
		{"--addr", "not an address"},
	} {
		if err := run(context.Background(), args, io.Discard, io.Discard); err == nil {
			t.Errorf("run(%v) succeeded", args)
		}
	}
}

// --help prints the usage and exits 0; a bad flag exits 2.
func TestHelpExitsZero(t *testing.T) {
	var out strings.Builder
	if code := exitCode(run(context.Background(), []string{"--help"}, io.Discard, &out), io.Discard); code != 0 || !strings.Contains(out.String(), "usage: llmtest") {
		t.Errorf("--help: exit %d, printed %q", code, out.String())
	}
	if code := exitCode(run(context.Background(), []string{"--bogus"}, io.Discard, io.Discard), io.Discard); code != 2 {
		t.Errorf("--bogus: exit %d, want 2", code)
	}
}
