package review_test

import (
	"context"
	"sync"
	"testing"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/review"
)

// countingExecutor is an Executor of a library user's own (a durable
// workflow engine, say) that hands the calls to engine.Local and counts
// them.
type countingExecutor struct {
	mu     *sync.Mutex
	labels *[]string
	next   engine.Executor
}

func (c countingExecutor) Execute(ctx context.Context, tasks []*engine.Task) []engine.Result {
	c.mu.Lock()
	for _, t := range tasks {
		*c.labels = append(*c.labels, t.Request.Label)
	}
	c.mu.Unlock()
	return c.next.Execute(ctx, tasks)
}

// Every model call of a review, in parallel and debate mode (specialists,
// later rounds, continuations, the hub's summaries, the triage lead), goes
// through the Executor the library user gives: the calls the provider
// received are exactly the calls the executor was handed.
func TestEveryCallGoesThroughTheExecutor(t *testing.T) {
	for i, m := range goldenModes {
		t.Run(m.name, func(t *testing.T) {
			goldenEnv(t)
			goldenRepo(t)
			r := &responder{}
			srv := llmtest.NewServer(llmtest.Config{Seed: 1, Rules: []llmtest.Rule{{Respond: r.respond}}})
			defer srv.Close()
			var mu sync.Mutex
			var labels []string
			o := goldenOptions(t, i, srv.OpenAIBaseURL(), &callLog{})
			o.NewExecutor = func(p llm.Provider, h engine.Hooks, fallback string) engine.Executor {
				return countingExecutor{mu: &mu, labels: &labels, next: &engine.Local{Provider: p, Hooks: h, Fallback: fallback}}
			}
			ctx := context.Background()
			plan, err := review.Prepare(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			out, err := review.Execute(ctx, plan, o)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, l := range labels {
				got[l]++
			}
			sent := srv.Requests()
			if len(labels) != len(sent) || len(sent) != out.Result.Usage.Calls {
				t.Fatalf("the executor was handed %d calls, the provider got %d, the usage says %d", len(labels), len(sent), out.Result.Usage.Calls)
			}
			for _, l := range []string{"synthesis/triage-lead"} {
				if got[l] != 1 {
					t.Errorf("%s went through the executor %d times, want once", l, got[l])
				}
			}
		})
	}
}
