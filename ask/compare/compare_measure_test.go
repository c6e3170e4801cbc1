package compare

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/ask"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/llm/llmtest"
)

// The time at least one call was in flight: overlapping calls count once,
// a gap between them (an interrupted run resumed later) not at all.
func TestInFlight(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(from, to int) span {
		return span{t0.Add(time.Duration(from) * time.Millisecond), t0.Add(time.Duration(to) * time.Millisecond)}
	}
	tests := []struct {
		name  string
		spans []span
		want  time.Duration
	}{
		{"none", nil, 0},
		{"one call", []span{at(0, 300)}, 300 * time.Millisecond},
		{"a map step at once, then the reduce", []span{at(0, 200), at(10, 250), at(5, 180), at(260, 400)}, 390 * time.Millisecond},
		{"out of order", []span{at(260, 400), at(0, 250)}, 390 * time.Millisecond},
		{"one call inside another", []span{at(0, 500), at(100, 200)}, 500 * time.Millisecond},
		{"touching", []span{at(0, 100), at(100, 200)}, 200 * time.Millisecond},
		{"resumed an hour later", []span{at(0, 200), at(3_600_000, 3_600_300)}, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := inFlight(tt.spans); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A journal's wall time reads its records as llm/middleware writes them:
// each call ends when it was journaled and began its latency earlier; an
// answer the response cache gave takes no time; a torn last line is
// skipped.
func TestJournalWall(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	line := func(endMS, latencyMS int, fromCache bool) string {
		rec := map[string]any{"v": 1, "key": "k", "model": "openai:gpt-4.1", "at": t0.Add(time.Duration(endMS) * time.Millisecond),
			"response": map[string]any{"text": "x", "finish_reason": "stop", "latency": time.Duration(latencyMS) * time.Millisecond, "model": "openai:gpt-4.1"}}
		if fromCache {
			rec["from_cache"] = true
		}
		b, _ := json.Marshal(rec)
		return string(b) + "\n"
	}
	tests := []struct {
		name         string
		journal      string
		want         time.Duration
		made, cached int
	}{
		{"two readings, then the answer", line(200, 200, false) + line(220, 210, false) + line(500, 250, false), 470 * time.Millisecond, 3, 0},
		{"cache answers take no time", line(5, 900, true) + line(6, 900, true) + line(300, 290, false), 290 * time.Millisecond, 1, 2},
		{"all from the cache", line(5, 900, true), 0, 0, 1},
		{"a torn tail", line(200, 200, false) + `{"v":1,"key":"k","at":"2026-01-02T03:0`, 200 * time.Millisecond, 1, 0},
		{"empty", "", 0, 0, 0},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), run.JournalFile)
		if err := os.WriteFile(path, []byte(tt.journal), 0o600); err != nil {
			t.Fatal(err)
		}
		got, made, cached, err := journalWall(path)
		if err != nil || got != tt.want || made != tt.made || cached != tt.cached {
			t.Errorf("%s: %v, %d made, %d cached, %v; want %v, %d, %d", tt.name, got, made, cached, err, tt.want, tt.made, tt.cached)
		}
	}
	if _, _, _, err := journalWall(filepath.Join(t.TempDir(), "none.jsonl")); err == nil {
		t.Error("no journal: no error")
	}
}

// The wall time of each configuration is the one its journal recorded when
// its calls were made: about what a clock around the run measured, and
// the same again when a second comparison replays every run, which it
// marks replayed; latency against Control compares those recorded times.
func TestCompareReplayedWall(t *testing.T) {
	top := testCorpus(t)
	const latency = 60 * time.Millisecond
	srv := llmtest.NewServer(llmtest.Config{Latency: latency, Rules: []llmtest.Rule{{Respond: responder}}})
	defer srv.Close()
	base := testOptions(t, top, srv.OpenAIBaseURL())
	question := "Why did the billing migration slip?"
	// A clock around each run's execution: from its first call's first
	// event to the last time it read the hooks' clock, when it counted
	// its usage (answer.json has the same figure, until a configuration
	// that comes to the same run replays it and writes its own). Its
	// preparation reads the clock too (the corpus scan stamps its check),
	// before any call, and is left out.
	var clocks []*[2]time.Time
	newOptions := func(q string) *ask.Options {
		o := compareOptions(base)(q)
		var c [2]time.Time
		clocks = append(clocks, &c)
		o.Now = func() time.Time {
			now := time.Now()
			c[1] = now
			return now
		}
		events := o.Events
		o.Events = func(e engine.Event) {
			if c[0].IsZero() {
				c[0] = time.Now()
			}
			if events != nil {
				events(e)
			}
		}
		return o
	}
	first, err := Compare(context.Background(), []string{question}, newOptions)
	if err != nil {
		t.Fatal(err)
	}
	made := map[string]bool{} // the runs whose calls this comparison made
	for i, m := range first.Runs {
		if m.Error != "" {
			t.Fatalf("%s: %s", m.Configuration, m.Error)
		}
		if m.Replayed != made[m.RunID] {
			t.Errorf("%s: replayed %v; want %v (the run's calls were made by an earlier configuration: %v)", m.Configuration, m.Replayed, made[m.RunID], made[m.RunID])
		}
		if made[m.RunID] {
			continue
		}
		made[m.RunID] = true
		// What the clock around the execution measured, with the run's
		// own work after its last call.
		c := clocks[i]
		clock := c[1].Sub(c[0])
		wall := time.Duration(m.WallMS) * time.Millisecond
		if wall < 2*latency || wall > clock+time.Millisecond || clock-wall > clock/3 {
			t.Errorf("%s: recorded wall %v, the run's clock %v; want at least two steps of %v, and about the clock", m.Configuration, wall, clock, latency)
		}
	}

	sent := len(srv.Requests())
	again, err := Compare(context.Background(), []string{question}, compareOptions(base))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()) - sent; n != 0 {
		t.Fatalf("comparing again sent %d requests", n)
	}
	for i, m := range again.Runs {
		w := first.Runs[i]
		if !m.Replayed {
			t.Errorf("%s: not marked replayed, though no call was sent", m.Configuration)
		}
		if m.WallMS != w.WallMS || fmt.Sprint(deref(m.Latency)) != fmt.Sprint(deref(w.Latency)) {
			t.Errorf("%s replayed: wall %d ms, latency %v; the first comparison recorded %d ms, %v", m.Configuration, m.WallMS, deref(m.Latency), w.WallMS, deref(w.Latency))
		}
	}
	// Latency against Control compares the recorded times.
	ctl := again.Runs[0]
	for _, m := range again.Runs[1:] {
		if want := float64(m.WallMS)/float64(ctl.WallMS) - 1; m.Latency == nil || *m.Latency != want {
			t.Errorf("%s: latency %v, want %v from the recorded walls", m.Configuration, deref(m.Latency), want)
		}
	}
	// The report says so, in the table, in comparison.json and in compare.html.
	if s := again.Runs[0].String(); !strings.Contains(s, " replayed ") {
		t.Errorf("row %q does not say replayed", s)
	}
	b, _ := json.Marshal(again)
	if !strings.Contains(string(b), `"replayed":true`) || !strings.Contains(string(b), `"wall_time":"the time at least one of the run's calls was in flight`) {
		t.Errorf("comparison.json: %s", b)
	}
	h, err := again.HTML()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(h), `class="badge-replayed"`); n != len(Configurations) {
		t.Errorf("compare.html marks %d rows replayed, want %d", n, len(Configurations))
	}
}

