// Package engine is what every scenario of sot shares to run a society of
// personas: the Task a model call is, the Executor that runs a step's
// tasks (Local: all at once within the providers' limits, a shared prompt
// prefix written once, an unusable model replaced by the fallback) with an
// Event for each change of state, the Hooks through which a run reaches the
// user and the log, the Roster that gives each persona its model,
// Estimates of a plan's cost, seeded shuffles and budget batches for
// deterministic protocols, and UserError for what the caller must fix.
// engine/run keeps a run on disk. Scenarios (review, ask, debate) import
// engine; engine imports none of them.
package engine

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/middleware"
)

// State is where a task is.
type State int

// Task states.
const (
	Queued State = iota
	Running
	Done
	Failed
)

func (s State) String() string { return [...]string{"queued", "running", "done", "failed"}[s] }

// Task is one model call, or, when it has Looks, the rounds of calls in
// which a model looks at a project before it answers.
type Task struct {
	// ID is unique within a Run; Group gathers tasks for display (a specialist).
	ID      string
	Group   string
	Request *llm.Request
	// Support marks a call that serves the step rather than being one of
	// its personas' (a debate hub's summary, the lead's synthesis):
	// displays count it apart from the personas' work.
	Support bool
	// Looks, when set, offers the model tools: the task is then the rounds
	// of Converse, and its Result the final answer (see Looks).
	Looks *Looks
	// Compose, when set, builds the request's system prompt, which
	// Request.System lacks until then: the engine builds it as the task's
	// call is first sent, and keeps it in Request (see Prompt). A step
	// whose prompts each copy large material then builds each one when
	// its call goes out, and its first call waits for no other's prompt.
	Compose func() string
	// Prefix names the shared prefix of a prompt that Compose builds (its
	// first Request.SharedPrefix bytes), which cannot be read before it
	// exists: tasks of one model with the same Prefix and SharedPrefix
	// share it. Unnamed, such a prompt is taken to share no prefix.
	Prefix string
}

// Prompt returns the task's request with its system prompt built: Compose
// is called, once, when Request.System is still empty. A task's Prompt is
// not called from two goroutines at once: the engine calls it from the one
// that sends the task.
func (t *Task) Prompt() *llm.Request {
	if t.Compose != nil && t.Request.System == "" {
		t.Request.System = t.Compose()
	}
	return t.Request
}

// Event reports a task's new state.
type Event struct {
	Task  *Task
	State State
	// Resp is set when Done; Err when Failed.
	Resp *llm.Response
	Err  error
	At   time.Time
}

// Result is a finished task.
type Result struct {
	Task *Task
	Resp *llm.Response
	Err  error
	// FellBack is set when the task ran on the fallback model (see Local).
	FellBack *FellBack
}

// Run sends every task through p concurrently and returns the results in
// the order of tasks. onEvent, if set, is called for every change of state,
// one call at a time.
//
// Tasks whose requests share a prompt prefix (the same model, and the same
// leading Request.SharedPrefix bytes of System) are not all sent at once
// when the provider could cache that prefix and three or more of them
// share it. Providers' prompt caches (Anthropic's cache_control, OpenAI's
// automatic caching) serve a prefix only once a first request has written
// it, which happens as its answer starts; calls sent together all pay to
// write it. So the first task of each such group goes first, and the
// others go as soon as its answer starts streaming, or as soon as it
// finishes if it was answered at once (from the journal or the cache) or
// its attempt failed. Until then they stay out of the stack, holding no
// slot under the providers' limits and using no processor time. A request
// whose prompt holds large material is hundreds of kilobytes of JSON to
// encode: when the waiting calls were encoded beside the first calls of a
// step (one for each prefix, all at once), those went out later, the
// run's first call among them, and the waiting ones went no sooner for
// being ready early.
//
// No call waits where the wait cannot pay: for a provider that keeps no
// cache (command:, ollama:), for a prefix shorter than the model's cache
// floor (llm.MinCachePrefix, in tokens), for a group of two, where the
// wait for a first token would buy one cached read, and, under a Local,
// for a prefix one of its earlier calls had written within cacheLife.
func Run(ctx context.Context, p llm.Provider, tasks []*Task, onEvent func(Event)) []Result {
	return run(ctx, p, tasks, onEvent, nil)
}

