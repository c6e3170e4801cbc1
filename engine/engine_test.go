package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
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
