package debate

import (
	"context"
	"testing"
	"time"
)

// BenchmarkPhase2 runs seed 003's Phase 2 workload through the command:
// provider and a fake llm program that sleeps 0.2 s a call: 5 generated
// observers, a main debate of 3 debaters × 2 rounds, and 5 branches × 2
// rounds, each with its synthesis and merge-back, then the final merge.
// It reports the calls, the steps (the critical path of dependent calls:
// each step waits for the one before), the critical path's time at 0.2 s
// a step, the wall time, and wall time over the critical path. The
// prototype needs 21.4 s for this workload at the same latency, without
// any merge-back.
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
}
