package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/sotlabs/sot/blob"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/temporaltest"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/stack"
)

// toyProtocol is a protocol of four steps over an Executor, as a scenario
// has them: three calls at once, a summary nobody waits for, a slow call,
// one more, and a call past a budget of six calls. It records what each
// step got, in order.
type toyProtocol struct {
	mu  sync.Mutex
	got []string
}

func (p *toyProtocol) body(maxCalls int) func(context.Context) error {
	return func(ctx context.Context) error {
		st, err := stack.New(&config.Config{Budget: config.Budget{MaxCalls: maxCalls}},
			stack.Options{Backend: Backend, NoCache: true, Getenv: func(string) string { return "" }})
		if err != nil {
			return err
		}
		defer st.Close()
		x := &engine.Local{Provider: st}
		step := func(results []engine.Result) {
			p.mu.Lock()
			defer p.mu.Unlock()
			for _, r := range results {
				if r.Err != nil {
					p.got = append(p.got, r.Task.ID+": "+r.Err.Error())
					continue
				}
				p.got = append(p.got, r.Task.ID+": "+r.Resp.Text)
			}
		}
		step(x.Execute(ctx, toyTasks("a", "b", "c")))
		summary := engine.Detach(ctx, x, toyTasks("summary"))
		step(x.Execute(ctx, toyTasks("slow")))
		step(x.Execute(ctx, toyTasks("d")))
		step(summary.Wait())
		step(x.Execute(ctx, toyTasks("past the budget")))
		return nil
	}
}

func toyTasks(names ...string) []*engine.Task {
	var ts []*engine.Task
	for _, n := range names {
		ts = append(ts, &engine.Task{ID: n, Group: "toy", Request: ask("openai:gpt-4.1", n)})
	}
	return ts
}

func (p *toyProtocol) result() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.got, "\n")
}

const toyWant = `a: answered
b: answered
c: answered
slow: slow answer
d: answered
summary: answered
past the budget: budget exhausted: --max-calls 6 reached`

func newHost(e *env, drive, identity string) *Host {
	return &Host{Client: e.c, Blobs: e.blobs, Calls: e.queue, Drive: drive, Heartbeat: 5 * time.Second, Identity: identity}
}

var toyRules = []llmtest.Rule{{User: "slow", Latency: 1500 * time.Millisecond, Reply: "slow answer"}, {Reply: "answered"}}

// A protocol run as the workflow of its run: its calls are activities on
// the workers' queue, in the order and with the answers a local run has;
// a detached summary runs inline; the budget, held by the run's meter in
// the workflow, refuses the seventh call before it is scheduled.
func TestHostRunsAProtocolAsItsWorkflow(t *testing.T) {
	e := newEnv(t, 2, toyRules...)
	var p toyProtocol
	h := newHost(e, "sot-drive-toy-1", "host-1")
	if err := h.Run(context.Background(), p.body(6)); err != nil {
		t.Fatal(err)
	}
	if got := p.result(); !budgetLike(got, toyWant) {
		t.Errorf("the protocol got:\n%s\nwant:\n%s", got, toyWant)
	}
	if n := len(e.srv.Requests()); n != 6 {
		t.Errorf("the model saw %d calls, want 6 (the seventh is past the budget)", n)
	}
	if h.replayed {
		t.Error("a run begun by its host says it was taken up from a history")
	}
}

// budgetLike compares a protocol's record, the budget's message by its
// first words only.
func budgetLike(got, want string) bool {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	if len(g) != len(w) {
		return false
	}
	for i := range g {
		if strings.HasPrefix(w[i], "past the budget") {
			if !strings.Contains(g[i], "max-calls") {
				return false
			}
			continue
		}
		if g[i] != w[i] {
			return false
		}
	}
	return true
}

