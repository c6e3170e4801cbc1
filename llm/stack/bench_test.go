package stack

import (
	"context"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/sotlabs/sot/internal/benchload"
	"github.com/sotlabs/sot/llm/llmtest"
)

// BenchmarkOrchestration measures what sot's own layers cost per call: 1,000
// calls through the full stack (journal, schema check, meter, router, retry,
// limit, OpenAI SDK) against llmtest at zero latency, concurrency 8. The
// CPU time and allocation counts include the in-process fake server.
func BenchmarkOrchestration(b *testing.B) {
	srv := llmtest.NewServer(llmtest.Config{RecordLimit: 16})
	defer srv.Close()
	var cpu time.Duration
	var mallocs uint64
	var ms runtime.MemStats
	for b.Loop() {
		b.StopTimer()
		st, err := New(testConfig(srv.OpenAIBaseURL()), Options{JournalPath: filepath.Join(b.TempDir(), "j.jsonl"), Getenv: env})
		if err != nil {
			b.Fatal(err)
		}
		runtime.ReadMemStats(&ms)
		startAllocs := ms.Mallocs
		start := benchload.CPUTime()
		b.StartTimer()
		var wg sync.WaitGroup
		sem := make(chan struct{}, 8)
		for i := range 1000 {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				if _, err := st.Complete(context.Background(), call(i)); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		b.StopTimer()
		cpu += benchload.CPUTime() - start
		runtime.ReadMemStats(&ms)
		mallocs += ms.Mallocs - startAllocs
		st.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*1000), "cpu-µs/call")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*1000), "wall-µs/call")
	b.ReportMetric(float64(mallocs)/float64(b.N*1000), "allocs/call")
}