// conflictingResponder answers like responder, except that every source's
// reading is full of the lexical detector's conflict markers, in words the
// other readings do not share: every pair of readings is a tension.
func conflictingResponder(rec *llmtest.Recorded) llmtest.Reply {
	if rec.SchemaName != mapSchemaName {
		return responder(rec)
	}
	topics := map[string]string{
		"vendor contract": "vendors stalled signatures delaying everything",
		"pilot shipped":   "pilots delighted customers invoices arrived",
		"board asked":     "board questioned budgets before year-end",
		"office moves":    "offices changed floors during relocation",
	}
	for marker, words := range topics {
		if strings.Contains(rec.System, marker) {
			// "but" and "vs" are markers too short to count as words, so
			// the readings share no word and never agree by similarity.
			return llmtest.Reply{JSON: map[string]any{"addresses": true,
				"summary": words + ", but vs " + words + ", but.",
				"points":  []any{map[string]any{"point": words + ", but.", "quote": ""}}}}
		}
	}
	return responder(rec)
}

// Tensions are counted one way in every configuration: the lexical
// detector's conflicts between the readings. Control's readings are
// counted too, and SoT-Debate's count is the detector's, not the debate
// step's own tensions.
func TestCompareTensionsOneDefinition(t *testing.T) {
	top := testCorpus(t)
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: conflictingResponder}}})
	defer srv.Close()
	base := testOptions(t, top, srv.OpenAIBaseURL())
	c, err := Compare(context.Background(), []string{"Why did the billing migration slip?"}, compareOptions(base))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Runs {
		if m.Error != "" {
			t.Fatalf("%s: %s", m.Configuration, m.Error)
		}
		b, err := os.ReadFile(filepath.Join(top, ".sot", "answers", m.RunID, ask.AnswerJSONFile))
		if err != nil {
			t.Fatal(err)
		}
		var a ask.Answer
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatal(err)
		}
		n := len(a.Evidence)
		if want := n * (n - 1) / 2; m.Tensions != want || want == 0 {
			t.Errorf("%s: %d tensions over %d readings, want every pair: %d", m.Configuration, m.Tensions, n, want)
		}
		if a.Debate != nil && len(a.Debate.Tensions) == m.Tensions {
			t.Errorf("%s: the debate's count and the detector's are both %d; the test cannot tell them apart", m.Configuration, m.Tensions)
		}
		if a.ConflictSummary != nil && a.ConflictSummary.Tensions != m.Tensions {
			t.Errorf("%s: %d tensions, while ANSWER.md's conflict summary, the same detector, says %d", m.Configuration, m.Tensions, a.ConflictSummary.Tensions)
		}
	}
	for _, r := range c.Rates {
		if r.Conflicts != 1 || r.ConflictRate != 1 {
			t.Errorf("%s: conflict detection %d (%v), want the one question", r.Configuration, r.Conflicts, r.ConflictRate)
		}
	}
}

