package ask

// The golden tests of a question pin, byte for byte, what one fixed
// question over a fixed corpus does today, so that a change to the run
// machinery (moving it into engine/scenario, say) can show that nothing a
// user sees or keeps on disk moved with it:
//
//   - the request of every model call (model, schema, temperature, max
//     tokens, system prompt and messages) as the provider received it, with
//     the label and journal key the stack gave it;
//   - the plan: run id, nonce, output directory, the sources chosen and the
//     readings made of them;
//   - the journal keys of every call (the same keys address the response
//     cache): a change here means users' interrupted questions no longer
//     resume and their caches miss;
//   - run.json, ANSWER.md, answer.json, answer.html and
//     conflict-pairs.ndjson;
//   - that a run directory today's code wrote, committed under
//     testdata/golden/rundir, is answered from its journal with not one
//     request to the provider, into the same files.
//
// The question is comparative, so the debate step runs; its roles are the
// analyst, the critic and the synthesizer, a cross-source role, which
// reads its span of sources in one reading. The first answer fails the
// check, so the reduce step is asked once more. Every step of the
// protocol makes a call.
//
// After a change meant to alter them, regenerate the goldens with
//
//	go test ./ask -run Golden -update
//
// The committed run directory stands for the runs users already have; it
// is rewritten only with -update-rundir, when breaking their resumes is
// intended.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/stack"
	"github.com/sotlabs/sot/persona"
)

// -update is the package's flag (answer_test.go); it rewrites these
// goldens too.
var goldUpdateRundir = flag.Bool("update-rundir", false, "also rewrite the committed run directory under ask/testdata/golden/rundir: only when breaking the resumes of existing runs is intended")

const (
	goldRegenerate       = "go test ./ask -run Golden -update"
	goldRegenerateRundir = "go test ./ask -run Golden -update -update-rundir"
)

// The fixed question.
const (
	goldQuestion = "How does the plan to keep the search cluster self-hosted differ from the plan to move it to the managed service?"
	goldModel    = "openai:gpt-4.1"
	goldAPIKey   = "sk-golden-ask-0123456789"
	goldCommand  = `sot ask "How does the plan to keep the search cluster self-hosted differ from the plan to move it to the managed service?"`
)

// goldRoot is testdata/golden, absolute.
var goldRoot = func() string {
	abs, err := filepath.Abs(filepath.Join("testdata", "golden"))
	if err != nil {
		panic(err)
	}
	return abs
}()

// goldClock is the clock of the golden question: run.json's creation time
// and answer.json's wall time read it.
func goldClock() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

// goldEnv gives the test a home, cache, state and config directory of its
// own, with the committed key in the user cache directory, from which the
// nonce and run.json's MAC derive.
func goldEnv(t *testing.T) {
	t.Helper()
	key, err := os.ReadFile(filepath.Join(goldRoot, "nonce.key"))
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	for _, d := range []string{"cache/sot", "state", "config"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "cache", "sot", "nonce.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
}

// goldProject makes a project whose corpus (.sot/corpus) is the notes in
// testdata/golden/corpus, with fixed modification times, and works in
// its top, as a user of the CLI would; it returns the top.
func goldProject(t *testing.T) string {
	t.Helper()
	top := t.TempDir()
	dir := filepath.Join(top, ".sot", "corpus")
	for _, d := range []string{filepath.Join(top, ".git"), dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(filepath.Join(goldRoot, "corpus"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(goldRoot, "corpus", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, e.Name())
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, goldClock(), goldClock()); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(top)
	return top
}

// goldCallLog keeps every request the stack passes to the provider, below
// the journal: the calls sent, with the labels and shared prefixes the
// wire does not carry.
type goldCallLog struct {
	mu   sync.Mutex
	reqs []*llm.Request
}

func (l *goldCallLog) wrap(next llm.Provider) llm.Provider {
	return llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		l.mu.Lock()
		l.reqs = append(l.reqs, req.Clone())
		l.mu.Unlock()
		return next.Complete(ctx, req)
	})
}

func (l *goldCallLog) requests() []*llm.Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

// goldOptions are the options of the fixed question, as the CLI would set
// them for sot ask --format html,pairs run at the project's top.
func goldOptions(t *testing.T, top, baseURL string, log *goldCallLog) *Options {
	t.Helper()
	cfg := config.Defaults()
	p := cfg.Providers["openai"]
	p.BaseURL = baseURL
	cfg.Providers["openai"] = p
	cfg.DefaultModel = goldModel
	cfg.Cache.Disabled = true // answered by the journal alone, and every call reaches the provider
	cfg.Retries = 0           // no call is sent twice; in the replay, a call the journal misses fails at once
	lib, err := persona.Discover(persona.Dirs{})
	if err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return goldAPIKey
		}
		return ""
	}
	o := &Options{Question: goldQuestion, Library: lib}
	o.Dir = top
	o.Config = &cfg
	o.Getenv = getenv
	o.NewStack = func(journal string) (*stack.Stack, error) {
		st, err := stack.New(&cfg, stack.Options{JournalPath: journal, Getenv: getenv})
		if err == nil && log != nil {
			st.Provider = log.wrap(st.Provider)
		}
		return st, err
	}
	o.Command = goldCommand
	o.Formats = []string{"html", FormatPairs}
	o.Now = goldClock
	return o
}

