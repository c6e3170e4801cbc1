package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/anthropic"
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

// sharedTasks returns n tasks whose system prompts share an 8,000-byte
// prefix and then differ.
func sharedTasks(n int, model, prefix string) []*Task { return sharedTasksOf(n, model, prefix, 8000) }

// sharedTasksOf returns n tasks whose system prompts share a prefix of at
// least size bytes and then differ.
func sharedTasksOf(n int, model, prefix string, size int) []*Task {
	shared := strings.Repeat(prefix+" is the material every reviewer reads.\n", size/(len(prefix)+38)+1)
	var tasks []*Task
	for i := range n {
		tasks = append(tasks, &Task{ID: fmt.Sprintf("t%d", i), Group: "g", Request: &llm.Request{Model: model,
			System: shared + fmt.Sprintf("You are reviewer %d.", i), SharedPrefix: len(shared),
			Messages: []llm.Message{{Role: llm.RoleUser, Content: fmt.Sprintf("%s task %d", prefix, i)}}}})
	}
	return tasks
}

// The calls of a group that shares a prefix wait for the first one's answer
// to start, which is when the provider has written the prefix to its cache:
// only the first pays to write it, and every other call reads it. Sent all
// at once, as before, none of them could.
func TestRunSendsOneCallPerSharedPrefixFirst(t *testing.T) {
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Config{PrefixCache: true, Latency: 300 * time.Millisecond, FirstToken: 100 * time.Millisecond})
			defer srv.Close()
			var backend llm.Provider
			var err error
			if provider == "openai" {
				backend, err = openai.New(openai.Config{Name: "openai", BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-engine-0123456789"})
			} else {
				backend, err = anthropic.New(anthropic.Config{Name: "anthropic", BaseURL: srv.AnthropicBaseURL(), APIKey: "sk-engine-0123456789"})
			}
			if err != nil {
				t.Fatal(err)
			}
			p := middleware.Limit(backend, 20, 0)
			tasks := sharedTasks(6, provider+":m", provider)
			results := Run(context.Background(), p, tasks, nil)
			readers := 0
			for i, r := range results {
				if r.Err != nil {
					t.Fatalf("task %d: %v", i, r.Err)
				}
				u := r.Resp.Usage
				switch {
				case i == 0 && u.CachedInputTokens != 0:
					t.Errorf("the first call read %d cached tokens; nothing was written before it", u.CachedInputTokens)
				case i > 0 && u.CachedInputTokens > 0:
					readers++
				}
			}
			if readers != len(tasks)-1 {
				t.Errorf("%d of %d later calls read the shared prefix from the cache, want all", readers, len(tasks)-1)
			}
			// The later calls overlapped the first: they did not wait for its
			// whole answer.
			if got := srv.MaxConcurrent(); got != len(tasks) {
				t.Errorf("at most %d calls in flight at once, want %d", got, len(tasks))
			}
		})
	}
}

