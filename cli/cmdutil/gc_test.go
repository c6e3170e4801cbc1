package cmdutil

import (
	"context"
	"path/filepath"
	"runtime/debug"
	"sync/atomic"
	"testing"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/gchold"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

// gcPercent reads the collector's percent without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

// A scenario command prepares its run with the collector held off, and
// collects as the user left it once its first calls are sent, while the
// models think: also when the command's start held it off (cmd/sot's
// gcstart), a hold RunScenario takes over and ends. The live display's
// start, before the first request is built, does not end it.
func TestRunScenarioHoldsTheCollectorUntilTheCallsAreSent(t *testing.T) {
	for _, startup := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "after a startup hold"}[startup], func(t *testing.T) {
			testRunScenarioHolds(t, startup)
		})
	}
}

func testRunScenarioHolds(t *testing.T, startup bool) {
	percent := gcPercent()
	var atServer atomic.Int64
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: func(*llmtest.Recorded) llmtest.Reply {
		atServer.Store(int64(gcPercent()))
		return llmtest.Reply{}
	}}}})
	defer srv.Close()
	cfg, getenv := openaiAt(srv)
	f := testFactory(getenv)
	if startup {
		f.ReleaseStartup = gchold.Hold(func(string) string { return "" })
		if gcPercent() != -1 {
			t.Fatal("the startup hold did not turn the collector off")
		}
	}
	st, err := f.NewStack(&cfg, StackOptions{})(filepath.Join(t.TempDir(), "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var during, started, after int
	err = RunScenario(t.Context(), f, func(ctx context.Context) error {
		during = gcPercent()
		var h engine.Hooks
		live := NewLive(f, &h)
		live.Start(1)
		started = gcPercent()
		task := &engine.Task{ID: "map/a", Group: "map", Request: &llm.Request{Model: "openai:gpt-4.1", Label: "map/a",
			Messages: []llm.Message{{Role: llm.RoleUser, Content: "hello"}}}}
		for _, r := range engine.NewExecutor(nil).Make(st, h, "").Execute(ctx, []*engine.Task{task}) {
			if r.Err != nil {
				return r.Err
			}
		}
		after = gcPercent()
		live.Stop()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if during != -1 || started != -1 {
		t.Errorf("GOGC %d while preparing and %d once the display started; want it off until the calls are sent", during, started)
	}
	if got := int(atServer.Load()); got != percent || after != percent {
		t.Errorf("GOGC %d as the request arrived and %d after the call; want %d", got, after, percent)
	}
	if p := gcPercent(); p != percent {
		t.Errorf("after the run: GOGC %d, want %d", p, percent)
	}
}