// goldResponder answers the question's calls by what each asks, never by
// when it arrives. The story it tells:
//
//   - the architecture review and the ops retro address the question and
//     disagree; the synthesizer, reading the three notes chosen together,
//     finds cost running through them and finance waiting for a figure;
//     any other note does not address it. One of the retro's quotes is not
//     in the retro.
//   - the debate names two tensions, one of which cites no answer that
//     exists (and so is not kept), a risk only the architecture review
//     raises, an assumption and a recommendation.
//   - the first answer holds a sentence the sources do not support, so the
//     check sends it back; the second holds another, which is dropped.
type goldResponder struct {
	mu         sync.Mutex
	unexpected []string
}

// goldAnswerID finds the id of the answer read from the note titled
// title in a debate or reduce prompt.
func goldAnswerID(rec *llmtest.Recorded, title string) string {
	m := regexp.MustCompile(`(A\d+) \([^)]*from the source ` + regexp.QuoteMeta(title) + `\)`).FindStringSubmatch(rec.LastUser())
	if m == nil {
		return "A0"
	}
	return m[1]
}

// goldSpanID finds the id of the synthesizer's answer, read from several
// notes together, in a debate or reduce prompt.
func goldSpanID(rec *llmtest.Recorded) string {
	m := regexp.MustCompile(`(A\d+) \(synthesizer[^)]*from the sources `).FindStringSubmatch(rec.LastUser())
	if m == nil {
		return "A0"
	}
	return m[1]
}

func (r *goldResponder) fail(format string, args ...any) llmtest.Reply {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.unexpected = append(r.unexpected, fmt.Sprintf(format, args...))
	return llmtest.Reply{Fault: llmtest.Fault500}
}