// The calls waiting for a prefix go when the first call fails, and when it
// is answered without reaching the provider's limits (as the journal and
// the cache answer); tasks without a shared prefix, or with another one,
// never wait.
func TestRunReleasesWaitingCallsWhateverTheFirstDoes(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Latency: 200 * time.Millisecond, Rules: []llmtest.Rule{{User: "failing task 0", Fault: llmtest.Fault401}}})
	defer srv.Close()
	backend, err := openai.New(openai.Config{Name: "openai", BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-engine-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	p := middleware.Limit(backend, 20, 0)
	results := Run(context.Background(), p, sharedTasks(4, "openai:m", "failing"), nil)
	if results[0].Err == nil {
		t.Error("the first call should fail")
	}
	for i, r := range results[1:] {
		if r.Err != nil {
			t.Errorf("task %d: %v", i+1, r.Err)
		}
	}

	// The first call answered above the limiter, at once.
	var mu sync.Mutex
	calls := 0
	answered := llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		if req.LastUser() == "replayed task 0" {
			return &llm.Response{Text: "replayed", Source: llm.SourceJournal}, nil
		}
		return p.Complete(ctx, req)
	})
	for _, r := range Run(context.Background(), answered, sharedTasks(3, "openai:m", "replayed"), nil) {
		if r.Err != nil {
			t.Error(r.Err)
		}
	}
	if calls != 3 {
		t.Errorf("%d calls, want 3", calls)
	}

	// Two prefixes and a task with none: three calls go at once.
	srv2 := llmtest.NewServer(llmtest.Config{Latency: 300 * time.Millisecond, FirstToken: 300 * time.Millisecond})
	defer srv2.Close()
	backend2, err := openai.New(openai.Config{Name: "openai", BaseURL: srv2.OpenAIBaseURL(), APIKey: "sk-engine-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	alpha, beta := sharedTasks(3, "openai:m", "alpha"), sharedTasks(3, "openai:m", "beta")
	solo := &Task{ID: "solo", Group: "g", Request: &llm.Request{Model: "openai:m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "solo"}}}}
	Run(context.Background(), middleware.Limit(backend2, 20, 0), []*Task{alpha[0], beta[0], solo, alpha[1], beta[1], alpha[2], beta[2]}, nil)
	// The first requests to arrive are the first of each prefix and the
	// task without one; the others of each prefix arrive only once their
	// first's answer has started, which here is when it ends.
	var order []string
	for _, r := range srv2.Requests() {
		order = append(order, r.LastUser())
	}
	if len(order) != 7 || !slices.Contains(order[:3], "alpha task 0") || !slices.Contains(order[:3], "beta task 0") || !slices.Contains(order[:3], "solo") {
		t.Errorf("arrival order %q: want the first of each prefix and the task without one first", order)
	}
}

// firstToken is when the fake server of TestRunWaitsOnlyWhereACacheCanServe
// starts an answer, and ends it: long enough that calls sent together all
// arrive before the first of them has an answer.
const firstToken = time.Second

// cachingRouter routes every provider name the tests use to the fake
// server srv: openai and anthropic to their APIs, ollama and command to
// its OpenAI API. The engine decides whether a call waits from the model
// reference alone, so a command: name over HTTP tells when its calls were
// sent as a program would not.
func cachingRouter(t *testing.T, srv *llmtest.Server) llm.Provider {
	t.Helper()
	r := llm.Router{}
	for _, name := range []string{"openai", "ollama", "command"} {
		p, err := openai.New(openai.Config{Name: name, BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-engine-0123456789"})
		if err != nil {
			t.Fatal(err)
		}
		r[name] = p
	}
	p, err := anthropic.New(anthropic.Config{Name: "anthropic", BaseURL: srv.AnthropicBaseURL(), APIKey: "sk-engine-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	r["anthropic"] = p
	return middleware.Limit(r, 20, 0)
}

// heldBack reports whether every request of first's step (those whose
// last user message is first's but for its closing number) but first
// arrived only once first's answer had started: whether the calls waited
// for the first to write the prefix.
func heldBack(t *testing.T, srv *llmtest.Server, first string) bool {
	t.Helper()
	reqs := srv.Requests()
	i := slices.IndexFunc(reqs, func(r llmtest.Recorded) bool { return r.LastUser() == first })
	if i < 0 {
		t.Fatalf("no request %q", first)
	}
	step := strings.TrimRight(first, "0123456789")
	started := reqs[i].Time.Add(firstToken)
	for _, r := range reqs {
		if r.LastUser() != first && strings.HasPrefix(r.LastUser(), step) && r.Time.Before(started) {
			return false
		}
	}
	return true
}

// Calls wait for a first one to write their shared prefix only where a
// provider's cache could then serve them: the provider keeps a cache, the
// prefix reaches the model's floor in tokens (not bytes), and more than
// one call would read it. Everywhere else every call is sent at once.
func TestRunWaitsOnlyWhereACacheCanServe(t *testing.T) {
	for _, tt := range []struct {
		name, model string
		calls, size int
		wait        bool
	}{
		{"openai, a prefix of 2,000 tokens", "openai:gpt-4.1", 3, 8000, true},
		{"openai, two calls", "openai:gpt-4.1", 2, 8000, false},
		{"openai, 2,000 bytes but 500 tokens", "openai:gpt-4.1", 4, 2000, false},
		{"anthropic sonnet, 1,500 tokens", "anthropic:claude-sonnet-4-5", 3, 6000, true},
		{"anthropic haiku, 1,500 tokens under its 2,048", "anthropic:claude-3-5-haiku-latest", 3, 6000, false},
		{"command: keeps no cache", "command:llm -m gpt-4.1", 4, 8000, false},
		{"ollama keeps no cache", "ollama:qwen2.5:7b", 4, 8000, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(llmtest.Config{Latency: firstToken, FirstToken: firstToken})
			defer srv.Close()
			tasks := sharedTasksOf(tt.calls, tt.model, "waiting", tt.size)
			for i, r := range Run(context.Background(), cachingRouter(t, srv), tasks, nil) {
				if r.Err != nil {
					t.Fatalf("task %d: %v", i, r.Err)
				}
			}
			if got := heldBack(t, srv, "waiting task 0"); got != tt.wait {
				t.Errorf("the later calls waited for the first: %v, want %v", got, tt.wait)
			}
		})
	}
}

// A prefix one step had written is still in the provider's cache at the
// next step, so the next step's calls do not wait for it again: an
// Executor remembers what its calls had written. Run alone knows nothing
// of earlier steps and waits each time.
func TestLaterStepsDoNotWaitForAPrefixAlreadyWritten(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Latency: firstToken, FirstToken: firstToken, PrefixCache: true})
	defer srv.Close()
	p := cachingRouter(t, srv)
	x := &Local{Provider: p}
	steps := [][]*Task{sharedTasks(3, "openai:gpt-4.1", "step one"), sharedTasks(3, "openai:gpt-4.1", "step one")}
	for i, step := range steps {
		for k, task := range step {
			task.Request.Messages[0].Content = fmt.Sprintf("step %d call %d", i+1, k)
		}
	}
	for _, r := range x.Execute(context.Background(), steps[0]) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if !heldBack(t, srv, "step 1 call 0") {
		t.Fatal("the first step's calls did not wait for the first to write the prefix")
	}
	before := len(srv.Requests())
	for _, r := range x.Execute(context.Background(), steps[1]) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		if r.Resp.Usage.CachedInputTokens == 0 {
			t.Errorf("%s read nothing from the cache", r.Task.Request.LastUser())
		}
	}
	if heldBack(t, srv, "step 2 call 0") {
		t.Error("the second step waited for a prefix the first had written")
	}
	if got := len(srv.Requests()) - before; got != 3 {
		t.Errorf("%d requests in the second step, want 3", got)
	}
}

// Calls held back for a prefix are encoded while they wait, but never take
// the slot the first call needs: with room for one call at a time, the
// first still goes first and every call is answered, each later one
// reading the prefix from the cache.
func TestRunHeldCallsNeverTakeTheFirstCallsSlot(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{PrefixCache: true, Latency: 50 * time.Millisecond})
	defer srv.Close()
	backend, err := openai.New(openai.Config{Name: "openai", BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-engine-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	results := Run(ctx, middleware.Limit(backend, 1, 0), sharedTasks(4, "openai:m", "narrow"), nil)
	for i, r := range results {
		if r.Err != nil {
			t.Fatalf("task %d: %v", i, r.Err)
		}
		if i > 0 && r.Resp.Usage.CachedInputTokens == 0 {
			t.Errorf("task %d read nothing from the cache", i)
		}
	}
	if reqs := srv.Requests(); len(reqs) == 0 || reqs[0].LastUser() != "narrow task 0" {
		t.Errorf("the first request to arrive was not the first task's")
	}
}

// A call that fails once the run's context is cancelled is reported as
// cancelled, whatever error its backend made of the end (a program the
// same Ctrl-C killed says only "signal: interrupt"): the display shows it
// as cancelled, not failed. A call that failed before is left as it was.
func TestCancelledCallsReadCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	p := llm.ProviderFunc(func(cctx context.Context, req *llm.Request) (*llm.Response, error) {
		if req.Label == "early" {
			return nil, &llm.Error{Kind: llm.ErrUnavailable, Message: "HTTP 500"}
		}
		close(started)
		<-cctx.Done()
		return nil, &llm.Error{Kind: llm.ErrUnavailable, Message: `"llm" failed (signal: interrupt)`}
	})
	task := func(id string) *Task {
		return &Task{ID: id, Group: "g", Request: &llm.Request{Model: "command:m", Label: id, Messages: []llm.Message{{Role: llm.RoleUser, Content: id}}}}
	}
	early := Run(ctx, p, []*Task{task("early")}, nil)
	go func() { <-started; cancel() }()
	var failed []Event
	late := Run(ctx, p, []*Task{task("late")}, func(e Event) {
		if e.State == Failed {
			failed = append(failed, e)
		}
	})
	if errors.Is(early[0].Err, context.Canceled) {
		t.Errorf("a call that failed before Ctrl-C reads cancelled: %v", early[0].Err)
	}
	if len(failed) != 1 || !errors.Is(failed[0].Err, context.Canceled) || !errors.Is(late[0].Err, context.Canceled) {
		t.Fatalf("the call stopped by the cancel is not reported cancelled: %v", late[0].Err)
	}
	if !errors.Is(late[0].Err, llm.ErrUnavailable) {
		t.Errorf("the backend's error is lost: %v", late[0].Err)
	}
}

// oneAtATime is an llm.Scheduler that runs what it is given one at a
// time on its own goroutine, as a workflow's coroutines run, and counts
// what it ran.
type oneAtATime struct {
	mu    sync.Mutex
	ran   int
	queue []func()
}

func (s *oneAtATime) Go(ctx context.Context, f func(context.Context)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ran++
	s.queue = append(s.queue, func() { f(ctx) })
}

func (s *oneAtATime) Await(ctx context.Context, cond func() bool) error {
	for !cond() {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.mu.Unlock()
			return errors.New("waiting for what nothing will do")
		}
		f := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		f()
	}
	return nil
}

// Under a scheduler (a workflow's coroutines), a step's calls are started
// by the scheduler and waited for through it, not on goroutines of the
// engine's own; their results keep the order of the tasks, a prefix three
// calls share is not waited for, and Detach runs its calls inline.
func TestRunUnderAScheduler(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{User: "task 1", Fault: llmtest.Fault401}}})
	defer srv.Close()
	p, err := openai.New(openai.Config{Name: "openai", BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-engine-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	shared := strings.Repeat("a long shared prefix that a provider could cache. ", 200)
	var tasks []*Task
	for i := range 3 {
		tasks = append(tasks, &Task{ID: fmt.Sprintf("t%d", i), Request: &llm.Request{Model: "openai:gpt-4.1", System: shared, SharedPrefix: len(shared),
			Messages: []llm.Message{{Role: llm.RoleUser, Content: fmt.Sprintf("task %d", i)}}}})
	}
	s := &oneAtATime{}
	ctx := llm.WithScheduler(context.Background(), s)
	var states []string
	x := &Local{Provider: p, Hooks: Hooks{Events: func(e Event) { states = append(states, e.Task.ID+" "+e.State.String()) }}}
	results := x.Execute(ctx, tasks)
	if s.ran != 3 {
		t.Errorf("the scheduler started %d calls, want 3", s.ran)
	}
	for i, r := range results {
		if r.Task != tasks[i] || (i == 1) != (r.Err != nil) {
			t.Errorf("result %d: %s, %v", i, r.Task.ID, r.Err)
		}
	}
	want := []string{"t0 queued", "t1 queued", "t2 queued", "t0 running", "t0 done", "t1 running", "t1 failed", "t2 running", "t2 done"}
	if !slices.Equal(states, want) {
		t.Errorf("events %q, want %q", states, want)
	}
	d := Detach(ctx, x, tasks[:1])
	select {
	case <-d.Done():
	default:
		t.Error("a detached call under a scheduler is still running once Detach returns")
	}
	if s.ran != 4 || d.Wait()[0].Err != nil {
		t.Errorf("the detached call: %d calls started, result %v", s.ran, d.Wait()[0].Err)
	}
}

// A task whose prompt Compose builds is sent with that prompt, built once,
// when its call goes: the calls waiting for a named shared prefix build
// theirs only once the first call's answer has started. The prompt stays
// in the task's request, and a later step whose prompts have the same
// prefix bytes does not wait for it again.
func TestRunComposesPromptsAsTheyGo(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Latency: firstToken, FirstToken: firstToken, PrefixCache: true})
	defer srv.Close()
	x := &Local{Provider: cachingRouter(t, srv)}
	tasks := sharedTasks(4, "openai:gpt-4.1", "deferred")
	var mu sync.Mutex
	var built []string // the tasks whose prompts were built, in order
	want := map[string]string{}
	for _, task := range tasks {
		sys := task.Request.System
		want[task.ID] = sys
		task.Request.System, task.Prefix = "", "the material"
		task.Compose = func() string {
			mu.Lock()
			defer mu.Unlock()
			built = append(built, task.ID)
			return sys
		}
	}
	for _, r := range x.Execute(context.Background(), tasks) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		if r.Task.Request.System != want[r.Task.ID] {
			t.Errorf("%s keeps a system prompt of %d bytes, want its built %d", r.Task.ID, len(r.Task.Request.System), len(want[r.Task.ID]))
		}
	}
	slices.Sort(built[1:])
	if !slices.Equal(built, []string{"t0", "t1", "t2", "t3"}) {
		t.Errorf("prompts built %v, want each once, the first task's first", built)
	}
	for _, r := range srv.Requests() {
		if r.System != want["t"+strings.TrimPrefix(r.LastUser(), "deferred task ")] {
			t.Errorf("%q was sent with another system prompt (%d bytes)", r.LastUser(), len(r.System))
		}
	}
	if !heldBack(t, srv, "deferred task 0") {
		t.Error("the calls did not wait for the first to write the named prefix")
	}
	// The next step's prompts, built already, begin with the same bytes.
	next := sharedTasks(3, "openai:gpt-4.1", "deferred")
	for k, task := range next {
		task.Request.Messages[0].Content = fmt.Sprintf("next call %d", k)
	}
	x.Execute(context.Background(), next)
	if heldBack(t, srv, "next call 0") {
		t.Error("the next step waited for a prefix the deferred prompts had written")
	}
}

