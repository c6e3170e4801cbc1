package stack

import (
	"context"
	"errors"
	"testing"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

// Three runs of one command, each with a stack of its own, share the
// command's budget of three calls: the third run's second call is refused.
func TestLedgerSharesTheBudget(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	cfg := config.Defaults()
	p := cfg.Providers["openai"]
	p.BaseURL = srv.OpenAIBaseURL()
	cfg.Providers["openai"] = p
	cfg.Cache.Disabled = true
	cfg.Budget.MaxCalls = 3
	getenv := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-ledger-0123456789"
		}
		return ""
	}
	var l Ledger
	call := func(st *Stack, text string) error {
		_, err := st.Provider.Complete(context.Background(), &llm.Request{Model: "openai:gpt-4.1", Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}})
		return err
	}
	for run, calls := range []int{1, 1, 2} {
		st, err := New(&cfg, Options{Getenv: getenv})
		if err != nil {
			t.Fatal(err)
		}
		l.Track(st)
		for i := range calls {
			err := call(st, "run "+string(rune('1'+run))+" call "+string(rune('1'+i)))
			refused := errors.Is(err, llm.ErrBudget)
			if want := run == 2 && i == 1; refused != want {
				t.Errorf("run %d call %d: %v, want refused %v", run+1, i+1, err, want)
			}
		}
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests reached the provider, want 3", n)
	}
}