func (r *goldResponder) respond(rec *llmtest.Recorded) llmtest.Reply {
	arch, ops, fin := goldAnswerID(rec, "Architecture review"), goldAnswerID(rec, "Ops retro"), goldSpanID(rec)
	point := func(p, q string) map[string]any { return map[string]any{"point": p, "quote": q} }
	sentence := func(text, quote string, answers ...string) map[string]any {
		return map[string]any{"text": text, "answers": answers, "quote": quote}
	}
	switch rec.SchemaName {
	case mapSchemaName:
		switch {
		case strings.Contains(rec.System, "\n# Sources "):
			return llmtest.Reply{JSON: map[string]any{"addresses": true,
				"summary": "Cost runs through the notes: the architecture review keeps search self-hosted because the managed service costs twice as much, and Finance also asked what the search cluster costs each month before anyone decides, which confirms no figure yet.",
				"points": []any{point("Cost is the reason given for keeping the cluster self-hosted.", "costs twice as much at our query volume"),
					point("Finance wants the monthly cost of both options before a decision.", "Finance asked what the search cluster costs each month")}}}
		case strings.Contains(rec.System, "costs twice as much"):
			return llmtest.Reply{JSON: map[string]any{"addresses": true,
				"summary": "The team decided to keep the search cluster self-hosted, because the managed search service costs twice as much.",
				"points": []any{point("The search cluster stays self-hosted.", "keep the search cluster self-hosted"),
					point("Only two engineers know how to upgrade the cluster, a risk.", "only two engineers know how to upgrade the cluster")}}}
		case strings.Contains(rec.System, "paged the on-call team"):
			return llmtest.Reply{JSON: map[string]any{"addresses": true,
				"summary": "The ops team wants to move search to the managed service this year, after the search cluster upgrade failed twice.",
				"points": []any{point("The upgrade failed twice in April, but nobody changed the plan.", "upgrade failed twice in April"),
					point("The ops team wants the managed service.", "move search to a managed cloud at once")}}}
		case strings.Contains(rec.System, "Finance asked"):
			return llmtest.Reply{JSON: map[string]any{"addresses": true,
				"summary": "Finance also asked what the search cluster costs each month before anyone decides, and confirms no figure yet.", "points": []any{}}}
		}
		return llmtest.Reply{JSON: map[string]any{"addresses": false, "summary": "The note says nothing about the search cluster.", "points": []any{}}}
	case debateSchemaName:
		return llmtest.Reply{JSON: map[string]any{
			"tensions": []any{
				map[string]any{"topic": "whether the search cluster stays self-hosted", "sides": []any{
					map[string]any{"position": "keep it self-hosted: the managed service costs twice as much", "answers": []any{arch}},
					map[string]any{"position": "move it to the managed service after the failed upgrades", "answers": []any{ops}}}},
				map[string]any{"topic": "who pays", "sides": []any{
					map[string]any{"position": "finance decides", "answers": []any{fin}},
					map[string]any{"position": "nobody said", "answers": []any{"A9"}}}}},
			"unique_risks":    []any{map[string]any{"risk": "only two engineers can upgrade the cluster", "answer": arch}},
			"assumptions":     []any{map[string]any{"assumption": "the query volume stays as it is", "answers": []any{arch, fin}}},
			"recommendations": []any{"price both options per month before deciding"}}}
	case reduceSchemaName:
		kept := []any{
			sentence("The team decided to keep the search cluster self-hosted, because the managed search service costs twice as much.", "keep the search cluster self-hosted", arch),
			sentence("The ops team wants to move search to the managed service this year, after the search cluster upgrade failed twice.", "", ops),
		}
		tensions := []any{map[string]any{"id": "T1", "treatment": "addressed", "how": "the answer sets the cost against the failed upgrades"}}
		if !strings.Contains(rec.LastUser(), "# Your previous answer failed the check") {
			return llmtest.Reply{JSON: map[string]any{"sentences": append(kept,
				sentence("Everyone agrees that a managed cloud would be cheaper for every team.", "", fin)), "tensions": tensions}}
		}
		return llmtest.Reply{JSON: map[string]any{"sentences": append(kept,
			sentence("Finance asked what the search cluster costs each month before anyone decides.", "", fin),
			sentence("The vendor promised a discount for a three-year contract.", "", arch)), "tensions": tensions}}
	}
	return r.fail("an unexpected call: schema %q", rec.SchemaName)
}

// goldRun is one run of the fixed question and what it left.
type goldRun struct {
	plan  *Plan
	out   *Outcome
	log   *goldCallLog
	files map[string][]byte // the run directory, by name
}

