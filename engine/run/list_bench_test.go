package run

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkRunStatus: what one run's status costs in a project of 500
// finished runs, each with a 50 KB result, as sot mcp asks it of every job
// it reports on: ListDir reads that run alone; finding it in ListOf, as
// the server did before, reads every run. Reported: milliseconds a status
// each way.
func BenchmarkRunStatus(b *testing.B) {
	key := userKey(b)
	top := b.TempDir()
	answers := filepath.Join(".sot", "answers")
	result, _ := json.Marshal(struct {
		Finished
		Text string
	}{Finished{Calls: 12, CostUSD: 0.1}, strings.Repeat("a sentence of the answer. ", 2000)})
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := range 500 {
		dir := filepath.Join(top, answers, fmt.Sprintf("r%03d", i))
		writeRun(b, top, dir, key, State{RunID: fmt.Sprintf("r%03d", i), Created: at.Add(time.Duration(i) * time.Minute), Payload: &payload{Mode: "why?"}})
		if err := os.WriteFile(filepath.Join(dir, "result.json"), result, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	describe := func(e Entry, p *payload) Described {
		d := Described{Material: p.Mode}
		if r, ok := ReadResult[Finished](e, "result.json"); ok {
			d.Finished = r
		}
		return d
	}
	want := filepath.Join(answers, "r250")
	b.Run("ListDir", func(b *testing.B) {
		for b.Loop() {
			if l, ok := ListDir(top, want, prices, describe); !ok || l.ID != "r250" {
				b.Fatalf("%+v %v", l, ok)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/status")
	})
	b.Run("ListOf", func(b *testing.B) {
		for b.Loop() {
			all, err := ListOf(top, []string{filepath.Join(answers, "*")}, prices, describe)
			if err != nil || len(all) != 500 {
				b.Fatalf("%d runs, %v", len(all), err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/status")
	})
}
