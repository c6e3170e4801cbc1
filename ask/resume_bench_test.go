package ask

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/middleware"
)

// resumeQuestion is comparative, so the debate step runs, and its words
// include the generated notes' common ones (team, meeting, update,
// discussed...), so retrieval finds every source of the corpus.
const resumeQuestion = "How do the team updates, concerns and proposals discussed in each meeting differ, and what did people suggest?"

// resumeResponder answers a question over generatedCorpus's notes as a
// model that did its job would: a MAP answer makes up to four points, each
// quoting thirty words of its source (an answer of about 2 KB), and
// summarizes with the source's first words; the debate finds no tension; the reduce
// answer has one sentence for each of the first 50 answers, in that
// answer's words, quoting its source (about 12 KB, within the step's 4,096
// tokens). So the reduce answer passes the check at the first try.
func resumeResponder(rec *llmtest.Recorded) llmtest.Reply {
	switch rec.SchemaName {
	case mapSchemaName:
		src := rec.System
		if i := strings.LastIndex(src, "\n# Source "); i >= 0 {
			src = src[i:]
		}
		body := ""
		for _, line := range strings.Split(src, "\n") {
			// The fence starts every line of the source with a mark.
			if line = strings.TrimPrefix(line, "│"); len(line) > len(body) {
				body = line
			}
		}
		words := strings.Fields(body)
		quote := strings.Join(words[:min(12, len(words))], " ")
		points := []any{}
		for k := 0; k+30 <= len(words) && k < 120; k += 30 {
			q := strings.Join(words[k:k+30], " ")
			points = append(points, map[string]any{"point": "The note says " + q + ".", "quote": q})
		}
		return llmtest.Reply{JSON: map[string]any{"addresses": true, "points": points,
			"summary": strings.ToUpper(quote[:1]) + quote[1:] + "."}}
	case debateSchemaName:
		return llmtest.Reply{JSON: map[string]any{"tensions": []any{}, "unique_risks": []any{}, "assumptions": []any{},
			"recommendations": []any{"give each team's update with the note it comes from"}}}
	case reduceSchemaName:
		sentences := []any{}
		for _, m := range benchAnswerRE.FindAllStringSubmatch(rec.LastUser(), 50) {
			sentences = append(sentences, map[string]any{"text": m[3], "answers": []any{m[1]}, "quote": strings.TrimSuffix(m[3], ".")})
		}
		return llmtest.Reply{JSON: map[string]any{"sentences": sentences, "tensions": []any{}}}
	}
	return llmtest.Reply{}
}

// resumeGoal is issue 23's goal for the resume of a finished question of
// about 500 calls (it measured one of 503), on a loaded machine.
const resumeGoal = 500 * time.Millisecond

// BenchmarkAskResume500: a question over 500 generated sources
// (generatedCorpus), every source read (ask.max_sources 500: 500 map
// calls, the debate, the reduce), answered once by llmtest; then the same
// question again, as `sot ask` run a second time does: Prepare and Execute
// find the finished run's journal and replay every call from it. No
// request may reach the server. ns/op is one resume (the mean); reported
// as medians: resume-ms (Prepare+Execute), prepare-ms (reading the
// corpus, the index, the selection), the map, debate and reduce steps as
// the Executor saw them (each call answered from the journal), and
// rest-ms (the rest of Execute: the stack, opening the journal, the
// conflict detector, the check, the files). Also reported: the
// journal's size, and journal-open-ms, the median time to open it (read
// and decode every record) and count what it had spent, measured apart
// after the resumes: the journal's own share of rest-ms. It fails when
// the median resume takes longer than resumeGoal.
func BenchmarkAskResume500(b *testing.B) {
	const n = 500
	b.Setenv("XDG_CACHE_HOME", b.TempDir())
	top := generatedCorpus(b, n)
	srv := llmtest.NewServer(llmtest.Config{RecordLimit: 64, Rules: []llmtest.Rule{{Respond: resumeResponder}}})
	b.Cleanup(srv.Close)
	o := benchAskOptions(b, top, srv.OpenAIBaseURL(), func(c *config.Config) { c.Ask.MaxSources = n })
	o.Question = resumeQuestion
	dir := filepath.Join(top, ".sot", "answers", "resume")
	first := runAsk(b, o, dir)
	if p := first.out.Plan; len(p.Chosen) != n || unread(p) != nil || !p.Debate {
		b.Fatalf("the first run chose %d sources in %d readings, unread %v (debate %v, %s); want %d", len(p.Chosen), len(p.Readings), unread(p), p.Debate, p.DebateWhy, n)
	}
	calls := first.out.Answer.Usage.Calls
	sent := srv.Count()

	o.Fresh = false
	ctx := context.Background()
	var walls, preps, maps, debates, reduces, rests []time.Duration
	for b.Loop() {
		t := newStepTally()
		o.NewExecutor = t.executor
		start := time.Now()
		p, err := Prepare(ctx, o)
		if err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		out, err := Execute(ctx, p, o)
		if err != nil {
			b.Fatal(err)
		}
		end := time.Now()
		if got := out.Answer.Usage.Replayed; got != calls {
			b.Fatalf("the resume replayed %d calls of the first run's %d", got, calls)
		}
		if len(out.Answer.Sentences) != len(first.out.Answer.Sentences) {
			b.Fatalf("the resumed answer has %d sentences, the first %d", len(out.Answer.Sentences), len(first.out.Answer.Sentences))
		}
		execute := end.Sub(mid)
		walls = append(walls, end.Sub(start))
		preps = append(preps, mid.Sub(start))
		maps = append(maps, t.wall["map"])
		debates = append(debates, t.wall["debate"])
		reduces = append(reduces, t.wall["reduce"])
		rests = append(rests, execute-t.wall["map"]-t.wall["debate"]-t.wall["reduce"])
	}
	b.StopTimer()
	if got := srv.Count(); got != sent {
		b.Fatalf("%d requests reached the server on resume; every call must be replayed", got-sent)
	}
	// The journal's own share: opening it (reading and decoding every
	// record) and counting what it had spent, as Execute does on resume.
	path := filepath.Join(dir, run.JournalFile)
	info, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	var opens []time.Duration
	for range 5 {
		start := time.Now()
		j, err := middleware.OpenJournal(path)
		if err != nil {
			b.Fatal(err)
		}
		if n, _ := j.LoadedUsage(); n != calls {
			b.Fatalf("the journal holds %d paid calls, want %d", n, calls)
		}
		j.Close()
		opens = append(opens, time.Since(start))
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(median(opens)), "journal-open-ms")
	b.ReportMetric(float64(info.Size())/(1<<20), "journal-MB")
	b.ReportMetric(ms(median(walls)), "resume-ms")
	b.ReportMetric(ms(median(preps)), "prepare-ms")
	b.ReportMetric(ms(median(maps)), "map-ms")
	b.ReportMetric(ms(median(debates)), "debate-ms")
	b.ReportMetric(ms(median(reduces)), "reduce-ms")
	b.ReportMetric(ms(median(rests)), "rest-ms")
	b.ReportMetric(float64(calls), "calls")
	b.Logf("%d calls replayed; first run %v (prepare %v); resume median %v: prepare %v, map %v, debate %v, reduce %v, rest %v; opening the %.2f MB journal %v",
		calls, first.prepare+first.execute, first.prepare, median(walls), median(preps), median(maps), median(debates), median(reduces), median(rests),
		float64(info.Size())/(1<<20), median(opens))
	if w := median(walls); w > resumeGoal {
		b.Fatalf("resume took %v; issue 23 wants at most %v", w, resumeGoal)
	}
}