// Only a few calls of a Run build their requests at once (builders, one
// fewer than the cores), each starting when an earlier one has handed its
// request to the HTTP client: the first request goes out after its own
// work, not after every call's. A call gives its slot back as its request
// leaves, not when its answer comes: the server holds every answer until
// all the requests have arrived, which they could not if each call kept
// its slot until it returned.
func TestRunBuildsFewRequestsAtOnce(t *testing.T) {
	n := builders() + 3
	var arrived atomic.Int32
	var timedOut atomic.Bool
	all := make(chan struct{})
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: func(*llmtest.Recorded) llmtest.Reply {
		if arrived.Add(1) == int32(n) {
			close(all)
		}
		select {
		case <-all:
		case <-time.After(2 * time.Second):
			timedOut.Store(true)
		}
		return llmtest.Reply{}
	}}}})
	defer srv.Close()
	var mu sync.Mutex
	building, most := 0, 0
	var tasks []*Task
	for i := range n {
		model := "openai:gpt-4.1"
		if i%2 == 1 {
			model = "anthropic:claude-sonnet-4-5"
		}
		task := &Task{ID: fmt.Sprintf("t%d", i), Group: "g", Request: &llm.Request{Model: model,
			Messages: []llm.Message{{Role: llm.RoleUser, Content: fmt.Sprintf("task %d", i)}}}}
		task.Compose = func() string {
			mu.Lock()
			building++
			most = max(most, building)
			mu.Unlock()
			time.Sleep(2 * time.Millisecond) // a long prompt's building
			mu.Lock()
			building--
			mu.Unlock()
			return "You review."
		}
		tasks = append(tasks, task)
	}
	for _, r := range Run(context.Background(), cachingRouter(t, srv), tasks, nil) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if most > builders() {
		t.Errorf("%d requests were built at once, want at most %d", most, builders())
	}
	if timedOut.Load() {
		t.Errorf("not all %d requests arrived while the first answers were held: the calls kept their slots until they returned", n)
	}
}

