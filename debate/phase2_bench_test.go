package debate

import (
	"context"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

// BenchmarkPhase2 runs seed 003's Phase 2 workload through the command:
// provider and a fake llm program that sleeps 0.2 s a call: 5 generated
// observers, a main debate of 3 debaters × 2 rounds, and 5 branches × 2
// rounds, each with its synthesis and merge-back, then the final merge.
// It reports the calls, the steps (the critical path of dependent calls:
// each step waits for the one before), the critical path's time at 0.2 s
// a step, the wall time, wall time over the critical path, and wall time
// over the prototype's: the prototype needs 21.4 s for this workload at
// the same latency, without any merge-back.
//
//	go test ./debate -run '^$' -bench Phase2 -benchtime 3x
func BenchmarkPhase2(b *testing.B) {
	const latency = 200 * time.Millisecond
	var calls, steps, branches int
	var wall time.Duration
	bin := fakeLLM(b)
	for b.Loop() {
		b.StopTimer()
		top := testProject(b)
		o, log := llmOptionsWith(b, bin, top, latency.String())
		o.Observers, o.Rounds, o.BranchRounds = "generate:5", 2, 2
		ctx := context.Background()
		p, err := Prepare(ctx, o)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		out, err := Execute(ctx, p, o)
		wall += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if err := out.Verdict(); err != nil {
			b.Fatalf("verdict: %v (missing %+v)", err, out.Result.Missing)
		}
		r := out.Result
		if len(r.Observers) != 5 || len(r.Debaters) != 3 {
			b.Fatalf("%d observers, %d debaters", len(r.Observers), len(r.Debaters))
		}
		calls += len(loggedCalls(b, log))
		steps += r.Usage.Steps
		branches += len(r.Branches)
	}
	n := float64(b.N)
	critical := float64(steps) / n * latency.Seconds()
	b.ReportMetric(float64(calls)/n, "calls")
	b.ReportMetric(float64(branches)/n, "branches")
	b.ReportMetric(float64(steps)/n, "steps")
	b.ReportMetric(critical, "critical-s")
	b.ReportMetric(wall.Seconds()/n, "wall-s")
	b.ReportMetric(wall.Seconds()/n/critical, "wall/critical")
	b.ReportMetric(wall.Seconds()/n/21.4, "wall/prototype")
}

// benchObservers are the five generated observers of BenchmarkPhase2HTTP,
// in the order they are generated, each far from the others, with their
// branch questions.
var benchObservers = []struct {
	ob       map[string]any
	question string
}{
	{obsCartographer, generatedQuestions["The Cartographer of Silences"]},
	{obsSurveyor, generatedQuestions["The Land Surveyor"]},
	{obsAccountant, generatedQuestions["The Household Accountant"]},
	{map[string]any{"name": "The Liturgist", "bias": "Ceremony shapes belief: a text performed at a rite means what the rite needs.",
		"focus": "Ritual, consecration, vows, sacred formulas and the congregation addressed", "blind_spots": []any{"economics", "terrain", "silence"},
		"example_questions": []any{"Which words work as a vow?", "Who is the congregation?"}, "anti_examples": []any{"Is it religious?", "What is the tone?"}},
		"Which sentence works as a vow the listeners take, and what binds them to keep it?"},
	{map[string]any{"name": "The Military Quartermaster", "bias": "Wars are won by supply, and every speech about sacrifice hides a ledger of men and materiel.",
		"focus": "Logistics, casualties, rations, regiments and the cost of holding a field", "blind_spots": []any{"prosody", "faith", "memory"},
		"example_questions": []any{"How many fell on that field?", "Who supplied the army?"}, "anti_examples": []any{"Was the war just?", "Who won?"}},
		"How many soldiers and wagons did holding that field cost, and does the speech count them?"},
}

// benchResponder answers BenchmarkPhase2HTTP's calls: the five observers
// in turn, each one's question, and responder's answers to the rest.
func benchResponder(r *llmtest.Recorded) llmtest.Reply {
	switch r.SchemaName {
	case observerSchemaName:
		n := len(listedObserver.FindAllString(unfenced(r.LastUser()), -1))
		return llmtest.Reply{JSON: benchObservers[min(n, len(benchObservers)-1)].ob}
	case questionSchemaName:
		m := youAre.FindStringSubmatch(unfenced(r.System))
		for _, b := range benchObservers {
			if m != nil && b.ob["name"] == m[1] {
				return llmtest.Reply{JSON: map[string]any{"question": b.question, "missing": "No turn asks.", "why": "Its bias.", "debate_summary": "The debaters disagree."}}
			}
		}
	}
	return responder(r)
}

// benchLatency is how long the fake server takes to answer a request: 200
// ms and 0 to jitter more, drawn from a hash of its prompt, so that a
// benchmark can tell the time each call had to take from the prompt alone.
func benchLatency(system, user string, jitter time.Duration) time.Duration {
	if jitter <= 0 {
		return 200 * time.Millisecond
	}
	h := fnv.New64a()
	h.Write([]byte(promptKey(system, user)))
	return 200*time.Millisecond + time.Duration(h.Sum64()%uint64(jitter))
}

// pathExecutor passes steps on to a Local and adds up the critical path
// of the calls it runs: each step's slowest call (benchLatency), a step
// waiting for the one before it. A batch of summaries only (detached,
// waited for by no step) adds nothing.
type pathExecutor struct {
	inner    engine.Executor
	jitter   time.Duration
	mu       sync.Mutex
	critical time.Duration
}

func (x *pathExecutor) Execute(ctx context.Context, tasks []*engine.Task) []engine.Result {
	var slowest time.Duration
	detached := true
	for _, t := range tasks {
		slowest = max(slowest, benchLatency(t.Request.System, t.Request.LastUser(), x.jitter))
		detached = detached && strings.HasSuffix(t.ID, "/summary")
	}
	if !detached {
		x.mu.Lock()
		x.critical += slowest
		x.mu.Unlock()
	}
	return x.inner.Execute(ctx, tasks)
}

// Detach runs the summaries beside the steps after, as Local does.
func (x *pathExecutor) Detach(ctx context.Context, tasks []*engine.Task) *engine.Detached {
	return engine.Go(ctx, x, tasks)
}

// BenchmarkPhase2HTTP runs BenchmarkPhase2's workload against the llmtest
// server over HTTP with the OpenAI provider and its prompt cache
// simulated, answering as the providers do: the first token at 40
// ms, the whole answer at 200 ms (the prototype's latency), or at 200 to
// 300 ms, drawn per prompt (see benchLatency). Every prompt carries the
// fenced passage, 1.1 KB: over 1,024 bytes, far under the 1,024 tokens
// OpenAI caches. It reports the steps, the waves (bursts of requests the
// server saw: a step whose calls wait for a first one to write a prefix
// makes two), sot's own critical path (every step's slowest call, added
// up), the wall time, wall over that critical path (goal ≤ 1.1) and wall
// over the prototype's 21.4 s (goal ≤ 0.17 at its 200 ms a call). A
// figure that misses its goal fails the benchmark.
//
//	go test ./debate -run '^$' -bench Phase2HTTP -benchtime 3x
func BenchmarkPhase2HTTP(b *testing.B) {
	for _, bc := range []struct {
		name   string
		jitter time.Duration
	}{{"200ms", 0}, {"200-300ms", 100 * time.Millisecond}} {
		b.Run(bc.name, func(b *testing.B) {
			srv := llmtest.NewServer(llmtest.Config{FirstToken: 40 * time.Millisecond, PrefixCache: true, Rules: []llmtest.Rule{{Respond: func(r *llmtest.Recorded) llmtest.Reply {
				reply := benchResponder(r)
				reply.Latency = benchLatency(r.System, r.LastUser(), bc.jitter)
				return reply
			}}}})
			defer srv.Close()
			var steps, waves, calls int
			var wall, critical time.Duration
			for b.Loop() {
				b.StopTimer()
				px := &pathExecutor{jitter: bc.jitter}
				o := testOptions(b, testProject(b), srv.OpenAIBaseURL(), nil)
				o.NewExecutor = func(p llm.Provider, h engine.Hooks, fallback string) engine.Executor {
					px.inner = &engine.Local{Provider: p, Hooks: h, Fallback: fallback}
					return px
				}
				o.Observers, o.Rounds, o.BranchRounds = "generate:5", 2, 2
				ctx := context.Background()
				p, err := Prepare(ctx, o)
				if err != nil {
					b.Fatal(err)
				}
				before := len(srv.Requests())
				b.StartTimer()
				start := time.Now()
				out, err := Execute(ctx, p, o)
				wall += time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				if err := out.Verdict(); err != nil {
					b.Fatalf("verdict: %v (missing %+v)", err, out.Result.Missing)
				}
				if r := out.Result; len(r.Observers) != 5 || len(r.Branches) != 5 {
					b.Fatalf("%d observers, %d branches; notes %q; missing %+v", len(r.Observers), len(r.Branches), r.Notes, r.Missing)
				}
				reqs := srv.Requests()[before:]
				calls += len(reqs)
				waves += burstsOf(reqs, 20*time.Millisecond)
				steps += out.Result.Usage.Steps
				critical += px.critical
			}
			n := float64(b.N)
			overPath, overProto := wall.Seconds()/critical.Seconds(), wall.Seconds()/n/21.4
			b.ReportMetric(float64(calls)/n, "calls")
			b.ReportMetric(float64(steps)/n, "steps")
			b.ReportMetric(float64(waves)/n, "waves")
			b.ReportMetric(critical.Seconds()/n, "critical-s")
			b.ReportMetric(wall.Seconds()/n, "wall-s")
			b.ReportMetric(overPath, "wall/critical")
			b.ReportMetric(overProto, "wall/prototype")
			b.Logf("%.0f calls in %.0f steps and %.0f waves: critical path %.2f s, wall %.2f s, %.3f over the critical path, %.3f of the prototype's 21.4 s",
				float64(calls)/n, float64(steps)/n, float64(waves)/n, critical.Seconds()/n, wall.Seconds()/n, overPath, overProto)
			if overPath > 1.1 {
				b.Fatalf("wall time %.3f over the critical path, the goal is 1.1 (issue 23)", overPath)
			}
			if bc.jitter == 0 && overProto > 0.17 {
				b.Fatalf("wall time %.3f of the prototype's, the goal is 0.17 (issue 23)", overProto)
			}
		})
	}
}

// burstsOf counts the bursts in which requests arrived: a request that
// arrives more than gap after every earlier one starts a new burst.
func burstsOf(reqs []llmtest.Recorded, gap time.Duration) int {
	var at []time.Time
	for _, r := range reqs {
		at = append(at, r.Time)
	}
	slices.SortFunc(at, time.Time.Compare)
	n := 0
	for i, t := range at {
		if i == 0 || t.Sub(at[i-1]) > gap {
			n++
		}
	}
	return n
}
