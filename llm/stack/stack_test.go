package stack

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

// The crash helper: when SOT_CRASH_HELPER is set, the test binary runs a
// batch of calls through a journaled stack, the way a sot run does.
func TestMain(m *testing.M) {
	if os.Getenv("SOT_CRASH_HELPER") == "1" {
		if err := runBatch(os.Getenv("SOT_CRASH_URL"), os.Getenv("SOT_CRASH_JOURNAL"), 20); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func testConfig(baseURL string) *config.Config {
	cfg := config.Defaults()
	p := cfg.Providers["openai"]
	p.BaseURL = baseURL
	cfg.Providers["openai"] = p
	cfg.Cache.Disabled = true
	return &cfg
}

func env(k string) string {
	if k == "OPENAI_API_KEY" {
		return "sk-test-stack-0123456789"
	}
	return ""
}

func call(n int) *llm.Request {
	return &llm.Request{Model: "openai:gpt-4.1", Label: fmt.Sprintf("batch/%d", n),
		Messages: []llm.Message{{Role: llm.RoleUser, Content: fmt.Sprintf("call %d", n)}}}
}

func runBatch(url, journal string, n int) error {
	st, err := New(testConfig(url), Options{JournalPath: journal, Getenv: env})
	if err != nil {
		return err
	}
	defer st.Close()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 4)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, err := st.Complete(context.Background(), call(i)); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// journaled returns the labels recorded in a journal.
func journaled(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec struct{ Label string }
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Label != "" {
			out[rec.Label] = true
		}
	}
	return out
}

func TestCrashAndResumePaysForNothingTwice(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Latency: 40 * time.Millisecond})
	defer srv.Close()
	journal := filepath.Join(t.TempDir(), "journal.jsonl")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "SOT_CRASH_HELPER=1", "SOT_CRASH_URL="+srv.OpenAIBaseURL(), "SOT_CRASH_JOURNAL="+journal)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it the moment at least 8 calls are journaled.
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(journal)
		if strings.Count(string(b), "\n") >= 8 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the batch never got going")
		}
		time.Sleep(2 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	done := journaled(t, journal)
	if len(done) >= 20 {
		t.Fatalf("the run finished before the kill (%d calls); nothing was tested", len(done))
	}
	before := srv.Count()

	if err := runBatch(srv.OpenAIBaseURL(), journal, 20); err != nil {
		t.Fatalf("re-run: %v", err)
	}
	for _, rec := range srv.Requests()[before:] {
		label := "batch/" + strings.TrimPrefix(rec.LastUser(), "call ")
		if done[label] {
			t.Errorf("%s had finished before the kill but was sent again", label)
		}
	}
	if got := journaled(t, journal); len(got) != 20 {
		t.Errorf("after the re-run %d of 20 calls are journaled", len(got))
	}
	t.Logf("killed after %d journaled calls; the re-run sent %d", len(done), srv.Count()-before)
}

func TestStackWiresEveryPiece(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	cfg := testConfig(srv.OpenAIBaseURL())
	cfg.Cache = config.Cache{Dir: t.TempDir()}
	cfg.Budget.MaxCalls = 2
	st, err := New(cfg, Options{JournalPath: filepath.Join(t.TempDir(), "j.jsonl"), Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if _, err := st.Complete(ctx, &llm.Request{Model: "vertex:gemini", Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}); err == nil || !strings.Contains(err.Error(), "no provider \"vertex\"") {
		t.Errorf("unknown provider: %v", err)
	}
	for _, n := range []int{1, 1, 2} { // the repeat is served by the response cache
		if _, err := st.Complete(ctx, call(n)); err != nil {
			t.Fatal(err)
		}
	}
	if st.Cache.Hits() != 1 || st.Meter.Totals().Calls != 2 {
		t.Errorf("cache hits %d, metered calls %d", st.Cache.Hits(), st.Meter.Totals().Calls)
	}
	if _, err := st.Complete(ctx, call(3)); err == nil || !strings.Contains(err.Error(), "--max-calls 2") {
		t.Errorf("the budget should stop the third paid call: %v", err)
	}
}

func TestMissingKeyFailsOnlyWhenUsed(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	cfg := testConfig(srv.OpenAIBaseURL())
	st, err := New(cfg, Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatalf("a provider without a key must not stop the stack: %v", err)
	}
	defer st.Close()
	_, err = st.Complete(context.Background(), &llm.Request{Model: "anthropic:claude-sonnet-4-5", Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}})
	if err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("err = %v, want a missing-key error naming the variable", err)
	}
	if _, err := st.Complete(context.Background(), call(1)); err != nil {
		t.Errorf("the configured openai endpoint should still work: %v", err)
	}
}

// Made-up tokens of the formats a model may quote back from the material,
// built from pieces so that none is written down whole.
var quotedTokens = map[string]string{
	"aws":             "AKIA" + "Q7ZK3M5RT2XW4N6P",
	"github":          "ghp_" + "R8d2Kq9ZxW" + "4mN7vB3tY6" + "pL1sF5hJ0c" + "A2eG8u",
	"slack":           "xoxb-" + "123456789012-987654321098-" + "Zx81Qw2Er7Ty4Ui9Op3As5Df",
	"anthropic":       "sk-ant-api03-" + "Hq7Lm2Np9Rs4Tv6Wx8Yz1Ab3Cd5Ef",
	"the user's key":  env("OPENAI_API_KEY"),
	"a key of config": "cfg-key-" + "Vb6Nm1Qw8Er3",
}