// For a run read by group, the inter-group tensions are those between the
// readings of two different groups: two parts of one group too large for
// a prompt are one group.
func TestMeasureInterGroup(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, run.JournalFile), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	reading := func(id, group, words string) ask.Evidence {
		return ask.Evidence{ID: id, Source: "group:" + group, Title: group, Addresses: true, Summary: words + ", but vs " + words + ", but."}
	}
	tests := []struct {
		name       string
		byGroup    bool
		evidence   []ask.Evidence
		tensions   int
		interGroup *int
	}{
		{"two parts of one group, and another group", true, []ask.Evidence{
			reading("A1", "quarter:q1 2026", "vendors stalled signatures delaying everything"),
			reading("A2", "quarter:q1 2026", "pilots delighted customers invoices arrived"),
			reading("A3", "quarter:q2 2026", "board questioned budgets before year-end"),
		}, 3, intp(2)},
		{"one group in two parts", true, []ask.Evidence{
			reading("A1", "quarter:q1 2026", "vendors stalled signatures delaying everything"),
			reading("A2", "quarter:q1 2026", "pilots delighted customers invoices arrived"),
		}, 1, intp(0)},
		{"read source by source", false, []ask.Evidence{
			reading("A1", "a", "vendors stalled signatures delaying everything"),
			reading("A2", "b", "pilots delighted customers invoices arrived"),
		}, 1, nil},
	}
	for _, tt := range tests {
		out := &ask.Outcome{Plan: &ask.Plan{OutputDir: dir}, Answer: &ask.Answer{ByGroup: tt.byGroup, Evidence: tt.evidence}}
		var m Measured
		if err := measure(&m, out, config.Defaults().Ask.ConflictThreshold); err != nil {
			t.Fatal(err)
		}
		if m.Tensions != tt.tensions || fmt.Sprint(deref(m.InterGroupTensions)) != fmt.Sprint(deref(tt.interGroup)) {
			t.Errorf("%s: %d tensions, %v between groups; want %d, %v", tt.name, m.Tensions, deref(m.InterGroupTensions), tt.tensions, deref(tt.interGroup))
		}
		if got, want := m.interGroup(), tt.interGroup != nil && *tt.interGroup > 0 || tt.interGroup == nil && tt.tensions > 0; got != want {
			t.Errorf("%s: inter-group conflict %v, want %v", tt.name, got, want)
		}
	}
}

func intp(n int) *int { return &n }

// deref is *p, or "none" for nil.
func deref[T any](p *T) any {
	if p == nil {
		return "none"
	}
	return *p
}

// A run whose answers all came from the response cache made no call: other
// runs made, and timed, its calls. It has no wall time of its own, and no
// latency against Control, rather than a wall of a few milliseconds and a
// latency near -100%.
func TestCompareAllFromCache(t *testing.T) {
	top := testCorpus(t)
	srv := llmtest.NewServer(llmtest.Config{Latency: 20 * time.Millisecond, Rules: []llmtest.Rule{{Respond: responder}}})
	defer srv.Close()
	base := testOptions(t, top, srv.OpenAIBaseURL())
	base.Config.Cache.Disabled = false
	question := "Why did the billing migration slip?"

	// The question asked once into a directory of its own, as SoT-Rotating
	// asks it: the response cache holds every answer that run needs.
	o := compareOptions(base)(question)
	Configurations[1].apply(o)
	o.OutputDir = filepath.Join(top, "mine")
	p, err := ask.Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ask.Execute(context.Background(), p, o); err != nil {
		t.Fatal(err)
	}

	c, err := Compare(context.Background(), []string{question}, compareOptions(base))
	if err != nil {
		t.Fatal(err)
	}
	rot := c.Runs[1]
	if rot.Configuration != "SoT-Rotating" || !rot.FromCache || !rot.Replayed || rot.WallMS != 0 || rot.Latency != nil {
		t.Errorf("SoT-Rotating: %+v; want every answer from the cache, replayed, without a wall time or a latency", rot)
	}
	if s := rot.String(); !strings.Contains(s, "        - replayed") || !strings.HasSuffix(s, "      -") {
		t.Errorf("row %q: want a dash for the wall time and the latency", s)
	}
	ctl := c.Runs[0]
	if ctl.FromCache || ctl.Replayed || ctl.WallMS < 20 || ctl.Latency == nil || *ctl.Latency != 0 {
		t.Errorf("Control: %+v; want calls made now, timed", ctl)
	}
	h, err := c.HTML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(h), `<tr class="config-sot-rotating replayed">`) {
		t.Error("compare.html does not mark SoT-Rotating replayed")
	}
}
