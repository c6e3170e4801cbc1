package conflict

import (
	"bufio"
	"fmt"
	"io"
	"testing"
	"time"
)

// detectGoal1k is how long Detect may take over 1,000 answers on a loaded
// machine: two fifths of issue 23's 0.5 s for a whole resumed ask, whose
// answers are fewer and shorter. Comparing every pair with maps of words
// took 1.5 s.
const detectGoal1k = 200 * time.Millisecond

// BenchmarkDetect: the lexical detector over 500 and 1,000 generated notes
// (corpusAnswers), the answers of an ask that reads every source, as
// answer.json needs it (the strongest pairs and the counts) and with
// every pair written as NDJSON (--format pairs, to a buffered discard).
// Reported: detect-ms, the mean time of one Detect, and the pairs
// compared. It fails when Detect over 1,000 answers, without NDJSON,
// takes longer than detectGoal1k.
func BenchmarkDetect(b *testing.B) {
	for _, n := range []int{500, 1000} {
		rs := corpusAnswers(b, n, 23)
		for _, ndjson := range []bool{false, true} {
			b.Run(fmt.Sprintf("answers=%d/ndjson=%v", n, ndjson), func(b *testing.B) {
				var a Analysis
				start := time.Now()
				for b.Loop() {
					o := Options{Threshold: DefaultThreshold, Keep: DefaultKeep}
					var w *bufio.Writer
					if ndjson {
						w = bufio.NewWriterSize(io.Discard, 64<<10)
						o.Each = NDJSON(w)
					}
					var err error
					if a, err = Detect(rs, o); err != nil {
						b.Fatal(err)
					}
					if w != nil {
						if err := w.Flush(); err != nil {
							b.Fatal(err)
						}
					}
				}
				ms := float64(time.Since(start)) / float64(time.Millisecond) / float64(b.N)
				b.ReportMetric(ms, "detect-ms")
				b.ReportMetric(float64(len(rs)*(len(rs)-1)/2), "pairs")
				b.Logf("%d answers: %d conflicts, %d agreements, %.1f ms a Detect", len(rs), a.TotalConflicts, a.TotalAgreements, ms)
				if n == 1000 && !ndjson && ms > float64(detectGoal1k)/float64(time.Millisecond) {
					b.Fatalf("Detect over %d answers took %.1f ms; it may take at most %v", n, ms, detectGoal1k)
				}
			})
		}
	}
}