// Run says when the run waits on models (WithWaiting): once every call
// has sent its request, not while one is still being built, and once a
// Run.
func TestRunSaysWhenItWaitsOnModels(t *testing.T) {
	var fired, whileBuilding, arrivals, atLast atomic.Int32
	const n = 4
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: func(*llmtest.Recorded) llmtest.Reply {
		if arrivals.Add(1) == n {
			atLast.Store(fired.Load())
		}
		return llmtest.Reply{}
	}}}})
	defer srv.Close()
	var tasks []*Task
	for i := range n {
		task := &Task{ID: fmt.Sprintf("t%d", i), Group: "g", Request: &llm.Request{Model: "openai:gpt-4.1",
			Messages: []llm.Message{{Role: llm.RoleUser, Content: fmt.Sprintf("task %d", i)}}}}
		task.Compose = func() string {
			whileBuilding.Add(fired.Load())
			return fmt.Sprintf("You review, %d.", i)
		}
		tasks = append(tasks, task)
	}
	ctx := WithWaiting(context.Background(), func() { fired.Add(1) })
	for _, r := range Run(ctx, cachingRouter(t, srv), tasks, nil) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if whileBuilding.Load() != 0 {
		t.Error("the run said it waited on models while a call was still being built")
	}
	if atLast.Load() != 1 || fired.Load() != 1 {
		t.Errorf("said %d time(s) by the last request's arrival, %d in all; want once, before the last request arrived", atLast.Load(), fired.Load())
	}
}
