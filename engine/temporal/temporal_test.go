package temporal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/sotlabs/sot/blob"
	"github.com/sotlabs/sot/internal/temporaltest"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/openai"
)

// env is a dev server, a fake model, a shared blob store and workers.
type env struct {
	c     client.Client
	srv   *llmtest.Server
	blobs *blob.Dir
	queue string
}

func newEnv(t *testing.T, workers int, rules ...llmtest.Rule) *env {
	t.Helper()
	addr := temporaltest.Start(t)
	c, err := client.Dial(client.Options{HostPort: addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	srv := llmtest.NewServer(llmtest.Config{Rules: rules})
	t.Cleanup(srv.Close)
	blobs, err := blob.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { blobs.Close() })
	e := &env{c: c, srv: srv, blobs: blobs, queue: "sot-" + strings.ReplaceAll(t.Name(), "/", "-")}
	for i := range workers {
		p, err := openai.New(openai.Config{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-worker-0123456789"})
		if err != nil {
			t.Fatal(err)
		}
		w := NewWorker(c, e.queue, &Activities{Provider: p, Blobs: blobs, Identity: fmt.Sprint("worker-", i)}, worker.Options{})
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
	}
	return e
}

func ask(model, text string) *llm.Request {
	return &llm.Request{Model: model, System: "You answer.", Label: "t/" + text,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

// Calls sent through Remote are made by the workers, each once; the same
// calls sent again by another process of the same run are answered from
// the workflow, and the fake model sees nothing more.
func TestRemoteCallsRunOnWorkersOnce(t *testing.T) {
	e := newEnv(t, 2, llmtest.Rule{Reply: "answered"})
	in := RunInput{Heartbeat: 5 * time.Second}
	r := NewRemote(e.c, e.blobs, e.queue, in)
	var started string
	r.OnStart = func(id string) { started = id }
	r.Attach("review abc123")
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			var deltas []string
			req := ask("openai:gpt-4.1", fmt.Sprint("question ", i))
			req.OnDelta = func(s string) { deltas = append(deltas, s) }
			resp, err := r.Complete(ctx, req)
			if err == nil && (!strings.Contains(resp.Text, "answered") || len(deltas) != 1) {
				err = fmt.Errorf("answer %q, deltas %q", resp.Text, deltas)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if started != "sot-review-abc123" {
		t.Errorf("workflow id %q", started)
	}
	if n := len(e.srv.Requests()); n != 6 {
		t.Fatalf("the model saw %d calls, want 6", n)
	}
	again := NewRemote(e.c, e.blobs, e.queue, in)
	again.Attach("review abc123")
	for i := range 6 {
		if _, err := again.Complete(ctx, ask("openai:gpt-4.1", fmt.Sprint("question ", i))); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(e.srv.Requests()); n != 6 {
		t.Errorf("after the same calls from a second process the model saw %d calls, want still 6", n)
	}
	if err := again.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	var st Status
	if err := e.c.GetWorkflow(ctx, started, "").Get(ctx, &st); err != nil {
		t.Fatal(err)
	}
	if !st.Done || st.Calls != 6 || st.InFlight != 0 || st.Usage.InputTokens == 0 {
		t.Errorf("status %+v; want done, 6 calls scheduled, their usage", st)
	}
}

// The workflow refuses a call past the run's budget before a worker is
// asked; a provider's refusal crosses the queue as the same llm error.
func TestRemoteBudgetAndErrors(t *testing.T) {
	e := newEnv(t, 1, llmtest.Rule{Respond: func(rec *llmtest.Recorded) llmtest.Reply {
		if strings.Contains(rec.Messages[len(rec.Messages)-1].Text, "bad") {
			return llmtest.Reply{Fault: llmtest.Fault400}
		}
		return llmtest.Reply{Text: "fine"}
	}})
	r := NewRemote(e.c, e.blobs, e.queue, RunInput{MaxCalls: 2})
	r.Attach("ask budget")
	ctx := context.Background()
	if _, err := r.Complete(ctx, ask("openai:gpt-4.1", "bad request")); !errors.Is(err, llm.ErrBadRequest) {
		t.Errorf("a 400 from the model: %v, want llm.ErrBadRequest", err)
	}
	if _, err := r.Complete(ctx, ask("openai:gpt-4.1", "good")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Complete(ctx, ask("openai:gpt-4.1", "third")); !errors.Is(err, llm.ErrBudget) {
		t.Errorf("a third call under a budget of 2: %v, want llm.ErrBudget", err)
	}
	if n := len(e.srv.Requests()); n != 2 {
		t.Errorf("the model saw %d calls, want 2", n)
	}
}