// run is Run, with the prefixes the same Executor's calls have lately had
// written (nil: none known); no call waits for a prefix written lately.
func run(ctx context.Context, p llm.Provider, tasks []*Task, onEvent func(Event), warm *written) []Result {
	var mu sync.Mutex
	emit := func(e Event) {
		if onEvent == nil {
			return
		}
		e.At = time.Now()
		mu.Lock()
		defer mu.Unlock()
		onEvent(e)
	}
	for _, t := range tasks {
		emit(Event{Task: t, State: Queued})
	}
	results := make([]Result, len(tasks))
	if s := llm.SchedulerOf(ctx); s != nil {
		scheduled(ctx, s, p, tasks, results, emit)
		return results
	}
	keys := make([]prefixKey, len(tasks))
	shared := make([]bool, len(tasks))
	sharing := map[prefixKey]int{}
	for i, t := range tasks {
		if keys[i], shared[i] = taskKey(t); shared[i] {
			sharing[keys[i]]++
		}
	}
	now := time.Now()
	firsts := map[prefixKey]*release{}
	building := make(chan struct{}, builders())
	// Each call waits for the first of its prefix's group to start
	// answering (wait), or is that first call, or neither.
	waits, opens := make([]*release, len(tasks)), make([]*release, len(tasks))
	var unsent atomic.Int64 // the calls that wait for no prefix and have yet to send
	for i := range tasks {
		key := keys[i]
		if shared[i] && sharing[key] >= minSharing && !warm.fresh(key, now) {
			if r, ok := firsts[key]; ok {
				waits[i] = r
			} else {
				opens[i] = &release{ch: make(chan struct{})}
				firsts[key] = opens[i]
			}
		}
		if waits[i] == nil {
			unsent.Add(1)
		}
	}
	var wg sync.WaitGroup
	for i, t := range tasks {
		wait, first := waits[i], opens[i]
		key := keys[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx := ctx
			if wait != nil {
				select {
				case <-wait.ch:
				case <-ctx.Done():
				}
			}
			// A slot to build the request in, given back when the call
			// yields (llm.Yield: it is sent, or it waits) or returns.
			var built sync.Once
			sent := func() {
				if wait == nil && unsent.Add(-1) == 0 {
					waiting(ctx) // every call that could go has: the run waits on models
				}
			}
			select {
			case building <- struct{}{}:
			case <-ctx.Done():
				built.Do(sent) // no slot to give back
			}
			yield := func() { built.Do(func() { sent(); <-building }) }
			defer yield()
			cctx = llm.WithYield(cctx, yield)
			// Running is reported when the provider's limits let the call
			// through, not when it starts waiting for a slot; a call answered
			// from the journal or cache is reported running as it finishes.
			var started sync.Once
			running := func() {
				started.Do(func() { emit(Event{Task: t, State: Running}) })
			}
			req := t.Prompt().Clone()
			req.OnStart = running
			if first != nil {
				cctx = middleware.WithAnswerStart(cctx, first.open)
			}
			resp, err := Converse(cctx, p, req, t.Looks)
			yield()
			if first != nil {
				first.open()
			}
			running()
			if shared[i] && err == nil && resp != nil && resp.Source == llm.SourceLive {
				if t.Compose != nil {
					// A later step's prompts are read: the prefix is
					// remembered by its bytes.
					key, _ = keyOf(req)
				}
				warm.mark(key, time.Now())
			}
			results[i] = finish(ctx, t, resp, err, emit)
		}()
	}
	wg.Wait()
	return results
}

// finish makes the Result of a task whose call returned resp and err, and
// reports it.
func finish(ctx context.Context, t *Task, resp *llm.Response, err error, emit func(Event)) Result {
	err = stoppedBy(ctx, err)
	if err != nil {
		emit(Event{Task: t, State: Failed, Err: err})
		return Result{Task: t, Err: err}
	}
	emit(Event{Task: t, State: Done, Resp: resp})
	return Result{Task: t, Resp: resp}
}

// scheduled runs tasks as run does, on the coroutines of s (a workflow's,
// see llm.Scheduler) in the order of the tasks, and returns once every one
// has finished. No call waits for a shared prefix: what a call is waiting
// for is an activity, which reports no first token.
func scheduled(ctx context.Context, s llm.Scheduler, p llm.Provider, tasks []*Task, results []Result, emit func(Event)) {
	left := len(tasks)
	for i, t := range tasks {
		s.Go(ctx, func(ctx context.Context) {
			defer func() { left-- }()
			var started bool
			running := func() {
				if !started {
					started = true
					emit(Event{Task: t, State: Running})
				}
			}
			req := t.Prompt().Clone()
			req.OnStart = running
			resp, err := Converse(ctx, p, req, t.Looks)
			running()
			results[i] = finish(ctx, t, resp, err, emit)
		})
	}
	waiting(ctx) // every call is scheduled
	// Every call is waited for, cancelled or not: a cancelled call ends
	// with its error, which its Result carries.
	_ = s.Await(context.WithoutCancel(ctx), func() bool { return left == 0 })
}

