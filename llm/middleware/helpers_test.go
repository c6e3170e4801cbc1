package middleware

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/openai"
)

const testKey = "sk-test-0123456789abcdef"

// backend starts llmtest with cfg and returns an OpenAI backend talking to it
// over real HTTP.
func backend(t testing.TB, cfg llmtest.Config) (llm.Provider, *llmtest.Server) {
	t.Helper()
	srv := llmtest.NewServer(cfg)
	t.Cleanup(srv.Close)
	p, err := openai.New(openai.Config{Name: "openai", BaseURL: srv.OpenAIBaseURL(), APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	return p, srv
}

func ask(n int) *llm.Request {
	return &llm.Request{Model: "openai:gpt-4.1", System: "be brief", Label: fmt.Sprintf("test/%d", n),
		Messages: []llm.Message{{Role: llm.RoleUser, Content: fmt.Sprintf("question %d", n)}}}
}

func complete(t testing.TB, p llm.Provider, req *llm.Request) *llm.Response {
	t.Helper()
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// completeAll sends n calls through p at once and returns the errors of
// those that failed.
func completeAll(p llm.Provider, n int) []error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := p.Complete(context.Background(), ask(i)); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	var out []error
	for err := range errs {
		out = append(out, err)
	}
	return out
}
