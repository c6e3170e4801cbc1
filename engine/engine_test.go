package engine

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/middleware"
	"github.com/sotlabs/sot/llm/openai"
)

func TestRunReportsEveryStateAndKeepsOrder(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{User: "task 2", Fault: llmtest.Fault401}}})
	defer srv.Close()
	p, err := openai.New(openai.Config{Name: "openai", BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-engine-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	var tasks []*Task
	for i := range 4 {
		tasks = append(tasks, &Task{ID: fmt.Sprintf("t%d", i), Group: "g", Request: &llm.Request{Model: "openai:gpt-4.1",
			Messages: []llm.Message{{Role: llm.RoleUser, Content: fmt.Sprintf("task %d", i)}}}})
	}
	seen := map[string][]State{}
	results := Run(context.Background(), p, tasks, func(e Event) { seen[e.Task.ID] = append(seen[e.Task.ID], e.State) })
	for i, r := range results {
		if r.Task != tasks[i] {
			t.Fatalf("result %d is for %s", i, r.Task.ID)
		}
		want := []State{Queued, Running, Done}
		if i == 2 {
			want = []State{Queued, Running, Failed}
			if r.Err == nil {
				t.Error("task 2 should fail")
			}
		} else if r.Err != nil || r.Resp == nil {
			t.Errorf("task %d: %v", i, r.Err)
		}
		if fmt.Sprint(seen[r.Task.ID]) != fmt.Sprint(want) {
			t.Errorf("%s states %v, want %v", r.Task.ID, seen[r.Task.ID], want)
		}
	}
}

// A task waiting for a provider slot is still queued: with one slot, a call
// is reported running only while no other call holds the slot. A call counts
// as holding it until its backend returns (the limiter frees the slot after
// that, so the engine's Done event for it may come a moment later).
func TestRunReportsRunningOnlyOnceAdmitted(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Latency: 20 * time.Millisecond})
	defer srv.Close()
	backend, err := openai.New(openai.Config{Name: "openai", BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-engine-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	returned := map[string]bool{}
	marking := llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		resp, err := backend.Complete(ctx, req)
		mu.Lock()
		returned[req.Messages[0].Content] = true
		mu.Unlock()
		return resp, err
	})
	p := middleware.Limit(marking, 1, 0)
	var tasks []*Task
	for i := range 4 {
		tasks = append(tasks, &Task{ID: fmt.Sprintf("t%d", i), Group: "g", Request: &llm.Request{Model: "openai:gpt-4.1",
			Messages: []llm.Message{{Role: llm.RoleUser, Content: fmt.Sprintf("task %d", i)}}}})
	}
	var running []*Task
	most := 0
	states := map[string][]State{}
	Run(context.Background(), p, tasks, func(e Event) {
		states[e.Task.ID] = append(states[e.Task.ID], e.State)
		if e.State != Running {
			return
		}
		running = append(running, e.Task)
		holding := 0
		mu.Lock()
		for _, r := range running {
			if !returned[r.Request.Messages[0].Content] {
				holding++
			}
		}
		mu.Unlock()
		most = max(most, holding)
	})
	if most != 1 {
		t.Errorf("%d calls were reported running while holding a limit of 1", most)
	}
	for id, s := range states {
		if fmt.Sprint(s) != fmt.Sprint([]State{Queued, Running, Done}) {
			t.Errorf("%s went through %v", id, s)
		}
	}
}

// A call that never reaches the limiter (answered by a provider without
// one, as the journal and cache answer) is still reported running once.
func TestRunReportsRunningWithoutLimiter(t *testing.T) {
	p := llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		return &llm.Response{Text: "ok"}, nil
	})
	var got []State
	Run(context.Background(), p, []*Task{{ID: "t", Group: "g", Request: &llm.Request{}}}, func(e Event) { got = append(got, e.State) })
	if fmt.Sprint(got) != fmt.Sprint([]State{Queued, Running, Done}) {
		t.Errorf("states %v", got)
	}
}
