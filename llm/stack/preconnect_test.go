package stack

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/llm"
)

// Preconnect opens connections to the provider of the default model, at
// its configured base URL, before the stack exists, as many as the
// provider's concurrency lets go at once (this server speaks HTTP/1.1),
// and the stack's first call goes out on one of them; a model whose
// provider is a program opens nothing.
func TestPreconnectReachesTheDefaultModelsProvider(t *testing.T) {
	var opened atomic.Int32
	const concurrency = 3
	all := make(chan struct{}, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"no"}}`, http.StatusBadRequest)
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew && opened.Add(1) == concurrency {
			all <- struct{}{}
		}
	}
	srv.Start()
	defer srv.Close()

	cfg := config.Defaults()
	p := cfg.Providers["openai"]
	p.BaseURL = srv.URL + "/v1"
	p.Concurrency = concurrency
	cfg.Providers["openai"] = p
	cfg.DefaultModel = "openai:gpt-4.1"
	cfg.Cache.Disabled = true

	Preconnect(&cfg, "command:anything")
	Preconnect(&cfg, "")
	select {
	case <-all:
	case <-time.After(10 * time.Second):
		t.Fatalf("%d connections reached the default model's provider, want %d", opened.Load(), concurrency)
	}
	st, err := New(&cfg, Options{Getenv: func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-test-0123456789"
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, _ = st.Provider.Complete(context.Background(), &llm.Request{Model: "openai:gpt-4.1", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if n := opened.Load(); n != concurrency {
		t.Fatalf("the server saw %d connections; the first call should have gone out on one of the %d opened before the stack", n, concurrency)
	}
}