func runGold(t *testing.T, o *Options, log *goldCallLog) *goldRun {
	t.Helper()
	ctx := context.Background()
	p, err := Prepare(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Execute(ctx, p, o)
	if err != nil {
		t.Fatal(err)
	}
	return &goldRun{plan: p, out: out, log: log, files: goldReadDir(t, p.OutputDir)}
}

func goldReadDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() {
			t.Errorf("the run directory %s holds a directory %s", dir, e.Name())
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

// TestGoldenAsk asks the fixed question against llmtest and compares what
// it sent, decided and wrote with the goldens.
func TestGoldenAsk(t *testing.T) {
	goldEnv(t)
	top := goldProject(t)
	r := &goldResponder{}
	srv := llmtest.NewServer(llmtest.Config{Seed: 1, Rules: []llmtest.Rule{{Respond: r.respond}}})
	defer srv.Close()
	log := &goldCallLog{}
	gr := runGold(t, goldOptions(t, top, srv.OpenAIBaseURL(), log), log)
	r.mu.Lock()
	unexpected := r.unexpected
	r.mu.Unlock()
	if len(unexpected) > 0 {
		t.Fatalf("the fake provider got calls it has no answer for:\n%s", strings.Join(unexpected, "\n"))
	}
	// The story goldResponder tells must have been told: every step ran.
	labels := map[string]bool{}
	for _, q := range log.requests() {
		labels[q.Label] = true
	}
	for _, l := range []string{"ask/debate", "ask/reduce", "ask/reduce/again"} {
		if !labels[l] {
			t.Errorf("the golden question made no %s call (calls %v): the goldens would not pin that step", l, slices.Sorted(maps.Keys(labels)))
		}
	}
	if a := gr.out.Answer; a.Partial() || a.Debate == nil || len(a.Sentences) == 0 || len(a.Dropped) == 0 {
		t.Fatalf("the golden answer: missing %+v, debate %v, %d sentence(s), %d dropped", a.Missing, a.Debate, len(a.Sentences), len(a.Dropped))
	}

	checkGold(t, filepath.Join(goldRoot, "prompts.txt"), goldPrompts(t, srv.Requests(), log.requests()),
		"The requests of the question's calls changed: what the models are asked, and with it every journal and cache key.")
	checkGold(t, filepath.Join(goldRoot, "run.txt"), goldPlan(gr, top),
		"The plan of the question changed: its run id, nonce or directory, or the sources it reads and how.")
	journal := gr.files[run.JournalFile]
	checkGoldKeys(t, filepath.Join(goldRoot, "keys.txt"), goldJournalKeys(t, journal))
	if recs := goldJournal(t, journal); len(recs) != gr.out.Answer.Usage.Calls || len(recs) != len(log.requests()) || len(recs) != srv.Count() {
		t.Errorf("the journal holds %d records; the run made %d calls, the stack sent %d and the provider got %d", len(recs), gr.out.Answer.Usage.Calls, len(log.requests()), srv.Count())
	}
	checkGoldOutputs(t, filepath.Join(goldRoot, "out"), gr.files, top)
	if *goldUpdateRundir {
		goldWriteRundir(t, filepath.Join(goldRoot, "rundir"), gr.files)
	}
}

// TestGoldenAskReplay asks the fixed question again over the run
// directory committed under testdata/golden/rundir (its run.json and
// journal, as today's code wrote them), with a provider that fails every
// request, one day later by the clock. The question must be the same run,
// send nothing (every call answered from the journal, so nothing paid for
// twice) and render again, from the journal alone, the files of the
// golden run; run.json and the journal must stay as they were.
//
// A failure here means the question's users would pay again for the runs
// they have, or lose them: after a change to a prompt, a request key, the
// run id or run.json. If that is intended, regenerate the run directory
// with go test ./ask -run Golden -update -update-rundir, and say so in the
// change.
func TestGoldenAskReplay(t *testing.T) {
	goldEnv(t)
	top := goldProject(t)
	src := filepath.Join(goldRoot, "rundir")
	committed := goldReadDir(t, src)
	var state struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal(committed[run.StateFile], &state); err != nil || state.RunID == "" {
		t.Fatalf("the committed %s names no run (%v); write one with: %s", run.StateFile, err, goldRegenerateRundir)
	}
	dir := filepath.Join(top, ".sot", "answers", state.RunID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range committed {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Fault: llmtest.Fault500}}})
	defer srv.Close()
	log := &goldCallLog{}
	o := goldOptions(t, top, srv.OpenAIBaseURL(), log)
	o.Now = func() time.Time { return goldClock().Add(24 * time.Hour) }
	ctx := context.Background()
	p, err := Prepare(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if p.RunID != state.RunID {
		t.Fatalf("the question's run id is now %s, the committed run's %s: asking it again no longer finds its run directory (.sot/answers/<run-id>), "+
			"so every call of an existing user's run is sent and paid for again.\nIf that is intended, regenerate the run directory with: %s", p.RunID, state.RunID, goldRegenerateRundir)
	}
	out, err := Execute(ctx, p, o)
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.Count(); n > 0 {
		var labels []string
		for _, q := range log.requests() {
			labels = append(labels, q.Label)
		}
		t.Fatalf("the replay sent %d request(s) to the provider (%s): the committed journal %s does not answer them, "+
			"so an existing user's run of this question would send them again and pay twice.\n"+
			"If breaking the resumes of existing runs is intended, regenerate the run directory with: %s",
			n, strings.Join(labels, ", "), goldRel(filepath.Join(src, run.JournalFile)), goldRegenerateRundir)
	}
	if err := out.Verdict(); err != nil {
		t.Errorf("the replayed answer: %v", err)
	}
	u := out.Answer.Usage
	if recs := goldJournal(t, committed[run.JournalFile]); u.Replayed != len(recs) || u.Calls != len(recs) || u.NewCalls != 0 {
		t.Errorf("usage: %d call(s), %d replayed, %d sent; the journal holds %d answers, every one of which is replayed", u.Calls, u.Replayed, u.NewCalls, len(recs))
	}
	files := goldReadDir(t, p.OutputDir)
	for _, name := range []string{run.JournalFile, run.StateFile} {
		if diff := goldLineDiff(string(committed[name]), string(files[name])); diff != "" {
			t.Errorf("the replay changed %s (-committed +now):\n%s", name, diff)
		}
	}
	// The replay renders the golden run's files. Only answer.json's
	// account of this invocation differs, as it must: it sent nothing.
	names := goldOutputNames(t, files)
	if want := goldOutputNames(t, goldReadDir(t, filepath.Join(goldRoot, "out"))); !slices.Equal(names, want) {
		t.Errorf("the replay wrote %v, the golden run %v", names, want)
	}
	for _, name := range names {
		got := goldNormalize(t, name, files[name], top)
		if name == AnswerJSONFile {
			got = goldAsFresh(t, got)
		}
		want, err := os.ReadFile(filepath.Join(goldRoot, "out", name))
		if err != nil {
			t.Errorf("no golden %s: %v", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("the replay's %s is not the golden run's (-golden +replay):\n%s", name, goldLineDiff(string(want), string(got)))
		}
	}
}

// goldAsFresh rewrites the account a replayed answer.json gives of its
// invocation (every call replayed, none sent) as the fresh run's (every
// call sent, none replayed), so that the rest compares byte for byte.
func goldAsFresh(t *testing.T, b []byte) []byte {
	t.Helper()
	var u struct {
		Usage Usage `json:"usage"`
	}
	if err := json.Unmarshal(b, &u); err != nil {
		t.Fatalf("answer.json: %v", err)
	}
	s := string(b)
	for field, n := range map[string]int{"new_calls": u.Usage.Calls, "replayed": 0} {
		re := regexp.MustCompile(`(?m)^    "` + field + `": \d+`)
		if !re.MatchString(s) {
			t.Errorf("answer.json's usage has no %s", field)
		}
		s = re.ReplaceAllString(s, fmt.Sprintf(`    "%s": %d`, field, n))
	}
	return []byte(s)
}

// goldCall is one model call: the request as the provider received it,
// and as the stack sent it.
type goldCall struct {
	rec *llmtest.Recorded
	req *llm.Request
}

// goldWire is what identifies one call on both sides of the wire.
func goldWire(model, schema string, temperature *float64, maxTokens int, system string, msgs [][2]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\x00%s\x00%s\x00%d\x00%s", model, schema, goldTemperature(temperature), maxTokens, system)
	for _, m := range msgs {
		b.WriteString("\x00" + m[0] + "\x00" + m[1])
	}
	return b.String()
}

func goldTemperature(t *float64) string {
	if t == nil {
		return "unset"
	}
	return strconv.FormatFloat(*t, 'g', -1, 64)
}

// goldPrompts writes every call the provider received, sorted by label:
// its label and journal key (from the stack's request it matches), model,
// schema, temperature, max tokens, system prompt and messages. A schema,
// and a shared prefix of system prompts, is written once and named where
// it recurs.
func goldPrompts(t *testing.T, recs []llmtest.Recorded, reqs []*llm.Request) []byte {
	t.Helper()
	pending := map[string][]*llm.Request{}
	for _, q := range reqs {
		var msgs [][2]string
		for _, m := range q.Messages {
			msgs = append(msgs, [2]string{string(m.Role), m.Content})
		}
		schema := ""
		if q.Schema != nil {
			schema = q.Schema.Name
		}
		ref, err := llm.ParseModel(q.Model)
		if err != nil {
			t.Fatal(err)
		}
		w := goldWire(ref.Name, schema, q.Temperature, q.MaxTokens, q.System, msgs)
		pending[w] = append(pending[w], q)
	}
	var calls []goldCall
	for i := range recs {
		rec := &recs[i]
		if rec.Provider == "" {
			t.Errorf("the provider got a request that is no model call: %s %s", rec.Method, rec.Path)
			continue
		}
		var msgs [][2]string
		for _, m := range rec.Messages {
			msgs = append(msgs, [2]string{m.Role, m.Text})
		}
		w := goldWire(rec.Model, rec.SchemaName, rec.Temperature, rec.MaxTokens, rec.System, msgs)
		if len(pending[w]) == 0 {
			t.Errorf("the provider got a call the stack did not send as such (schema %q, %d bytes of system prompt): a retry, or a request changed on its way", rec.SchemaName, len(rec.System))
			continue
		}
		calls = append(calls, goldCall{rec, pending[w][0]})
		pending[w] = pending[w][1:]
	}
	for _, qs := range pending {
		for _, q := range qs {
			t.Errorf("the stack sent %s, but the provider never received it", q.Label)
		}
	}
	sort.Slice(calls, func(i, j int) bool {
		a, b := calls[i].req, calls[j].req
		if a.Label != b.Label {
			return a.Label < b.Label
		}
		return a.Key() < b.Key()
	})

	var b strings.Builder
	fmt.Fprintf(&b, "# The requests of every model call of the golden question, as the fake provider received them,\n")
	fmt.Fprintf(&b, "# with the label and journal key of each, sorted by label. Schemas and shared prefixes are written once.\n")
	fmt.Fprintf(&b, "# Regenerate with: %s\n\ncalls: %d\n", goldRegenerate, len(calls))
	schemas := map[string]bool{}
	for _, c := range calls {
		if s := c.rec.SchemaName; !schemas[s] {
			schemas[s] = true
			fmt.Fprintf(&b, "\n==== schema %s (%d bytes)\n%s\n==== end of schema %s\n", s, len(c.rec.Schema), c.rec.Schema, s)
		}
	}
	prefixes := map[string]string{}
	for _, c := range calls {
		if n := c.req.SharedPrefix; n > 0 && n <= len(c.req.System) {
			p := c.req.System[:n]
			if _, ok := prefixes[p]; !ok {
				name := fmt.Sprintf("P%d", len(prefixes)+1)
				prefixes[p] = name
				fmt.Fprintf(&b, "\n==== shared prefix %s (%d bytes)\n%s\n==== end of shared prefix %s\n", name, len(p), p, name)
			}
		}
	}
	for _, c := range calls {
		rec, req := c.rec, c.req
		fmt.Fprintf(&b, "\n==== call %s\n", req.Label)
		fmt.Fprintf(&b, "key: %s\n", req.Key())
		fmt.Fprintf(&b, "endpoint: %s %s (%s)\n", rec.Method, rec.Path, rec.Provider)
		fmt.Fprintf(&b, "model: %s (requested as %s)\n", rec.Model, req.Model)
		sum := sha256.Sum256(rec.Schema)
		fmt.Fprintf(&b, "schema: %s (strict %v, %d bytes, sha256 %s)\n", rec.SchemaName, rec.Strict, len(rec.Schema), hex.EncodeToString(sum[:8]))
		fmt.Fprintf(&b, "temperature: %s\nmax_tokens: %d\nstream: %v\n", goldTemperature(rec.Temperature), rec.MaxTokens, rec.Stream)
		system := rec.System
		if n := req.SharedPrefix; n > 0 && n <= len(system) {
			fmt.Fprintf(&b, "---- system prompt (%d bytes): shared prefix %s, then\n%s\n", len(system), prefixes[system[:n]], system[n:])
		} else {
			fmt.Fprintf(&b, "---- system prompt (%d bytes)\n%s\n", len(system), system)
		}
		for i, m := range rec.Messages {
			fmt.Fprintf(&b, "---- message %d (%s, %d bytes)\n%s\n", i+1, m.Role, len(m.Text), m.Text)
		}
		fmt.Fprintf(&b, "==== end of call %s\n", req.Label)
	}
	return []byte(b.String())
}

// goldPlan writes what the question decided and came to besides its
// files: the run id (the name a re-run finds its directory and journal
// by), the nonce, the sources chosen and the readings made of them, and
// the outcome.
func goldPlan(r *goldRun, top string) []byte {
	p, a := r.plan, r.out.Answer
	var b strings.Builder
	fmt.Fprintf(&b, "# The plan and outcome of the golden question. Regenerate with: %s\n", goldRegenerate)
	fmt.Fprintf(&b, "run_id: %s\nnonce: %s\noutput_dir: %s\n", p.RunID, p.Nonce, p.OutputDir)
	fmt.Fprintf(&b, "question: %s\nmodel: %s\n", p.Question, p.Model)
	c := p.Classification
	fmt.Fprintf(&b, "intent: %s (%s)\ncomplexity: %s\nroles: %s\nstrategy: %s\n", c.Intent, c.Rule, c.Complexity, strings.Join(p.Roles, ", "), p.Strategy)
	fmt.Fprintf(&b, "sot: %v (%s)\ndebate: %v (%s)\ngroups: %d (%s)\n", p.SoT, p.SoTNote, p.Debate, p.DebateWhy, len(p.Groups), p.GroupsWhy)
	for i, ch := range p.Chosen {
		s := p.Sources[ch.ID]
		fmt.Fprintf(&b, "chosen %d: %s %q (%s, %s) relevance %.2f, %s\n", i+1, s.ID, s.Title, s.Type, filepath.ToSlash(goldRelTo(s.Path, top)), ch.Normalized, chosenWhy(ch))
	}
	var ids []string
	for id := range p.Sources {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		s := p.Sources[id]
		fmt.Fprintf(&b, "source: %s %q hash %s\n", s.ID, s.Title, s.Hash)
	}
	for _, rd := range p.Readings {
		role := "(none)"
		if rd.Role != nil {
			role = rd.Role.ID
		}
		fmt.Fprintf(&b, "reading: %s of %s %q part %d/%d, date %s, role %s (%s)\n", rd.ID, rd.Source, rd.Title, rd.Part, rd.Parts, rd.Date, role, rd.Why)
	}
	for _, s := range p.Skipped {
		fmt.Fprintf(&b, "skipped: %s (%s)\n", filepath.ToSlash(goldRelTo(s.Path, top)), s.Reason)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	verdict := "whole"
	if err := r.out.Verdict(); err != nil {
		verdict = err.Error()
	}
	fmt.Fprintf(&b, "verdict: %s\nsentences: %d\ndropped: %d\nmissing: %d\n", verdict, len(a.Sentences), len(a.Dropped), len(a.Missing))
	fmt.Fprintf(&b, "calls: %d (new %d, replayed %d)\n", a.Usage.Calls, a.Usage.NewCalls, a.Usage.Replayed)
	for _, f := range r.out.Files {
		fmt.Fprintf(&b, "file: %s\n", filepath.ToSlash(goldRelTo(f, top)))
	}
	return []byte(goldPaths(b.String(), top))
}

// goldRelTo is path relative to the project's top, when it is inside.
func goldRelTo(path, top string) string {
	if rel, err := filepath.Rel(top, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// goldPaths writes the project's top, a temporary directory, as $TOP.
func goldPaths(s, top string) string {
	if real, err := filepath.EvalSymlinks(top); err == nil && real != top {
		s = strings.ReplaceAll(s, real, "$TOP")
	}
	return strings.ReplaceAll(s, top, "$TOP")
}

// checkGold compares got with the golden file at path, or writes it under
// -update.
func checkGold(t *testing.T, path string, got []byte, why string) {
	t.Helper()
	if *update {
		goldWriteFile(t, path, got)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("no golden %s (%v); write it with: %s", goldRel(path), err, goldRegenerate)
		return
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from its golden (-golden +now):\n%s\n%s\nIf the change is intended, regenerate the goldens with: %s",
			goldRel(path), goldLineDiff(string(want), string(got)), why, goldRegenerate)
	}
}

func goldLineDiff(want, got string) string {
	return cmp.Diff(strings.SplitAfter(want, "\n"), strings.SplitAfter(got, "\n"))
}

// goldRel names a file under the package's directory.
func goldRel(path string) string {
	if rel, err := filepath.Rel(filepath.Dir(filepath.Dir(goldRoot)), path); err == nil {
		return "ask/" + filepath.ToSlash(rel)
	}
	return path
}

func goldWriteFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// goldRecord is the part of a journal line the tests read.
type goldRecord struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	Model string `json:"model"`
}

func goldJournal(t *testing.T, journal []byte) []goldRecord {
	t.Helper()
	var recs []goldRecord
	for i, line := range bytes.Split(bytes.TrimSpace(journal), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r goldRecord
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("journal line %d: %v", i+1, err)
		}
		recs = append(recs, r)
	}
	return recs
}

// goldJournalKeys lists "label model key" for every journal record,
// sorted: records are appended as calls finish, in no fixed order.
func goldJournalKeys(t *testing.T, journal []byte) []string {
	t.Helper()
	var lines []string
	for _, r := range goldJournal(t, journal) {
		lines = append(lines, r.Label+" "+r.Model+" "+r.Key)
	}
	sort.Strings(lines)
	return lines
}

// checkGoldKeys compares the journal keys with their golden, and says
// what a change breaks.
func checkGoldKeys(t *testing.T, path string, got []string) {
	t.Helper()
	text := "# The journal keys (llm.Request.Key) of every call of the golden question: label, model, key.\n# Regenerate with: " +
		goldRegenerate + "\n" + strings.Join(got, "\n") + "\n"
	if *update {
		goldWriteFile(t, path, []byte(text))
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("no golden %s (%v); write it with: %s", goldRel(path), err, goldRegenerate)
		return
	}
	var want []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.HasPrefix(l, "#") {
			want = append(want, l)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("THE JOURNAL AND CACHE KEYS CHANGED (-golden +now):\n%s\n"+
			"A call's key (the model, system prompt, shared prefix, messages, temperature, max tokens and schema) addresses its answer in a run's "+
			"journal and in the response cache. With new keys, users' interrupted or finished questions no longer resume from their journals "+
			"(every call is sent and paid for again) and their caches miss. If that is intended, say so in the change, and regenerate the goldens "+
			"with: %s (and the committed run directory with: %s)", diff, goldRegenerate, goldRegenerateRundir)
	}
}

// goldOutputNames are the files of a run directory that are pinned: all
// but the journal (its records carry times, latencies and request ids, in
// the order calls finished; keys.txt pins its keys and the replay its
// answers), the lock and the .gitignore (checked here, as a committed
// copy would hide its directory from git).
func goldOutputNames(t *testing.T, files map[string][]byte) []string {
	t.Helper()
	var names []string
	for name, b := range files {
		switch name {
		case run.JournalFile, "run.lock":
		case ".gitignore":
			if string(b) != "*\n" {
				t.Errorf("the run directory's .gitignore is %q, want %q", b, "*\n")
			}
		default:
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// checkGoldOutputs compares the run's files, normalised, with the goldens
// in dir, and the set of them with the goldens'.
func checkGoldOutputs(t *testing.T, dir string, files map[string][]byte, top string) {
	t.Helper()
	names := goldOutputNames(t, files)
	if *update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	} else {
		entries, _ := os.ReadDir(dir)
		var want []string
		for _, e := range entries {
			want = append(want, e.Name())
		}
		if diff := cmp.Diff(want, names); diff != "" {
			t.Errorf("the run wrote other files than the goldens in %s (-golden +now):\n%s\nIf the change is intended, regenerate the goldens with: %s", goldRel(dir), diff, goldRegenerate)
		}
	}
	for _, name := range names {
		checkGold(t, filepath.Join(dir, name), goldNormalize(t, name, files[name], top),
			"The question's output "+name+" changed: users, and the programs that read it, see the difference.")
	}
}

var (
	goldMACRe  = regexp.MustCompile(`(?m),\n  "mac": "([0-9a-f]*)"`)
	goldCostRe = regexp.MustCompile(`"cost_usd": ([0-9.eE+-]+)`)
)

// goldNormalize replaces, in an output file, what differs between two
// runs of the same question and nothing else. The clock is fixed, so no
// time needs replacing; what is left:
//
//   - answer.json's "cost_usd", rounded to 1e-9 dollars: the meter adds
//     each call's cost as the call finishes, and floating-point sums in
//     another order differ in their last bits.
//   - the project's top, a temporary directory, should it appear: "$TOP".
//
// run.json is not changed, only checked: its MAC must verify under the
// user's key, or sot would not trust the record and would not resume the
// run.
func goldNormalize(t *testing.T, name string, b []byte, top string) []byte {
	t.Helper()
	s := goldPaths(string(b), top)
	switch name {
	case run.StateFile:
		key, err := os.ReadFile(filepath.Join(goldRoot, "nonce.key"))
		if err != nil {
			t.Fatal(err)
		}
		m := goldMACRe.FindStringSubmatch(string(b))
		if m == nil {
			t.Errorf("run.json carries no MAC: sot would not resume the run\n%s", b)
		} else if want := goldMAC(t, key, string(b)); m[1] != want {
			t.Errorf("run.json's MAC %s does not verify with the user's key (want %s): sot would neither trust nor resume the run", m[1], want)
		}
	case AnswerJSONFile:
		s = goldCostRe.ReplaceAllStringFunc(s, func(m string) string {
			v, err := strconv.ParseFloat(goldCostRe.FindStringSubmatch(m)[1], 64)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				return m
			}
			r := strings.TrimSuffix(strings.TrimRight(strconv.FormatFloat(v, 'f', 9, 64), "0"), ".")
			return `"cost_usd": ` + r
		})
	}
	return []byte(s)
}

// goldMAC computes run.json's MAC as sot makes it, without sot's code:
// HMAC-SHA256 under the user's key over "sot-run-state-v1\n" and the record
// as compact JSON without its "mac" field.
func goldMAC(t *testing.T, key []byte, record string) string {
	t.Helper()
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(goldMACRe.ReplaceAllString(record, ""))); err != nil {
		t.Fatalf("run.json: %v", err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("sot-run-state-v1\n"))
	m.Write(compact.Bytes())
	return hex.EncodeToString(m.Sum(nil))
}

// goldWriteRundir commits the state a run of today's code leaves for the
// next invocation of the same question: its record and its journal. The
// files it rendered are not committed: the replay must render them again
// from the journal, and they are pinned under out/.
func goldWriteRundir(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{run.StateFile, run.JournalFile} {
		goldWriteFile(t, filepath.Join(dir, name), files[name])
	}
}
