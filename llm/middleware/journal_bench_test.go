package middleware

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

// resumeShape is the work of a finished 500-source question: one map call
// a source, each prompt a shared preamble and the source, each answer a
// structured reading of a few KB; a debate over the answers; one reduce
// call whose prompt holds every answer and whose answer is large.
const (
	resumeMaps    = 500
	resumeSources = 2 << 10 // bytes of source text in each map prompt
	resumeAnswer  = 3 << 10 // bytes of each map answer
)

// resumeRequests are the requests of that question, in the order a run
// sends them, and the answer each one got.
func resumeRequests() ([]*llm.Request, []*llm.Response) {
	preamble := strings.Repeat("You read one source and answer the question from it, quoting it. ", 60)
	words := strings.Fields("pricing hiring cluster audit roadmap ticket budget contract renewal quarter team decision")
	text := func(seed, n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			b.WriteString(words[(seed*7+i*i)%len(words)])
			b.WriteByte(' ')
		}
		return b.String()
	}
	answer := func(v any) *llm.Response {
		raw, _ := json.Marshal(v)
		return &llm.Response{Text: string(raw), JSON: raw, FinishReason: llm.FinishStop, Model: "openai:gpt-4.1",
			Usage: llm.Usage{InputTokens: 1500, OutputTokens: len(raw) / 4}, Latency: 280 * time.Millisecond, RequestID: "req-0123456789"}
	}
	temp := 0.2
	var reqs []*llm.Request
	var resps []*llm.Response
	var answers strings.Builder
	for i := range resumeMaps {
		reqs = append(reqs, &llm.Request{Model: "openai:gpt-4.1", System: preamble + "\n# Source " + fmt.Sprint(i) + "\n" + text(i, resumeSources),
			SharedPrefix: len(preamble), Temperature: &temp, MaxTokens: 2048, Label: fmt.Sprintf("ask/map/A%d", i+1),
			Schema:   &llm.Schema{Name: "ask_map", JSON: json.RawMessage(`{"type":"object","properties":{"summary":{"type":"string"}}}`)},
			Messages: []llm.Message{{Role: llm.RoleUser, Content: "How do the teams' positions differ, and why?"}}})
		summary := text(i+1, resumeAnswer/2)
		resps = append(resps, answer(map[string]any{"addresses": true, "summary": summary,
			"points": []any{map[string]any{"point": text(i+2, resumeAnswer/4), "quote": "said \"it\" cannot start\n"}}}))
		fmt.Fprintf(&answers, "A%d (analyst, from the source %d): %s\n", i+1, i, summary)
	}
	reqs = append(reqs, &llm.Request{Model: "openai:gpt-4.1", System: preamble, Label: "ask/debate",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: answers.String()}}})
	resps = append(resps, answer(map[string]any{"tensions": []any{text(1, 4<<10)}, "recommendations": []any{text(2, 2<<10)}}))
	reqs = append(reqs, &llm.Request{Model: "openai:gpt-4.1", System: preamble, Label: "ask/reduce",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: answers.String() + text(3, 8<<10)}}})
	var sentences []any
	for i := range resumeMaps {
		sentences = append(sentences, map[string]any{"text": text(i, 200), "answers": []any{fmt.Sprintf("A%d", i+1)}})
	}
	resps = append(resps, answer(map[string]any{"sentences": sentences}))
	// A repeated identical request, as a schema repair or a retry of the
	// same step makes: it must be replayed in its turn.
	reqs = append(reqs, reqs[0])
	resps = append(resps, answer(map[string]any{"addresses": false, "summary": "again"}))
	return reqs, resps
}

// replayGoal bounds BenchmarkJournalReplay's median: a fifth of issue 23's
// 0.5 s for the whole resume of a 503-call question.
const replayGoal = 100 * time.Millisecond

// BenchmarkJournalReplay: a resumed run of a finished 500-source question
// (503 records, about 4 MB) opens the journal, counts what it had spent
// (as the stack does on resume) and has every call answered from it, with
// the backend behind it never reached. Reported: the median milliseconds
// of one replay, the median time to read the file alone (what replay
// cannot go below), the journal's size, and the allocations per replay
// (allocs/op, B/op with -benchmem). It fails above replayGoal.
func BenchmarkJournalReplay(b *testing.B) {
	p, srv := backend(b, llmtest.Config{})
	path := filepath.Join(b.TempDir(), "run", "journal.jsonl")
	reqs, resps := resumeRequests()
	j, err := OpenJournal(path)
	if err != nil {
		b.Fatal(err)
	}
	for i, req := range reqs {
		if err := j.Append(req, resps[i]); err != nil {
			b.Fatal(err)
		}
	}
	j.Close()
	info, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var times []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		j, err := OpenJournal(path)
		if err != nil {
			b.Fatal(err)
		}
		if calls, _ := j.LoadedUsage(); calls != len(reqs) {
			b.Fatalf("the journal counts %d paid calls, want %d", calls, len(reqs))
		}
		w := j.Wrap(p)
		for i, req := range reqs {
			r, err := w.Complete(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			if r.Source != llm.SourceJournal || len(r.Text) != len(resps[i].Text) {
				b.Fatalf("call %d (%s) was not replayed from the journal", i, req.Label)
			}
		}
		j.Close()
		times = append(times, time.Since(start))
	}
	if n := srv.Count(); n != 0 {
		b.Fatalf("%d calls reached the backend; a finished run must replay them all", n)
	}
	slow := times[0]
	for _, t := range times {
		slow = max(slow, t)
	}
	var reads []time.Duration
	for range 5 {
		start := time.Now()
		if _, err := os.ReadFile(path); err != nil {
			b.Fatal(err)
		}
		reads = append(reads, time.Since(start))
	}
	med := medianDuration(times)
	b.ReportMetric(float64(med)/float64(time.Millisecond), "replay-ms")
	b.ReportMetric(float64(medianDuration(reads))/float64(time.Millisecond), "read-file-ms")
	b.ReportMetric(float64(info.Size())/(1<<20), "journal-MB")
	b.ReportMetric(float64(len(reqs)), "records")
	b.Logf("%d records, %.1f MB: median %v, slowest %v; reading the file alone %v", len(reqs), float64(info.Size())/(1<<20), med, slow, medianDuration(reads))
	if med > replayGoal {
		b.Fatalf("a replay took %v; the journal's share of a resume must stay under %v", med, replayGoal)
	}
}

// medianDuration is the middle of ds.
func medianDuration(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
