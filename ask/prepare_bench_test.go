package ask

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sotlabs/sot/ask/corpus"
	"github.com/sotlabs/sot/internal/benchload"
	"github.com/sotlabs/sot/internal/corpusgen"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/stack"
)

// BenchmarkAskUnchangedCorpus: the time sot ask takes before its first
// request, over a corpus of 1,000 and of 10,000 generated small notes
// (internal/corpusgen: dated notes, people, disagreements) that an earlier question already indexed and that has
// not changed since: from the start of Prepare to the arrival of the first
// request at the fake provider, through Execute. Reported as medians:
// first-request-ms, and prepare-ms, the part of it Prepare takes, with
// prepare-cpu-ms, the CPU time of the process while Prepare runs (what a
// loaded machine has to find for it; the collector's included);
// prepare-alloc-MB, the memory Prepare allocates (sot ask prepares with
// the collector held off, so each page of it is fresh memory the kernel
// maps on first touch, at some microseconds a page on a virtual machine); and
// files-read, how many files one question reads (those of the sources it
// chose, when the corpus is read incrementally). The goal of issue 23 is
// 50 ms at 1,000 notes and 150 ms at 10,000; the benchmark fails when the
// median misses it by more than half again, which only a regression does
// (the goal holds on a quiet machine; a loaded one takes longer). With
// SOT_BENCH_HOGS=N it runs beside N processes spinning on the CPU, and
// reports their number and the load average (internal/benchload).
func BenchmarkAskUnchangedCorpus(b *testing.B) {
	hogs := benchload.FromEnv(b)
	for _, size := range []struct {
		notes int
		goal  time.Duration
	}{{1_000, 50 * time.Millisecond}, {10_000, 150 * time.Millisecond}} {
		b.Run(fmt.Sprintf("notes=%d", size.notes), func(b *testing.B) {
			b.Setenv("XDG_CACHE_HOME", b.TempDir())
			top := b.TempDir()
			if err := os.MkdirAll(filepath.Join(top, ".git"), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := corpusgen.Write(filepath.Join(top, ".sot", "corpus"), size.notes, 2026); err != nil {
				b.Fatal(err)
			}
			// A corpus written a moment ago is read again until its files
			// are older than the window in which a change could hide in
			// the same clock tick; a corpus at rest is older than that.
			time.Sleep(corpus.RacyWindow)
			b.Chdir(top) // sot ask runs in the project, which shows the corpus's paths from there
			srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: benchResponder}}})
			defer srv.Close()
			o := benchAskOptions(b, top, srv.OpenAIBaseURL(), nil)
			o.Question = corpusgen.Question
			ctx := context.Background()
			var reads atomic.Int64
			corpusReadFile = func(name string) ([]byte, error) {
				reads.Add(1)
				return os.ReadFile(name)
			}
			defer func() { corpusReadFile = nil }()

			ask := func(dir string) (prepare, first, cpu time.Duration, alloc uint64) {
				o.OutputDir = dir
				before := srv.Count()
				var mem runtime.MemStats
				runtime.ReadMemStats(&mem)
				alloc = mem.TotalAlloc
				start, cpu0 := time.Now(), benchload.CPUTime()
				stack.Preconnect(o.Config, "") // as sot ask does, while the corpus is read
				p, err := Prepare(ctx, o)
				runtime.ReadMemStats(&mem)
				alloc = mem.TotalAlloc - alloc
				if err != nil {
					b.Fatal(err)
				}
				prepare, cpu = time.Since(start), benchload.CPUTime()-cpu0
				if len(p.Chosen) != 10 {
					b.Fatalf("chose %d sources, want 10", len(p.Chosen))
				}
				if _, err := Execute(ctx, p, o); err != nil {
					b.Fatal(err)
				}
				reqs := srv.Requests()[before:]
				if len(reqs) == 0 {
					b.Fatal("no request reached the provider")
				}
				t0 := reqs[0].Time
				for _, r := range reqs {
					if r.Time.Before(t0) {
						t0 = r.Time
					}
				}
				return prepare, t0.Sub(start), cpu, alloc
			}
			ask(filepath.Join(top, ".sot", "answers", "first")) // the earlier question: it builds the index

			var preps, firsts, cpus []time.Duration
			var allocs []float64
			reads.Store(0)
			for i := 0; b.Loop(); i++ {
				p, f, c, a := ask(filepath.Join(top, ".sot", "answers", fmt.Sprintf("run-%03d", i)))
				allocs = append(allocs, float64(a)/(1<<20))
				preps, firsts, cpus = append(preps, p), append(firsts, f), append(cpus, c)
			}
			b.StopTimer()
			med := median(firsts)
			b.ReportMetric(float64(med)/float64(time.Millisecond), "first-request-ms")
			b.ReportMetric(float64(median(preps))/float64(time.Millisecond), "prepare-ms")
			b.ReportMetric(float64(median(cpus))/float64(time.Millisecond), "prepare-cpu-ms")
			slices.Sort(allocs)
			b.ReportMetric(allocs[len(allocs)/2], "prepare-alloc-MB")
			b.ReportMetric(float64(reads.Load())/float64(len(firsts)), "files-read")
			if hogs > 0 {
				b.ReportMetric(float64(hogs), "cpu-hogs")
				b.ReportMetric(benchload.LoadAverage(), "load-1m")
			}
			b.Logf("%d notes, unchanged: first request after %v (median of %d; goal %v), Prepare %v; fastest %v; %.0f file(s) read a question",
				size.notes, med.Round(time.Millisecond), len(firsts), size.goal, median(preps).Round(time.Millisecond), slices.Min(firsts).Round(time.Millisecond),
				float64(reads.Load())/float64(len(firsts)))
			if med > size.goal*3/2 {
				b.Fatalf("%d unchanged notes: the first request left after %v, over the goal of %v by more than half", size.notes, med, size.goal)
			}
		})
	}
}