type waitingKey struct{}

// WithWaiting returns ctx carrying f, which Run calls when every call it
// started that waits for no other has sent its request (llm.Yield), been
// answered, or been stopped: from then the run waits on models until an
// answer comes. A command holds its collector off until its calls are sent
// (gchold), so that collecting runs while the models think rather than
// while the first requests are built. f is called once a Run (a run of
// several steps calls it for each), so it must allow that.
func WithWaiting(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, waitingKey{}, f)
}

// waiting calls the function WithWaiting put in ctx, if any.
func waiting(ctx context.Context) {
	if f, ok := ctx.Value(waitingKey{}).(func()); ok {
		f()
	}
}

// stoppedBy makes a call that failed once ctx was done say so: whatever a
// backend made of the end (a program killed by the same Ctrl-C, a stream
// cut), the error then wraps ctx's error, so that the call reads as
// cancelled rather than failed and the same command runs it again.
func stoppedBy(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil || errors.Is(err, ctx.Err()) {
		return err
	}
	return fmt.Errorf("%w: %w", ctx.Err(), err)
}

// builders is how many calls of a Run build and encode their requests at
// once: one core fewer than the process may use, so that a request that
// is ready to go, or an answer that arrives, finds a core free instead of
// waiting behind requests still being built (Go's scheduler runs the
// goroutines it has in hand before it looks at the network again).
func builders() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// minSharing is the fewest calls sharing a prefix that are worth holding
// back for it: with two, the second would wait for the first's first token
// to save one cache write.
const minSharing = 3

// prefixKey identifies a shared prefix sent to a model: by a hash of its
// bytes, or by the name a task gives it (Task.Prefix).
type prefixKey struct {
	model string
	hash  uint64
	n     int
	named bool
}

// taskKey is keyOf the task's request, or of its named prefix when its
// prompt is not built yet (Task.Compose).
func taskKey(t *Task) (prefixKey, bool) {
	req := t.Request
	if t.Compose == nil || req.System != "" {
		return keyOf(req)
	}
	if n := req.SharedPrefix; t.Prefix != "" && cacheable(req.Model, n) {
		return prefixKey{req.Model, maphash.String(prefixSeed, t.Prefix), n, true}, true
	}
	return prefixKey{}, false
}

var prefixSeed = maphash.MakeSeed()

// keyOf returns the key of req's shared prefix, and false when no prompt
// cache could hold it: the model's provider keeps none, or the prefix is
// shorter than the model's floor (llm.MinCachePrefix). Its tokens are
// estimated at four bytes each, about what English text has with either
// provider's tokenizer; code, numbers and other scripts have more tokens a
// byte, so the estimate errs low, and a prefix near the floor is sent
// without a wait rather than waited for in vain.
func keyOf(req *llm.Request) (prefixKey, bool) {
	n := req.SharedPrefix
	if n > len(req.System) || !cacheable(req.Model, n) {
		return prefixKey{}, false
	}
	return prefixKey{req.Model, maphash.String(prefixSeed, req.System[:n]), n, false}, true
}

// cacheable reports whether a prefix of n bytes reaches model's cache floor.
func cacheable(model string, n int) bool {
	floor := llm.MinCachePrefix(model)
	return n > 0 && floor > 0 && n/4 >= floor
}

// cacheLife is how long a prefix a call had written is taken to stay in
// the provider's cache: Anthropic keeps one five minutes after its last
// use, OpenAI five to ten minutes.
const cacheLife = 4 * time.Minute

// written remembers when an Executor's calls last had each prefix written
// to a provider's cache (a call answered live with it). A nil *written
// knows of none.
type written struct {
	mu sync.Mutex
	at map[prefixKey]time.Time
}

// fresh reports whether k was written within cacheLife of now.
func (w *written) fresh(k prefixKey, now time.Time) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	at, ok := w.at[k]
	return ok && now.Sub(at) < cacheLife
}

// mark records that k was written at now, and forgets the prefixes the
// providers have let go.
func (w *written) mark(k prefixKey, now time.Time) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.at == nil {
		w.at = map[prefixKey]time.Time{}
	}
	for old, at := range w.at {
		if now.Sub(at) >= cacheLife {
			delete(w.at, old)
		}
	}
	w.at[k] = now
}

// release lets the calls waiting for a prefix go (ch is closed), once:
// when the first call's answer starts, or when it ends.
type release struct {
	once sync.Once
	ch   chan struct{}
}

func (r *release) open() { r.once.Do(func() { close(r.ch) }) }