// The host of a run is gone in the middle of a slow call; another host
// takes the run up from its workflow's history: the calls answered before
// come from the history (the model sees each call once), the protocol
// goes on from where it stood, and its steps get what they would have.
func TestHostTakesARunUpFromItsHistory(t *testing.T) {
	e := newEnv(t, 2, toyRules...)
	ctx := context.Background()
	drive := "sot-drive-toy-2"
	var first toyProtocol
	a := newHost(e, drive, "host-a")
	w, err := a.serve(ctx, first.body(6))
	if err != nil {
		t.Fatal(err)
	}
	followed := make(chan error, 1)
	go func() { followed <- a.follow(ctx) }()
	deadline := time.Now().Add(time.Minute)
	for !slowSent(e.srv) {
		if time.Now().After(deadline) {
			t.Fatalf("the slow call never reached the model; the first host got:\n%s", first.result())
		}
		time.Sleep(10 * time.Millisecond) // polling, not synchronisation
	}
	w.Stop() // the first host is gone, its workflow cache with it

	var second toyProtocol
	b := newHost(e, drive, "host-b")
	if err := b.Run(ctx, second.body(6)); err != nil {
		t.Fatal(err)
	}
	if got := second.result(); !budgetLike(got, toyWant) {
		t.Errorf("the protocol taken up got:\n%s\nwant:\n%s", got, toyWant)
	}
	if !b.replayed {
		t.Error("the second host did not take the run up from its history")
	}
	seen := map[string]int{}
	for _, r := range e.srv.Requests() {
		seen[r.Messages[len(r.Messages)-1].Text]++
	}
	for q, n := range seen {
		if n != 1 {
			t.Errorf("the model was asked %q %d times", q, n)
		}
	}
	if len(seen) != 6 {
		t.Errorf("the model saw %d distinct calls, want 6: %v", len(seen), seen)
	}
	select {
	case err := <-followed:
		var he *HostedError
		if err != nil && !errors.As(err, &he) {
			t.Errorf("the first host's follower: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("the first host's follower did not see the run end")
	}
}

func slowSent(srv *llmtest.Server) bool {
	for _, r := range srv.Requests() {
		if r.Messages[len(r.Messages)-1].Text == "slow" {
			return true
		}
	}
	return false
}

// Cancelling the context a host runs under cancels the run's workflow:
// the protocol sees its context done, its calls under way end as
// cancelled, and what it came to is returned.
func TestHostCancelled(t *testing.T) {
	e := newEnv(t, 1, llmtest.Rule{Latency: time.Minute, Reply: "late"})
	ctx, cancel := context.WithCancel(context.Background())
	h := newHost(e, "sot-drive-toy-3", "host-c")
	var saw error
	go func() {
		for len(e.srv.Requests()) == 0 {
			time.Sleep(10 * time.Millisecond) // polling, not synchronisation
		}
		cancel()
	}()
	err := h.Run(ctx, func(ctx context.Context) error {
		st, err := stack.New(&config.Config{}, stack.Options{Backend: Backend, NoCache: true, Getenv: func(string) string { return "" }})
		if err != nil {
			return err
		}
		defer st.Close()
		r := (&engine.Local{Provider: st}).Execute(ctx, toyTasks("never answered"))
		saw = r[0].Err
		return fmt.Errorf("stopped: %w", ctx.Err())
	})
	if !errors.Is(err, context.Canceled) || !errors.Is(saw, context.Canceled) {
		t.Errorf("Run returned %v, the call %v; want both cancelled", err, saw)
	}
}

// recordProtocolHistory writes the history of the toy protocol's run to
// testdata/name, and the blobs its answers are, which a replay reads, to
// testdata/protocol-blobs.
func recordProtocolHistory(t *testing.T, name string) {
	e := newEnv(t, 1, toyRules...)
	var p toyProtocol
	h := newHost(e, "sot-drive-history-protocol", "host-r")
	if err := h.Run(context.Background(), p.body(6)); err != nil {
		t.Fatal(err)
	}
	bin, err := temporaltest.Binary()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "workflow", "show", "--workflow-id", ProtocolID(h.Drive), "--address", e.addr, "--output", "json").Output()
	if err != nil {
		t.Fatalf("temporal workflow show: %v", err)
	}
	if err := os.WriteFile(filepath.Join("testdata", name), out, 0o644); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join("testdata", "protocol-blobs")
	_ = os.RemoveAll(dst)
	if err := os.CopyFS(dst, os.DirFS(e.blobDir)); err != nil {
		t.Fatal(err)
	}
	_ = os.RemoveAll(filepath.Join(dst, "kept")) // the workers' kept answers: a replay reads none
}

// replayProtocol replays a committed history of the toy protocol's run.
func replayProtocol(t *testing.T, file string) error {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "protocol-blobs"))); err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer blobs.Close()
	var p toyProtocol
	h := &Host{Blobs: blobs, base: context.Background()}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(func(wctx workflow.Context, in ProtocolInput) (ProtocolOutput, error) {
		return h.workflow(wctx, in, p.body(6))
	}, workflow.RegisterOptions{Name: ProtocolWorkflowName})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, file); err != nil {
		return err
	}
	if got := p.result(); !budgetLike(got, toyWant) {
		t.Errorf("the replayed protocol got:\n%s\nwant:\n%s", got, toyWant)
	}
	return nil
}

