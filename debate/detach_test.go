package debate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

// gate holds back every Execute that carries a summary until the branch
// questions are asked, which happens only after the whole main debate.
type gate struct {
	inner   engine.Executor
	once    sync.Once
	release chan struct{}
	mu      sync.Mutex
	order   []string
}

func (g *gate) Execute(ctx context.Context, tasks []*engine.Task) []engine.Result {
	summaries, questions := false, false
	g.mu.Lock()
	for _, t := range tasks {
		g.order = append(g.order, t.Request.Label)
		summaries = summaries || strings.HasSuffix(t.Request.Label, "/summary")
		questions = questions || strings.HasPrefix(t.Request.Label, "debate/question/")
	}
	g.mu.Unlock()
	if questions {
		g.once.Do(func() { close(g.release) })
	}
	if summaries {
		select {
		case <-g.release:
		case <-ctx.Done():
		}
	}
	return g.inner.Execute(ctx, tasks)
}

// Detach runs the summaries through the gate on a goroutine of their own,
// as Local detaches them.
func (g *gate) Detach(ctx context.Context, tasks []*engine.Task) *engine.Detached {
	return engine.Go(ctx, g, tasks)
}

// A summary never holds back a turn, however slow it is: here no summary
// may finish before the main debate is over and its branch questions are
// asked. If a summary rode inside a turn's step, the turn would wait for
// it, the questions would never come, and the run would hit its deadline.
// The summaries still land in the outputs.
func TestSummariesNeverHoldBackTheDebate(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: responder}}})
	defer srv.Close()
	o := testOptions(t, testProject(t), srv.OpenAIBaseURL(), nil)
	o.Rounds, o.BranchRounds = 2, 1
	g := &gate{release: make(chan struct{})}
	o.NewExecutor = func(p llm.Provider, h engine.Hooks, fallback string) engine.Executor {
		g.inner = &engine.Local{Provider: p, Hooks: h, Fallback: fallback}
		return g
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a deadlock's bound, not a measure
	defer cancel()
	p, err := Prepare(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Execute(ctx, p, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Verdict(); err != nil {
		t.Fatalf("verdict %v: missing %+v", err, out.Result.Missing)
	}
	for _, turn := range out.Result.Main.Turns {
		if !strings.HasPrefix(turn.Summary, "Summary ") {
			t.Errorf("turn %d has no summary: %q", turn.N, turn.Summary)
		}
	}
	if out.Result.Main.Summary == "" {
		t.Error("no phase summary")
	}
	// Every main turn was asked for before the first question, and the
	// summaries of those turns rode along in the steps.
	q := slices.IndexFunc(g.order, func(l string) bool { return strings.HasPrefix(l, "debate/question/") })
	for i := 1; i <= len(out.Result.Main.Turns); i++ {
		if k := slices.Index(g.order, turnLabel(i)); k < 0 || k > q {
			t.Errorf("%s came at %d, the first question at %d", turnLabel(i), k, q)
		}
	}
}

func turnLabel(n int) string { return fmt.Sprintf("debate/main/turn/%02d", n) }
