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

// plain is an Executor that cannot detach, as a durable executor that
// replays a workflow step by step may be.
type plain struct{ x Executor }

func (p plain) Execute(ctx context.Context, tasks []*Task) []Result { return p.x.Execute(ctx, tasks) }

// Through an Executor that cannot detach, detached calls run inline: they
// are answered by the time Detach returns, before any later step is sent,
// so the order of the calls is the order the protocol asked for them.
func TestDetachRunsInlineWithoutADetacher(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	p, err := openai.New(openai.Config{Name: "openai", BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-engine-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	x := plain{&Local{Provider: p}}
	task := func(id, text string) *Task {
		return &Task{ID: id, Group: "g", Request: &llm.Request{Model: "openai:gpt-4.1", Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}}
	}
	ctx := context.Background()
	d := Detach(ctx, x, []*Task{task("s", "the summary")})
	select {
	case <-d.Done():
	default:
		t.Fatal("Detach returned before its calls were answered")
	}
	if r := x.Execute(ctx, []*Task{task("turn", "the next turn")}); r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	if rs := d.Wait(); len(rs) != 1 || rs[0].Err != nil || rs[0].Task.ID != "s" {
		t.Fatalf("detached results %+v", rs)
	}
	var users []string
	for _, r := range srv.Requests() {
		users = append(users, r.LastUser())
	}
	if len(users) != 2 || users[0] != "the summary" || users[1] != "the next turn" {
		t.Errorf("requests in the order %q", users)
	}
}