// Under --max-cost, a call whose worst case does not fit beside the calls
// under way waits for one of them to end, as a coroutine of the run's
// workflow (which must let the others run meanwhile), and then goes.
func TestHostWaitsForRoomInTheCostBudget(t *testing.T) {
	e := newEnv(t, 2, llmtest.Rule{Latency: 300 * time.Millisecond, Reply: "answered"})
	h := newHost(e, "sot-drive-toy-cost", "host-cost")
	var results []engine.Result
	cfg := &config.Config{Budget: config.Budget{MaxCost: 0.02}, Prices: llm.PriceTable{"openai:gpt-4.1": {Input: 2, Output: 8}}}
	err := h.Run(context.Background(), func(ctx context.Context) error {
		st, err := stack.New(cfg, stack.Options{Backend: Backend, NoCache: true, Getenv: func(string) string { return "" }})
		if err != nil {
			return err
		}
		defer st.Close()
		// Each call may cost up to $0.008: two fit under $0.02 at once,
		// and the third waits for room.
		tasks := toyTasks("one", "two", "three")
		for _, task := range tasks {
			task.Request.MaxTokens = 1000
		}
		results = (&engine.Local{Provider: st}).Execute(ctx, tasks)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Err != nil {
			t.Errorf("%s: %v", r.Task.ID, r.Err)
		}
	}
	if n := len(e.srv.Requests()); n != 3 {
		t.Errorf("the model saw %d calls, want 3", n)
	}
}

// A step of more calls than ChildStep goes as child workflows of up to
// ChildBatch calls each: every call is answered, its own answer in its
// own place, the run's workflow holds a few events for each batch rather
// than several for each call, and a step after it of a few calls is made
// by activities of the run's workflow again.
func TestHostSendsALargeStepAsChildWorkflows(t *testing.T) {
	echo := llmtest.Rule{Respond: func(r *llmtest.Recorded) llmtest.Reply { return llmtest.Reply{Text: "re: " + r.LastUser()} }}
	e := newEnv(t, 2, echo)
	h := newHost(e, "sot-drive-toy-large", "host-large")
	n := ChildBatch + ChildStep/2
	var names []string
	for i := range n {
		names = append(names, fmt.Sprint("source ", i))
	}
	var large, small []engine.Result
	err := h.Run(context.Background(), func(ctx context.Context) error {
		st, err := stack.New(&config.Config{}, stack.Options{Backend: Backend, NoCache: true, Getenv: func(string) string { return "" }})
		if err != nil {
			return err
		}
		defer st.Close()
		x := &engine.Local{Provider: st}
		large = x.Execute(ctx, toyTasks(names...))
		small = x.Execute(ctx, toyTasks("after"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range large {
		if r.Err != nil || r.Resp.Text != "re: "+names[i] {
			t.Fatalf("call %d of the large step: %v, %+v", i, r.Err, r.Resp)
		}
	}
	if small[0].Err != nil || small[0].Resp.Text != "re: after" {
		t.Errorf("the step after: %v", small[0].Err)
	}
	if got := len(e.srv.Requests()); got != n+1 {
		t.Errorf("the model saw %d calls, want %d", got, n+1)
	}
	ctx := context.Background()
	for i, want := range []int{ChildBatch, n - ChildBatch} {
		id := fmt.Sprintf("%s-calls-%d", ProtocolID(h.Drive), i+1)
		d, err := e.c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			t.Fatalf("child %d: %v", i+1, err)
		}
		if typ := d.GetWorkflowExecutionInfo().GetType().GetName(); typ != CallsWorkflowName {
			t.Errorf("child %d is a %s workflow", i+1, typ)
		}
		if got := d.GetPendingActivities(); len(got) != 0 {
			t.Errorf("child %d has %d activities pending", i+1, len(got))
		}
		if events := d.GetWorkflowExecutionInfo().GetHistoryLength(); events < int64(3*want) {
			t.Errorf("child %d holds %d events, too few for its %d calls", i+1, events, want)
		}
	}
	d, err := e.c.DescribeWorkflowExecution(ctx, ProtocolID(h.Drive), "")
	if err != nil {
		t.Fatal(err)
	}
	if events := d.GetWorkflowExecutionInfo().GetHistoryLength(); events > 60 {
		t.Errorf("the run's workflow holds %d events for %d calls; its large step should take a few for each batch", events, n+1)
	}
}

// The run's workflow in the SDK's test environment: the toy protocol's
// calls are activities answered in order, the budget refuses the call
// past it before it is scheduled, a question is an activity whose answer
// the protocol gets, and the workflow's status counts the calls.
func TestProtocolWorkflowInTheTestSuite(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	blobs, err := blob.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer blobs.Close()
	var mu sync.Mutex // the test environment runs activities at once
	var scheduled []string
	env.RegisterActivityWithOptions(func(ctx context.Context, in CallInput) (CallOutput, error) {
		mu.Lock()
		scheduled = append(scheduled, activity.GetInfo(ctx).ActivityID)
		mu.Unlock()
		text := "answered"
		if strings.HasSuffix(in.Label, "slow") {
			text = "slow answer"
		}
		data, _ := json.Marshal(llm.Response{Text: text, Model: in.Model, Usage: llm.Usage{InputTokens: 5, OutputTokens: 1}})
		ref, err := blobs.Put(ctx, data)
		return CallOutput{Response: ref, Usage: llm.Usage{InputTokens: 5, OutputTokens: 1}}, err
	}, activityOptions())
	env.RegisterActivityWithOptions(func(ctx context.Context, q Question) (string, error) {
		return q.Choices[1], nil
	}, activity.RegisterOptions{Name: ActivityAsk})
	var p toyProtocol
	var answer string
	h := &Host{Blobs: blobs, base: context.Background()}
	body := p.body(6)
	env.RegisterWorkflowWithOptions(func(wctx workflow.Context, in ProtocolInput) (ProtocolOutput, error) {
		return h.workflow(wctx, in, func(ctx context.Context) error {
			if err := body(ctx); err != nil {
				return err
			}
			var err error
			answer, err = h.Ask("Which way?", []string{"left", "right"})
			return err
		})
	}, workflow.RegisterOptions{Name: ProtocolWorkflowName})
	env.ExecuteWorkflow(ProtocolWorkflowName, ProtocolInput{Drive: "sot-drive-suite", Calls: "calls"})
	var out ProtocolOutput
	if err := env.GetWorkflowResult(&out); err != nil || out.Code != 0 {
		t.Fatalf("the run's workflow: %+v, %v", out, err)
	}
	if got := p.result(); !budgetLike(got, toyWant) {
		t.Errorf("the protocol got:\n%s\nwant:\n%s", got, toyWant)
	}
	if answer != "right" {
		t.Errorf("the question was answered %q", answer)
	}
	slices.Sort(scheduled)
	if len(scheduled) != 6 || scheduled[0] != "1 t/a" {
		t.Errorf("activities %q; want six, named by place and label", scheduled)
	}
	v, err := env.QueryWorkflow(QueryStatus)
	if err != nil {
		t.Fatal(err)
	}
	var st Status
	if err := v.Get(&st); err != nil || st.Calls != 6 || st.Usage.InputTokens != 30 || !st.Done {
		t.Errorf("status %+v, %v; want 6 calls, 30 input tokens, done", st, err)
	}
}

// recordCallsHistory writes the history of a batch of calls made by a
// child workflow (CallsWorkflow) to testdata/name.
func recordCallsHistory(t *testing.T, name string) {
	e := newEnv(t, 1, llmtest.Rule{User: "bad", Fault: llmtest.Fault401}, llmtest.Rule{Reply: "answered"})
	ctx := context.Background()
	var in CallsInput
	for i, q := range []string{"one", "bad", "three"} {
		req := ask("openai:gpt-4.1", q)
		data, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := e.blobs.Put(ctx, data)
		if err != nil {
			t.Fatal(err)
		}
		in.Calls = append(in.Calls, CallInput{Request: ref, Key: req.Key(), Occurrence: 1, Model: req.Model, Label: req.Label})
		in.IDs = append(in.IDs, fmt.Sprintf("%d %s", i+1, req.Label))
	}
	const id = "sot-drive-history-protocol-calls-1"
	run, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: e.queue}, CallsWorkflowName, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	bin, err := temporaltest.Binary()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "workflow", "show", "--workflow-id", id, "--address", e.addr, "--output", "json").Output()
	if err != nil {
		t.Fatalf("temporal workflow show: %v", err)
	}
	if err := os.WriteFile(filepath.Join("testdata", name), out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkHostedCall prints what a call of a driven run costs over the
// same call in process: a protocol of 256 calls, one at a time and 16 to a
// step, run by engine.Local straight on the provider, then as the code of
// the run's workflow (Host) with each call an activity of a worker on the
// same machine. Steps of 64 calls or more, whose calls go as child
// workflows, are timed too.
func BenchmarkHostedCall(b *testing.B) {
	c, blobs, p := benchWorker(b, "bench-hosted", "")
	const n = 256
	protocol := func(prov llm.Provider, width int, tag string) func(context.Context) error {
		return func(ctx context.Context) error {
			x := &engine.Local{Provider: prov}
			for i := 0; i < n; i += width {
				var names []string
				for j := i; j < min(i+width, n); j++ {
					names = append(names, fmt.Sprint(tag, " ", j))
				}
				for _, r := range x.Execute(ctx, toyTasks(names...)) {
					if r.Err != nil {
						return r.Err
					}
				}
			}
			return nil
		}
	}
	var figures []string
	for i := 0; b.Loop(); i++ {
		for _, width := range []int{1, 16, 128} {
			tag := fmt.Sprint("run ", i, " width ", width)
			start := time.Now()
			if err := protocol(p, width, "local "+tag)(context.Background()); err != nil {
				b.Fatal(err)
			}
			local := time.Since(start)
			st, err := stack.New(&config.Config{}, stack.Options{Backend: Backend, NoCache: true, Getenv: func(string) string { return "" }})
			if err != nil {
				b.Fatal(err)
			}
			h := &Host{Client: c, Blobs: blobs, Calls: "bench-hosted", Drive: fmt.Sprint("sot-drive-bench-", i, "-", width), Identity: "bench-host"}
			start = time.Now()
			if err := h.Run(context.Background(), protocol(st, width, "hosted "+tag)); err != nil {
				b.Fatal(err)
			}
			hosted := time.Since(start)
			st.Close()
			over := float64(hosted-local) / n / float64(time.Millisecond)
			b.ReportMetric(over, fmt.Sprintf("overhead-ms/call@%d", width))
			figures = append(figures, fmt.Sprintf("%d to a step: local %.2f ms/call, as the run's workflow %.2f ms/call, overhead %.2f ms/call",
				width, float64(local)/n/float64(time.Millisecond), float64(hosted)/n/float64(time.Millisecond), over))
		}
	}
	b.Log(strings.Join(figures, "; "))
}
