package temporal

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

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
	// blobDir is where blobs keeps its objects.
	blobDir string
	queue   string
	addr    string
}

func newEnv(t *testing.T, workers int, rules ...llmtest.Rule) *env {
	t.Helper()
	return newEnvWith(t, nil, workers, rules...)
}

// newEnvWith is newEnv on a server with more dynamic settings.
func newEnvWith(t *testing.T, dynamic []string, workers int, rules ...llmtest.Rule) *env {
	t.Helper()
	addr := temporaltest.Start(t, dynamic...)
	c, err := client.Dial(client.Options{HostPort: addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	srv := llmtest.NewServer(llmtest.Config{Rules: rules})
	t.Cleanup(srv.Close)
	blobDir := t.TempDir()
	blobs, err := blob.OpenDir(blobDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { blobs.Close() })
	e := &env{c: c, srv: srv, blobs: blobs, blobDir: blobDir, addr: addr, queue: "sot-" + strings.ReplaceAll(t.Name(), "/", "-")}
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
	r := NewRemote(e.c, e.blobs, e.queue, in, 0)
	var started string
	r.OnStart = func(id string) { started = id }
	r.Attach("review abc123", nil)
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
	again := NewRemote(e.c, e.blobs, e.queue, in, 0)
	again.Attach("review abc123", nil)
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

// refusesBad answers "fine", but 400 to a request whose last turn says "bad".
var refusesBad = llmtest.Rule{Respond: func(rec *llmtest.Recorded) llmtest.Reply {
	if strings.Contains(rec.Messages[len(rec.Messages)-1].Text, "bad") {
		return llmtest.Reply{Fault: llmtest.Fault400}
	}
	return llmtest.Reply{Text: "fine"}
}}

// The workflow refuses a call past the run's budget before a worker is
// asked; a provider's refusal crosses the queue as the same llm error.
func TestRemoteBudgetAndErrors(t *testing.T) {
	e := newEnv(t, 1, refusesBad)
	r := NewRemote(e.c, e.blobs, e.queue, RunInput{MaxCalls: 2}, 0)
	r.Attach("ask budget", nil)
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

var update = flag.Bool("update", false, "write testdata/run-history.json from a run on a dev server")

// TestReplayCommittedHistory replays the histories of runs recorded by
// earlier versions of the workflows (testdata/*.json, see recordHistory):
// one with calls answered, failed by the model and refused by the budget;
// one that continued as new; a run driven on a worker. A change to RunWorkflow that would break the
// runs already under way fails here.
func TestReplayCommittedHistory(t *testing.T) {
	// -update records the histories of this version beside the earlier
	// ones, which stay: they are what must keep replaying.
	if *update {
		recordHistory(t, "run-history-v2.json", nil)
		recordHistory(t, "run-history-v2-continued.json", []string{"limit.historyCount.suggestContinueAsNew=30"})
		recordDriveHistory(t, "drive-history.json")
		recordProtocolHistory(t, "protocol-history.json")
		recordCallsHistory(t, "calls-history.json")
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	if len(files) < 6 {
		t.Fatalf("%d committed histories, want 6", len(files))
	}
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "protocol-") {
			if err := replayProtocol(t, f); err != nil {
				t.Errorf("%s no longer replays: %v", f, err)
			}
			continue
		}
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflowWithOptions(RunWorkflow, workflow.RegisterOptions{Name: WorkflowName})
		r.RegisterWorkflowWithOptions(DriveWorkflow, workflow.RegisterOptions{Name: DriveWorkflowName})
		r.RegisterWorkflowWithOptions(CallsWorkflow, workflow.RegisterOptions{Name: CallsWorkflowName})
		if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
			t.Errorf("%s no longer replays: %v", f, err)
		}
	}
}

// recordHistory runs calls through a workflow on a dev server with the
// dynamic settings given, one of them past the budget and one failed by
// the model, and writes its history (the last run's, after continuing as
// new, the first run's, which holds the move) to testdata/name.
func recordHistory(t *testing.T, name string, dynamic []string) {
	e := newEnvWith(t, dynamic, 2, refusesBad)
	qs := []string{"one", "two", "bad", "three", "past the budget"}
	max := 4
	if dynamic != nil {
		for i := range 12 {
			qs = append([]string{fmt.Sprint("early ", i)}, qs...)
		}
		max = 16
	}
	r := NewRemote(e.c, e.blobs, e.queue, RunInput{MaxCalls: max, MaxCost: 100, Prices: llm.PriceTable{"openai:gpt-4.1": {Input: 2, Output: 8}}}, 0)
	r.Attach("review "+strings.TrimSuffix(name, ".json"), nil)
	ctx := context.Background()
	for _, q := range qs {
		_, _ = r.Complete(ctx, ask("openai:gpt-4.1", q))
	}
	if err := r.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.c.GetWorkflow(ctx, r.WorkflowID(), "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	bin, err := temporaltest.Binary()
	if err != nil {
		t.Fatal(err)
	}
	d, err := e.c.DescribeWorkflowExecution(ctx, r.WorkflowID(), "")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "workflow", "show", "--workflow-id", r.WorkflowID(), "--run-id", d.GetWorkflowExecutionInfo().GetFirstRunId(),
		"--address", e.addr, "--output", "json").Output()
	if err != nil {
		t.Fatalf("temporal workflow show: %v", err)
	}
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", name), out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A workflow cancelled from outside (temporal workflow cancel) stops the
// run's calls with a message that says how to continue; one that ended
// because it was idle is started again, and the call goes through.
func TestRemoteAfterTheWorkflowEnds(t *testing.T) {
	e := newEnv(t, 1, llmtest.Rule{Reply: "fine"})
	ctx := context.Background()
	r := NewRemote(e.c, e.blobs, e.queue, RunInput{}, 0)
	r.Attach("debate cancelled", nil)
	if _, err := r.Complete(ctx, ask("openai:gpt-4.1", "first")); err != nil {
		t.Fatal(err)
	}
	if err := e.c.CancelWorkflow(ctx, r.WorkflowID(), ""); err != nil {
		t.Fatal(err)
	}
	_ = e.c.GetWorkflow(ctx, r.WorkflowID(), "").Get(ctx, nil)
	_, err := r.Complete(ctx, ask("openai:gpt-4.1", "second"))
	if err == nil || !strings.Contains(err.Error(), "was cancelled") || !strings.Contains(err.Error(), "run the same command again") {
		t.Errorf("a call after the workflow was cancelled: %v", err)
	}

	idle := NewRemote(e.c, e.blobs, e.queue, RunInput{Idle: time.Second}, 0)
	idle.Attach("ask idle", nil)
	if _, err := idle.Complete(ctx, ask("openai:gpt-4.1", "one")); err != nil {
		t.Fatal(err)
	}
	if err := e.c.GetWorkflow(ctx, idle.WorkflowID(), "").Get(ctx, nil); err != nil {
		t.Fatalf("the idle workflow: %v", err)
	}
	if _, err := idle.Complete(ctx, ask("openai:gpt-4.1", "two")); err != nil {
		t.Errorf("a call after the workflow ended idle: %v", err)
	}
}

// A run that asks the same thing twice gets two answers, as from its
// journal; a later process whose journal held the first answer sends its
// next call of that request as the run's second, and is answered it
// from the workflow without asking the model again.
func TestRemoteNumbersIdenticalCalls(t *testing.T) {
	e := newEnv(t, 1, llmtest.Rule{Reply: "sampled"})
	ctx := context.Background()
	r := NewRemote(e.c, e.blobs, e.queue, RunInput{}, 0)
	r.Attach("debate twice", nil)
	for range 2 {
		if _, err := r.Complete(ctx, ask("openai:gpt-4.1", "same")); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(e.srv.Requests()); n != 2 {
		t.Fatalf("two identical calls reached the model %d times, want 2", n)
	}
	later := NewRemote(e.c, e.blobs, e.queue, RunInput{}, 0)
	later.Attach("debate twice", func(string) int { return 1 })
	if _, err := later.Complete(ctx, ask("openai:gpt-4.1", "same")); err != nil {
		t.Fatal(err)
	}
	if n := len(e.srv.Requests()); n != 2 {
		t.Errorf("the run's second call, sent again by a later process, reached the model: %d requests", n)
	}
	// Answers are kept for one run's retries, not as a cache across runs.
	other := NewRemote(e.c, e.blobs, e.queue, RunInput{}, 0)
	other.Attach("debate another", nil)
	if _, err := other.Complete(ctx, ask("openai:gpt-4.1", "same")); err != nil {
		t.Fatal(err)
	}
	if n := len(e.srv.Requests()); n != 3 {
		t.Errorf("another run's same call was answered from the first run's kept answer: %d requests, want 3", n)
	}
}

// BenchmarkRemoteCall: what a call costs on Temporal over the same call
// made in this process, against a model that answers at once: the
// Update, the activity on a worker, the blob store both ways. Reported
// per call, sequential and 16 at a time.
func BenchmarkRemoteCall(b *testing.B) {
	c, blobs, p := benchWorker(b, "bench", "history.maxInFlightUpdates=64")
	ctx := context.Background()
	const n = 200
	run := func(prov llm.Provider, parallel int, tag string) time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		sem := make(chan struct{}, parallel)
		for i := range n {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				if _, err := prov.Complete(ctx, ask("openai:gpt-4.1", fmt.Sprint(tag, " ", i))); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
		return time.Since(start)
	}
	var figures []string
	for i := 0; b.Loop(); i++ {
		for _, par := range []int{1, 16} {
			r := NewRemote(c, blobs, "bench", RunInput{}, 16)
			r.Attach(fmt.Sprintf("bench %d-%d", i, par), nil)
			local := run(p, par, fmt.Sprint("local", i, par))
			remote := run(r, par, fmt.Sprint("remote", i, par))
			_ = r.Finish(ctx)
			over := float64(remote-local) / n / float64(time.Millisecond)
			b.ReportMetric(over, fmt.Sprintf("overhead-ms/call@%d", par))
			figures = append(figures, fmt.Sprintf("%d at a time: local %.2f ms/call, Temporal %.2f ms/call, overhead %.2f ms/call",
				par, float64(local)/n/float64(time.Millisecond), float64(remote)/n/float64(time.Millisecond), over))
		}
	}
	b.Log(strings.Join(figures, "; "))
}

// benchWorker starts a dev server (with the dynamic setting given, if
// any), a fake model that answers at once, a blob store, and a worker on
// queue whose calls go to that model, and returns a client, the store and
// the worker's provider; everything stops when b ends.
func benchWorker(b *testing.B, queue, dynamic string) (client.Client, *blob.Dir, llm.Provider) {
	b.Helper()
	var settings []string
	if dynamic != "" {
		settings = append(settings, dynamic)
	}
	addr := temporaltest.Start(b, settings...)
	c, err := client.Dial(client.Options{HostPort: addr, Logger: quiet{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Reply: "ok"}}})
	b.Cleanup(srv.Close)
	blobs, err := blob.OpenDir(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { blobs.Close() })
	p, err := openai.New(openai.Config{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-bench-0123456789"})
	if err != nil {
		b.Fatal(err)
	}
	w := NewWorker(c, queue, &Activities{Provider: p, Blobs: blobs, Identity: "bench"}, worker.Options{})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(w.Stop)
	return c, blobs, p
}

// A run whose history grows past what Temporal suggests continues as new,
// again and again, carrying its counts: every call is answered, each once,
// and calls refused while the workflow moves are sent to the new run.
func TestRunContinuesAsNew(t *testing.T) {
	e := newEnvWith(t, []string{"limit.historyCount.suggestContinueAsNew=40"}, 2, llmtest.Rule{Reply: "fine"})
	ctx := context.Background()
	r := NewRemote(e.c, e.blobs, e.queue, RunInput{MaxCalls: 1000}, 0)
	r.Attach("ask long", nil)
	completeAll(t, r, 60, 4)
	if n := len(e.srv.Requests()); n != 60 {
		t.Errorf("the model saw %d calls, want 60", n)
	}
	d, err := e.c.DescribeWorkflowExecution(ctx, r.WorkflowID(), "")
	if err != nil {
		t.Fatal(err)
	}
	info := d.GetWorkflowExecutionInfo()
	if info.GetFirstRunId() == info.GetExecution().GetRunId() {
		t.Error("the workflow never continued as new")
	}
	v, err := e.c.QueryWorkflow(ctx, r.WorkflowID(), "", QueryStatus)
	if err != nil {
		t.Fatal(err)
	}
	var st Status
	if err := v.Get(&st); err != nil {
		t.Fatal(err)
	}
	if st.Calls != 60 {
		t.Errorf("the last run counts %d calls; want the run's 60, carried across", st.Calls)
	}
}

// completeAll sends n calls ("source 0", ...) through r, batch at a time,
// and fails the test on any error.
func completeAll(t *testing.T, r *Remote, n, batch int) {
	t.Helper()
	errs := make([]error, n)
	for start := 0; start < n; start += batch {
		var wg sync.WaitGroup
		for i := start; i < min(start+batch, n); i++ {
			wg.Go(func() {
				_, errs[i] = r.Complete(context.Background(), ask("openai:gpt-4.1", fmt.Sprint("source ", i)))
			})
		}
		wg.Wait()
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// A run that sends far more calls at once than the server keeps Updates in
// flight on one workflow (10 by default) has them all answered: the client
// holds the rest back instead of having them refused until they time out.
func TestRemoteManyCallsAtOnce(t *testing.T) {
	e := newEnv(t, 1, llmtest.Rule{Reply: "ok"})
	r := NewRemote(e.c, e.blobs, e.queue, RunInput{}, 0)
	r.Attach("ask wide", nil)
	completeAll(t, r, 150, 150)
	if n := len(e.srv.Requests()); n != 150 {
		t.Errorf("the model saw %d calls, want 150", n)
	}
}
