package review

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/llm/llmtest"
)

// An interrupted review whose output directory lies inside the repository
// (the default, .sot/reviews/<run-id>/) resumes under the same run id: its
// own journal and state never become part of the next diff, and no
// finished call is sent again.
func TestInterruptedReviewResumesInsideTheRepository(t *testing.T) {
	repo := benchRepo(t, 2, 20)
	srv := llmtest.NewServer(llmtest.Config{Latency: 20 * time.Millisecond})
	defer srv.Close()
	o := benchOptions(t, repo, srv, "openai:gpt-4.1")
	o.Fresh = false
	o.Context.OutputDir = filepath.Join(repo, ".sot", "reviews", "run")
	o.Context.Perspectives = "none"
	o.Context.Specialists = "security,testing,correctness"
	p := o.Config.Providers["openai"]
	p.Concurrency = 1 // the calls finish one at a time
	o.Config.Providers["openai"] = p

	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	finished := 0
	o.Events = func(e engine.Event) {
		if e.State == engine.Done {
			mu.Lock()
			finished++
			mu.Unlock()
			cancel()
		}
	}
	first, err := Prepare(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Execute(ctx, first, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("the interrupted review returned %v", err)
	}
	if finished == 0 {
		t.Fatal("no call finished before the interruption")
	}
	// The re-run talks to a server of its own, so that a cancelled request
	// the first server records late is not counted against it.
	srv2 := llmtest.NewServer(llmtest.Config{})
	defer srv2.Close()
	p.BaseURL = srv2.OpenAIBaseURL()
	o.Config.Providers["openai"] = p

	o.Events = nil
	again, err := Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if again.RunID != first.RunID {
		t.Fatalf("the re-run is run %s, not %s: the interrupted run's files changed the material (%v)", again.RunID, first.RunID, again.Material.Paths())
	}
	out, err := Execute(context.Background(), again, o)
	if err != nil {
		t.Fatal(err)
	}
	if out.Result.Usage.Replayed != finished {
		t.Errorf("%d calls replayed from the journal, want the %d that finished", out.Result.Usage.Replayed, finished)
	}
	if sent, want := len(srv2.Requests()), len(again.Tasks)+1-finished; sent != want {
		t.Errorf("the re-run sent %d requests, want %d (every call but the %d finished ones)", sent, want, finished)
	}
}
