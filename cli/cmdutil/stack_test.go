package cmdutil

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

func testFactory(getenv func(string) string) *Factory {
	return &Factory{IO: &IOStreams{ErrOut: &strings.Builder{}}, Getenv: getenv}
}

// A run refuses, before any call, a model whose provider has no key: the
// error is a usage error (exit 2) that names the provider and the variable
// to set, and says nothing was called.
func TestMissingKeyNamesWhatToSet(t *testing.T) {
	cfg := config.Defaults()
	f := testFactory(func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-test-0123456789"
		}
		return ""
	})
	if err := f.MissingKey(&cfg, "openai:gpt-4.1", "openai:gpt-4.1"); err != nil {
		t.Fatalf("a model with its key: %v", err)
	}
	err := f.MissingKey(&cfg, "openai:gpt-4.1", "anthropic:claude-sonnet-4-5")
	if err == nil {
		t.Fatal("a model without its key passed")
	}
	if !errors.Is(err, llm.ErrMissingKey) || Code(err) != ExitUsage {
		t.Errorf("got %v (exit %d); want llm.ErrMissingKey, exit %d", err, Code(err), ExitUsage)
	}
	for _, want := range []string{"anthropic", "set ANTHROPIC_API_KEY", "no model was called"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}

// The stack a scenario builds journals its calls to the path it gives, and
// --fresh (NoCache) leaves the response cache out.
func TestNewStackJournalsToThePathGiven(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	cfg := config.Defaults()
	p := cfg.Providers["openai"]
	p.BaseURL = srv.OpenAIBaseURL()
	cfg.Providers["openai"] = p
	cfg.Cache.Dir = t.TempDir()
	f := testFactory(func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-test-0123456789"
		}
		return ""
	})

	journal := filepath.Join(t.TempDir(), "journal.jsonl")
	st, err := f.NewStack(&cfg, StackOptions{})(journal)
	if err != nil {
		t.Fatal(err)
	}
	if st.Journal == nil || st.Cache == nil {
		t.Fatalf("journal %v, cache %v; want both", st.Journal, st.Cache)
	}
	req := &llm.Request{Model: "openai:gpt-4.1", Label: "cmdutil/one",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "hello"}}}
	if _, err := st.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "cmdutil/one") {
		t.Errorf("the journal does not hold the call: %q", b)
	}

	fresh, err := f.NewStack(&cfg, StackOptions{NoCache: true})(filepath.Join(t.TempDir(), "j.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if fresh.Cache != nil {
		t.Error("NoCache built a stack with the response cache")
	}
}
