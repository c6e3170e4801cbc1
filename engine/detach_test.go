package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/openai"
)

// A detached call does not hold back the calls after it: while it hangs,
// another Execute through the same Local runs and returns; cancelling the
// context then ends the detached call, and Wait reports it.
func TestDetachRunsBesideLaterSteps(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{User: "summary", Fault: llmtest.FaultHang}}})
	defer srv.Close()
	p, err := openai.New(openai.Config{Name: "openai", BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-engine-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	x := &Local{Provider: p}
	task := func(id, text string) *Task {
		return &Task{ID: id, Group: "g", Request: &llm.Request{Model: "openai:gpt-4.1", Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := Detach(ctx, x, []*Task{task("s", "the summary")})
	for i := range 3 {
		r := x.Execute(ctx, []*Task{task("turn", "turn "+string(rune('1'+i)))})
		if r[0].Err != nil {
			t.Fatalf("turn %d: %v", i+1, r[0].Err)
		}
		select {
		case <-d.Done():
			t.Fatal("the hanging detached call finished")
		default:
		}
	}
	cancel()
	rs := d.Wait()
	if len(rs) != 1 || rs[0].Task.ID != "s" || !errors.Is(rs[0].Err, context.Canceled) {
		t.Fatalf("detached results %+v", rs)
	}
}
