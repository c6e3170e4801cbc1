package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

// openaiAt is a config whose openai provider is srv, with the cache and
// retries off, and an environment that holds the provider's key.
func openaiAt(srv *llmtest.Server) (config.Config, func(string) string) {
	cfg := config.Defaults()
	p := cfg.Providers["openai"]
	p.BaseURL = srv.OpenAIBaseURL()
	cfg.Providers["openai"] = p
	cfg.Cache.Disabled = true
	cfg.Retries = 0
	return cfg, func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-test-0123456789"
		}
		return ""
	}
}

// A run's warnings and progress lines go to stderr in sot's voice; while
// the display is on, each call says on stderr how it ended (no terminal
// here, so a line a call), a call that failed says why, and Stop returns
// the calls the run's journal holds, for the summary.
func TestLiveShowsTheRunOnStderr(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{
		{User: "fail", Fault: llmtest.Fault500},
	}})
	defer srv.Close()
	cfg, getenv := openaiAt(srv)
	var errOut strings.Builder
	f := &Factory{IO: &IOStreams{ErrOut: &errOut}, Getenv: getenv}
	st, err := f.NewStack(&cfg, StackOptions{})(filepath.Join(t.TempDir(), "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	var hooks engine.Hooks
	live := NewLive(f, &hooks)
	hooks.Warnf("the corpus has %d unreadable file(s)", 2)
	hooks.Progressf("reading %d source(s)", 2)
	live.Plain()
	live.Start(2)
	task := func(id, user string) *engine.Task {
		return &engine.Task{ID: id, Group: id, Request: &llm.Request{Model: "openai:gpt-4.1", Label: id,
			Messages: []llm.Message{{Role: llm.RoleUser, Content: user}}}}
	}
	engine.NewExecutor(nil).Make(st, hooks, "").Execute(context.Background(), []*engine.Task{task("map/a", "hello"), task("map/b", "fail")})
	calls := live.Stop()

	got := errOut.String()
	for _, want := range []string{
		"sot: warning: the corpus has 2 unreadable file(s)\n",
		"sot: reading 2 source(s)\n",
		"sot: map/a done in ",
		"sot: map/b failed: ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("stderr does not say %q:\n%s", want, got)
		}
	}
	if calls.Done != 1 || calls.Failed != 1 {
		t.Errorf("counted %+v; want 1 done and 1 failed", calls)
	}
	hooks.Warnf("after the run")
	if !strings.HasSuffix(errOut.String(), "sot: warning: after the run\n") {
		t.Errorf("a warning after Stop is not printed as it is:\n%s", errOut.String())
	}
}

// What a run came to decides the exit code, and its message is the line
// the user reads: a partial result exits 3 and says what is missing and
// where, a gate or a run with no result 1, the user's mistake 2.
func TestVerdictExitCodes(t *testing.T) {
	partial := &scenario.PartialError{Result: "the answer", Missing: 2, See: "ANSWER.md"}
	tests := []struct {
		name string
		err  error
		code int
		msg  string
	}{
		{"whole", nil, ExitOK, ""},
		{"partial", partial, ExitPartial, "the answer is partial: 2 part(s) missing (see ANSWER.md)"},
		{"gate", errors.New("1 finding(s) at or above must-fix (--fail-on must-fix)"), ExitFailure, "1 finding(s) at or above must-fix (--fail-on must-fix)"},
		{"user", &engine.UserError{Msg: `--fail-on "sometimes": use must-fix, should-fix, consider or never`}, ExitUsage, `--fail-on "sometimes": use must-fix, should-fix, consider or never`},
	}
	for _, tt := range tests {
		err := Verdict(tt.err)
		if code := Code(err); code != tt.code {
			t.Errorf("%s: exit %d, want %d", tt.name, code, tt.code)
		}
		if err != nil && err.Error() != tt.msg {
			t.Errorf("%s: says %q, want %q", tt.name, err, tt.msg)
		}
	}
}

// A run that could not start says what to do: a provider that refused the
// key or does not know the model points at sot doctor, and the user's
// mistake (a missing key) exits 2.
func TestExecuteErrorHints(t *testing.T) {
	auth := ExecuteError(fmt.Errorf("openai (openai:gpt-4.1): %w", llm.ErrAuth))
	if !errors.Is(auth, llm.ErrAuth) || !strings.HasSuffix(auth.Error(), "(sot doctor checks each configured model and says what to fix)") || Code(auth) != ExitFailure {
		t.Errorf("a refused key: %v (exit %d)", auth, Code(auth))
	}
	missing := ExecuteError(engine.AsUserError(fmt.Errorf("openai: %w: set OPENAI_API_KEY", llm.ErrMissingKey)))
	if Code(missing) != ExitUsage || strings.Contains(missing.Error(), "sot doctor") {
		t.Errorf("a missing key: %v (exit %d), want exit %d", missing, Code(missing), ExitUsage)
	}
	if ExecuteError(nil) != nil {
		t.Error("a run that succeeded has an error")
	}
}