func TestQuotedKeysNeverReachCacheJournalOrCaller(t *testing.T) {
	var quote strings.Builder
	for _, name := range []string{"aws", "github", "slack", "anthropic", "the user's key", "a key of config"} {
		fmt.Fprintf(&quote, "The diff holds %s.\n", quotedTokens[name])
	}
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{
		{User: "plain", Reply: quote.String()},
		{User: "structured", JSON: map[string]any{"claim": quote.String(), "lines": []int{12}}},
	}})
	defer srv.Close()
	cfg := testConfig(srv.OpenAIBaseURL())
	cacheDir, journal := t.TempDir(), filepath.Join(t.TempDir(), "journal.jsonl")
	cfg.Cache = config.Cache{Dir: cacheDir}
	p := cfg.Providers["openai"]
	p.APIKey = quotedTokens["a key of config"] // a key written in the configuration is registered too
	p.APIKeyEnv = ""
	cfg.Providers["openai"] = p
	st, err := New(cfg, Options{JournalPath: journal, Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	schema := json.RawMessage(`{"type":"object","properties":{"claim":{"type":"string"},"lines":{"type":"array","items":{"type":"integer"}}},"required":["claim","lines"]}`)
	ctx := context.Background()
	var got []string
	for _, req := range []*llm.Request{
		{Model: "openai:gpt-4.1", Label: "plain", Messages: []llm.Message{{Role: llm.RoleUser, Content: "plain"}}},
		{Model: "openai:gpt-4.1", Label: "structured", Schema: &llm.Schema{Name: "finding", JSON: schema}, Messages: []llm.Message{{Role: llm.RoleUser, Content: "structured"}}},
	} {
		var streamed strings.Builder
		req.OnDelta = func(s string) { streamed.WriteString(s) }
		resp, err := st.Complete(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if req.Schema != nil && !json.Valid(resp.JSON) {
			t.Errorf("the structured answer is no longer JSON: %s", resp.JSON)
		}
		got = append(got, resp.Text, string(resp.JSON), streamed.String())
		again, err := st.Complete(ctx, req) // from the cache
		if err != nil || again.Source != llm.SourceCache {
			t.Fatalf("the repeat was not served by the cache: %v, %v", again, err)
		}
		got = append(got, again.Text, string(again.JSON))
	}
	st.Close()
	if !strings.Contains(got[0], "AKIA…[secret: aws-access-token]") {
		t.Errorf("the answer does not say what was masked: %q", got[0])
	}

	written := map[string]string{"journal": readAll(t, journal)}
	filepath.WalkDir(cacheDir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			written["cache file "+filepath.Base(path)] = readAll(t, path)
		}
		return nil
	})
	if len(written) < 3 {
		t.Fatalf("expected a journal and two cache entries, found %d files", len(written))
	}
	for i, s := range got {
		written[fmt.Sprintf("returned text %d", i)] = s
	}
	for where, text := range written {
		for name, tok := range quotedTokens {
			if strings.Contains(text, tok[4:]) {
				t.Errorf("%s holds %s (%s):\n%s", where, name, tok, text)
			}
		}
	}
}

func readAll(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// retries counts the retries after the first attempt: 0 (SOT_RETRIES=0)
// means a failed call is not tried again, 2 means three attempts in all.
func TestRetriesCountAfterTheFirstAttempt(t *testing.T) {
	for _, tt := range []struct{ retries, want int }{{0, 1}, {2, 3}} {
		srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Fault: llmtest.Fault500}}})
		cfg := testConfig(srv.OpenAIBaseURL())
		cfg.Retries = tt.retries
		st, err := New(cfg, Options{Getenv: env})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Complete(context.Background(), call(1)); err == nil {
			t.Fatal("a call that always fails succeeded")
		}
		if got := srv.Count(); got != tt.want {
			t.Errorf("retries %d: %d requests, want %d", tt.retries, got, tt.want)
		}
		srv.Close()
	}
}

// The stack counts its retries by cause, rate limits included, for the
// line a run prints at its end.
func TestStackCountsRetries(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Faults: llmtest.Faults{RetryAfterMs: 5,
		Sequence: []llmtest.FaultKind{llmtest.Fault429, llmtest.Fault429, llmtest.Fault500}}})
	defer srv.Close()
	st, err := New(testConfig(srv.OpenAIBaseURL()), Options{Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Retries(); got.Total() != 0 || got.String() != "" {
		t.Errorf("before any call: %+v %q", got, got)
	}
	if _, err := st.Complete(context.Background(), call(1)); err != nil {
		t.Fatal(err)
	}
	got := st.Retries()
	if got != (Retries{RateLimited: 2, Unavailable: 1}) {
		t.Errorf("retries %+v, want 2 after rate limits and 1 after a server error", got)
	}
	if want := "3 retries: 2 after rate limits (429), 1 after server or connection errors"; got.String() != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if sum := got.Add(Retries{TimedOut: 1}); sum.Total() != 4 || sum.String() != "4 retries: 2 after rate limits (429), 1 after server or connection errors, 1 after timeouts" {
		t.Errorf("sum %q", sum)
	}
}
