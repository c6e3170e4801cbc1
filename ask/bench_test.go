package ask

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/ask/corpus"
	"github.com/sotlabs/sot/ask/route"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/index"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/stack"
	"github.com/sotlabs/sot/persona"
	"github.com/sotlabs/sot/prompt"
)

// benchQuestion is comparative ("differ"), so the debate step runs.
const benchQuestion = "How do the teams' positions on the billing migration differ, and why?"

// benchLatency is what every call of the fake provider takes.
const benchLatency = 300 * time.Millisecond

// The two positions the generated sources take on one decision, and the
// reasons they give: the debate step has a tension to name.
var (
	benchTeams     = []string{"finance", "platform", "support", "sales", "security"}
	benchPositions = []string{
		"The %s team wants to delay the billing migration until the vendor contract is signed.",
		"The %s team wants to finish the billing migration before the old billing license ends in October.",
	}
	benchReasons = []string{
		"%s said the billing migration cannot start while the vendor contract is still under legal review.",
		"%s said the billing migration pilot already moved two thousand customers without a failed invoice.",
		"%s said the billing migration would cost twice as much if the old license has to be renewed.",
		"%s said the billing migration needs three more engineers than the plan gives it.",
		"%s said the billing migration is the main risk to the renewal quarter.",
	}
	benchPeople = []string{"Ana", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivo", "Jun"}
	// benchTypes and the dates spread the sources over four types and six
	// quarters, which diversity selection weighs (source type, quarter).
	benchTypes = []string{"meeting", "report", "document", "transcript"}
	benchDates = []string{"2024-11-05", "2025-01-14", "2025-02-20", "2025-04-08", "2025-05-19", "2025-07-02", "2025-08-20", "2025-09-15", "2025-10-01", "2025-12-03"}
	// benchFiller is what a source says besides the decision: none of its
	// words is "billing" or "migration", so the only sentences the fake
	// provider quotes are the ones above.
	benchFiller = strings.Fields(`agenda attendees discussed agreed noted raised asked proposed reviewed
		roadmap quarter budget forecast hiring onboarding customers invoices contract vendor license
		pilot rollout schedule deadline risk dependency estimate capacity incident support tickets
		escalation feedback survey revenue margin renewal pricing discount enterprise tier release
		launch sprint backlog scope design review audit compliance security access report metrics
		dashboard weekly monthly plan option proposal decision follow-up owner action item next steps`)
	// benchOffTopic writes the sources no question about the billing
	// migration finds: none of their words is one of the question's.
	benchOffTopic = strings.Fields(`office move fourth floor desks chairs parking lunch catering holiday
		party calendar badge visitors kitchen coffee plants lighting furniture lease landlord cleaning`)
)

// benchCorpus writes a project (a .git directory, and .sot/corpus) whose
// corpus has relevant sources on the billing migration, of varied types
// and dates, and off-topic ones that share no word with the question.
// Each relevant source is about words long.
func benchCorpus(tb testing.TB, relevant, offTopic, words int) string {
	tb.Helper()
	top := tb.TempDir()
	dir := filepath.Join(top, ".sot", "corpus")
	for _, d := range []string{filepath.Join(top, ".git"), dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(2026, 13))
	prose := func(vocab []string, n int) string {
		var b strings.Builder
		for w := range n {
			word := vocab[rng.IntN(len(vocab))]
			switch {
			case w%12 == 0:
				if w > 0 {
					b.WriteString(". ")
				}
				b.WriteString(strings.ToUpper(word[:1]) + word[1:])
			default:
				b.WriteString(" " + word)
			}
		}
		b.WriteString(".")
		return b.String()
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	for i := range relevant {
		typ, date := benchTypes[i%len(benchTypes)], benchDates[i%len(benchDates)]
		team := benchTeams[i%len(benchTeams)]
		title := fmt.Sprintf("%s %s %d", strings.ToUpper(team[:1])+team[1:], typ, i+1)
		var b strings.Builder
		fmt.Fprintf(&b, "---\ntitle: %s\nsource_type: %s\ndate: %s\n---\n\n# %s\n\n", title, typ, date, title)
		b.WriteString(prose(benchFiller, words/3) + "\n\n")
		b.WriteString(fmt.Sprintf(benchPositions[i%2], team) + " " + fmt.Sprintf(benchReasons[i%len(benchReasons)], benchPeople[i%len(benchPeople)]) + "\n\n")
		b.WriteString(prose(benchFiller, words-words/3-30) + "\n")
		write(fmt.Sprintf("%s-%s-%02d.md", date, typ, i+1), b.String())
	}
	for i := range offTopic {
		write(fmt.Sprintf("2025-03-%02d-office-%d.md", 1+i, i+1), fmt.Sprintf("# Office notes %d\n\n%s\n", i+1, prose(benchOffTopic, words/2)))
	}
	return top
}

// benchAskOptions are the options of a question against baseURL with the
// default config, changed by edit when it is not nil. Every run is fresh:
// nothing is replayed from a journal, and nothing comes from the cache.
func benchAskOptions(tb testing.TB, top, baseURL string, edit func(*config.Config)) *Options {
	tb.Helper()
	cfg := config.Defaults()
	p := cfg.Providers["openai"]
	p.BaseURL = baseURL
	cfg.Providers["openai"] = p
	cfg.DefaultModel = "openai:gpt-4.1"
	cfg.Cache.Disabled = true
	if edit != nil {
		edit(&cfg)
	}
	lib, err := persona.Discover(persona.Dirs{})
	if err != nil {
		tb.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-bench-0123456789"
		}
		return ""
	}
	return &Options{Options: scenario.Options{Dir: top, Config: &cfg, Getenv: getenv, Fresh: true, NewStack: func(journal string) (*stack.Stack, error) {
		return stack.New(&cfg, stack.Options{JournalPath: journal, Getenv: getenv})
	}}, Question: benchQuestion, Library: lib}
}

// stepTally is an Executor that runs every step through engine.Local and
// records, step by step (map, debate, reduce), the wall time of the step
// and the tokens its answers report.
type stepTally struct {
	x     engine.Executor
	wall  map[string]time.Duration
	usage map[string]llm.Usage
	calls map[string]int
}

func newStepTally() *stepTally {
	return &stepTally{wall: map[string]time.Duration{}, usage: map[string]llm.Usage{}, calls: map[string]int{}}
}

// executor is for Options.NewExecutor.
func (t *stepTally) executor(p llm.Provider, hooks engine.Hooks, fallback string) engine.Executor {
	t.x = &engine.Local{Provider: p, Hooks: hooks, Fallback: fallback}
	return t
}

// Execute runs one step: the protocol sends one step at a time.
func (t *stepTally) Execute(ctx context.Context, tasks []*engine.Task) []engine.Result {
	start := time.Now()
	res := t.x.Execute(ctx, tasks)
	step := "map"
	if len(tasks) > 0 {
		switch id := tasks[0].ID; {
		case strings.HasPrefix(id, "ask/debate"):
			step = "debate"
		case strings.HasPrefix(id, "ask/reduce"):
			step = "reduce"
		}
	}
	t.wall[step] += time.Since(start)
	for _, r := range res {
		if r.Resp != nil {
			t.usage[step] = t.usage[step].Add(r.Resp.Usage)
			t.calls[step] += max(1, r.Resp.Calls)
		}
	}
	return res
}

func (t *stepTally) tokens(step string) int {
	u := t.usage[step]
	return u.InputTokens + u.OutputTokens
}

// askRun is one timed question.
type askRun struct {
	out              *Outcome
	tally            *stepTally
	prepare, execute time.Duration
}

// runAsk prepares and executes one question into a run directory of its
// own, and fails on anything but a whole answer that passed its check at
// the first try.
func runAsk(tb testing.TB, o *Options, outDir string) askRun {
	tb.Helper()
	ctx := context.Background()
	t := newStepTally()
	o.NewExecutor = t.executor
	o.OutputDir = outDir
	start := time.Now()
	p, err := Prepare(ctx, o)
	if err != nil {
		tb.Fatal(err)
	}
	mid := time.Now()
	out, err := Execute(ctx, p, o)
	if err != nil {
		tb.Fatal(err)
	}
	r := askRun{out: out, tally: t, prepare: mid.Sub(start), execute: time.Since(mid)}
	a := out.Answer
	if a.Partial() || len(a.Dropped) > 0 || len(a.Sentences) == 0 {
		tb.Fatalf("the answer is not whole: missing %+v, dropped %+v, %d sentences", a.Missing, a.Dropped, len(a.Sentences))
	}
	if t.calls["reduce"] != 1 {
		tb.Fatalf("the reduce step made %d calls: its answer failed the check", t.calls["reduce"])
	}
	if a.Usage.Replayed != 0 {
		tb.Fatalf("%d calls replayed from a journal", a.Usage.Replayed)
	}
	// The figures are the answer's own (Outcome.Answer.Usage); the tally
	// only splits them by step, and must add up to them.
	var sum llm.Usage
	calls := 0
	for step, u := range t.usage {
		sum = sum.Add(u)
		calls += t.calls[step]
	}
	if sum.InputTokens != a.Usage.InputTokens || sum.OutputTokens != a.Usage.OutputTokens || calls != a.Usage.Calls {
		tb.Fatalf("the steps' usage (%d calls, %+v) is not the answer's (%+v)", calls, sum, a.Usage)
	}
	return r
}

// BenchmarkAsk10Sources: a comparative question over a corpus of ten
// relevant sources (four types, six quarters) and four off-topic ones,
// with the default config (max_sources 10, the society of thought, the
// debate step), against llmtest at 300 ms a call, streamed from a first
// token at 30 ms, served by a process of its own. Classification,
// retrieval and selection are local, so the critical path is three
// dependent calls: map (ten at once), debate, reduce, 900 ms. Reported:
// the median wall time of Prepare+Execute over the critical path, the
// same for Execute alone, the medians of each phase in milliseconds
// (prepare; the map, debate and reduce steps as the Executor saw them;
// the rest of Execute: the stack, the journal, the lexical detector, the
// check, the files), and the calls made.
func BenchmarkAsk10Sources(b *testing.B) {
	b.Setenv("XDG_CACHE_HOME", b.TempDir())
	top := benchCorpus(b, 10, 4, 500)
	o := benchAskOptions(b, top, providerProcess(b, benchLatency), nil)
	var walls, execs, preps, maps, debates, reduces, rests []time.Duration
	var last askRun
	for i := 0; b.Loop(); i++ {
		r := runAsk(b, o, filepath.Join(top, ".sot", "answers", fmt.Sprintf("bench-%03d", i)))
		walls = append(walls, r.prepare+r.execute)
		preps = append(preps, r.prepare)
		execs = append(execs, r.execute)
		maps = append(maps, r.tally.wall["map"])
		debates = append(debates, r.tally.wall["debate"])
		reduces = append(reduces, r.tally.wall["reduce"])
		rests = append(rests, r.execute-r.tally.wall["map"]-r.tally.wall["debate"]-r.tally.wall["reduce"])
		last = r
	}
	p, a := last.out.Plan, last.out.Answer
	if len(p.Chosen) != 10 || unread(p) != nil || !p.SoT || !p.Debate || a.Debate == nil || len(a.Debate.Tensions) == 0 {
		b.Fatalf("plan: %d sources chosen, %d readings, unread %v, sot %v, debate %v (%s); tensions %+v", len(p.Chosen), len(p.Readings), unread(p), p.SoT, p.Debate, p.DebateWhy, a.Debate)
	}
	critical := float64(3 * benchLatency)
	b.ReportMetric(float64(median(walls))/critical, "wall/critical-path")
	b.ReportMetric(float64(mean(walls))/critical, "wall-mean/critical-path")
	b.ReportMetric(float64(median(execs))/critical, "execute/critical-path")
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(median(preps)), "prepare-ms")
	b.ReportMetric(ms(median(maps)), "map-ms")
	b.ReportMetric(ms(median(debates)), "debate-ms")
	b.ReportMetric(ms(median(reduces)), "reduce-ms")
	b.ReportMetric(ms(median(rests)), "rest-ms")
	b.ReportMetric(float64(a.Usage.Calls), "calls")
	b.ReportMetric(float64(len(p.Chosen)), "sources")
	b.ReportMetric(float64(len(p.Readings)), "readings")
}

// unread lists the chosen sources no reading of the plan reads, alone or
// in a cross-source reading or a group.
func unread(p *Plan) []string {
	read := map[string]bool{}
	for _, r := range p.Readings {
		read[r.Source] = true
		for _, m := range r.Members {
			read[m] = true
		}
	}
	var out []string
	for _, c := range p.Chosen {
		if !read[c.ID] {
			out = append(out, c.ID)
		}
	}
	return out
}

// BenchmarkAskSoTOverhead: the question of BenchmarkAsk10Sources on the
// same corpus, asked once with the society of thought (the default
// config: each source read from a role, the debate step) and once as the
// control run (ask.enable_sot: false: plain readings, no roles, no debate,
// a plain reduce). The fake provider answers a source the same way
// whatever the perspective, so the difference is what the society adds
// to the prompts and the calls it adds, not what roles would make a model
// write. Tokens are llmtest's (a token every four bytes of the prompt and
// of the answer), as the answers' usage reports them. Reported: SoT
// input+output tokens over the control run's, the overhead in percent,
// both totals, and where the difference comes from: the map step's extra
// tokens (the role layer in every map prompt), the debate call's tokens,
// and the reduce step's extra tokens (perspective labels, the tensions to
// treat and the debate's recommendations, the treatments in its answer).
func BenchmarkAskSoTOverhead(b *testing.B) {
	b.Setenv("XDG_CACHE_HOME", b.TempDir())
	top := benchCorpus(b, 10, 4, 500)
	base := providerProcess(b, benchLatency)
	sot := benchAskOptions(b, top, base, nil)
	control := benchAskOptions(b, top, base, func(c *config.Config) { c.Ask.EnableSoT = false })
	var s, c askRun
	for i := 0; b.Loop(); i++ {
		s = runAsk(b, sot, filepath.Join(top, ".sot", "answers", fmt.Sprintf("sot-%03d", i)))
		c = runAsk(b, control, filepath.Join(top, ".sot", "answers", fmt.Sprintf("control-%03d", i)))
	}
	if !s.out.Plan.SoT || !s.out.Plan.Debate || c.out.Plan.SoT || c.out.Plan.Debate {
		b.Fatalf("sot run: sot %v debate %v; control run: sot %v debate %v", s.out.Plan.SoT, s.out.Plan.Debate, c.out.Plan.SoT, c.out.Plan.Debate)
	}
	// The same sources are read by both runs: the society's in fewer
	// readings where a role reads across sources.
	ids := func(p *Plan) []string {
		var out []string
		for _, c := range p.Chosen {
			out = append(out, c.ID)
		}
		return out
	}
	if !slices.Equal(ids(s.out.Plan), ids(c.out.Plan)) || unread(s.out.Plan) != nil || unread(c.out.Plan) != nil {
		b.Fatalf("the runs chose %d and %d sources; unread %v and %v", len(s.out.Plan.Chosen), len(c.out.Plan.Chosen), unread(s.out.Plan), unread(c.out.Plan))
	}
	su, cu := s.out.Answer.Usage, c.out.Answer.Usage
	st, ct := su.InputTokens+su.OutputTokens, cu.InputTokens+cu.OutputTokens
	b.ReportMetric(float64(st)/float64(ct), "sot-tokens/control-tokens")
	b.ReportMetric(100*(float64(st)/float64(ct)-1), "overhead-%")
	b.ReportMetric(float64(st), "sot-tokens")
	b.ReportMetric(float64(ct), "control-tokens")
	b.ReportMetric(float64(s.tally.tokens("map")-c.tally.tokens("map")), "map-extra-tokens")
	b.ReportMetric(float64(s.tally.tokens("debate")), "debate-tokens")
	b.ReportMetric(float64(s.tally.tokens("reduce")-c.tally.tokens("reduce")), "reduce-extra-tokens")
	b.ReportMetric(float64(su.Calls), "sot-calls")
	b.ReportMetric(float64(cu.Calls), "control-calls")
	var roles []string
	for _, a := range s.out.Plan.Assignments {
		roles = append(roles, a.Role)
	}
	b.Logf("roles of the sot run's readings: %s", strings.Join(roles, ", "))
	b.Logf("sot: %d calls, %d in + %d out; control: %d calls, %d in + %d out; map %d vs %d, debate %d, reduce %d vs %d",
		su.Calls, su.InputTokens, su.OutputTokens, cu.Calls, cu.InputTokens, cu.OutputTokens,
		s.tally.tokens("map"), c.tally.tokens("map"), s.tally.tokens("debate"), s.tally.tokens("reduce"), c.tally.tokens("reduce"))
}

// BenchmarkAskPrepare10k: Prepare over a corpus of 10,000 generated
// sources (eight topics, four types, sixteen quarters, 150 to 400 words
// each) that an earlier question already indexed: reading the corpus,
// finding nothing to re-index, classifying, retrieving by BM25 with
// recency, selecting ten for relevance and variety and giving them roles.
// ns/op is one Prepare (the mean), prepare-ms its median. Also reported,
// as medians: the time corpus.Load takes to read the 10,000 files, and
// the time retrieve takes (the incremental sync that finds every source
// unchanged, and the search).
func BenchmarkAskPrepare10k(b *testing.B) {
	b.Setenv("XDG_CACHE_HOME", b.TempDir())
	top := generatedCorpus(b, 10_000)
	o := benchAskOptions(b, top, "http://127.0.0.1:9/v1", nil) // no call is made
	o.Question = "How do the enterprise discount decisions for renewal contracts differ between teams?"
	ctx := context.Background()
	o.OutputDir = filepath.Join(top, ".sot", "answers", "prepare")
	if _, err := Prepare(ctx, o); err != nil { // the earlier question: it builds the index
		b.Fatal(err)
	}
	var p *Plan
	var preps []time.Duration
	for b.Loop() {
		start := time.Now()
		var err error
		if p, err = Prepare(ctx, o); err != nil {
			b.Fatal(err)
		}
		preps = append(preps, time.Since(start))
	}
	b.StopTimer()
	if len(p.Chosen) != 10 || len(p.Readings) == 0 || !p.SoT {
		b.Fatalf("chose %d sources, %d readings, sot %v", len(p.Chosen), len(p.Readings), p.SoT)
	}
	paths, err := corpusPaths(o, p.top)
	if err != nil {
		b.Fatal(err)
	}
	var loads, retrieves []time.Duration
	for range 3 {
		start := time.Now()
		sources, _, err := corpus.Load(paths, corpus.Options{PartTokens: llm.ContextWindow(p.Model) - 4096 - 2048})
		if err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if _, _, err := retrieve(ctx, p.top, sources, o.Question, 10); err != nil {
			b.Fatal(err)
		}
		loads, retrieves = append(loads, mid.Sub(start)), append(retrieves, time.Since(mid))
	}
	b.ReportMetric(float64(median(preps))/float64(time.Millisecond), "prepare-ms")
	b.ReportMetric(float64(median(loads))/float64(time.Millisecond), "load-ms")
	b.ReportMetric(float64(median(retrieves))/float64(time.Millisecond), "retrieve-ms")
	b.ReportMetric(float64(len(p.Sources)), "sources")
}

// generatedCorpus writes n generated sources into a project's
// .sot/corpus, deterministically: each has a main and a second topic, a
// title, a type and a date in frontmatter, and 150 to 400 words, about 60%
// of the main topic's words, 15% of the second's, the rest filler.
func generatedCorpus(tb testing.TB, n int) string {
	tb.Helper()
	topics := []struct {
		name  string
		words []string
	}{
		{"pricing", strings.Fields("pricing price discount enterprise tier subscription margin revenue churn upsell contract renewal invoice seats quote competitor packaging annual monthly")},
		{"hiring", strings.Fields("hiring candidate interview recruiter offer onboarding headcount engineer manager referral salary equity pipeline role backfill intern culture retention")},
		{"infrastructure", strings.Fields("cluster kubernetes latency outage database deploy rollback capacity region failover incident monitoring alert storage network cost autoscaling replica backup")},
		{"security", strings.Fields("security vulnerability audit compliance encryption access credential phishing patch breach firewall policy certificate rotation pentest gdpr risk")},
		{"roadmap", strings.Fields("roadmap milestone feature launch release priority scope deadline backlog sprint estimate dependency beta feedback design prototype spec quarter goal")},
		{"support", strings.Fields("customer ticket escalation response satisfaction complaint refund bug workaround documentation training sla queue agent survey nps chat")},
		{"finance", strings.Fields("budget forecast spend cash runway board investor expense approval variance accrual payroll vendor procurement tax report plan")},
		{"legal", strings.Fields("contract clause liability indemnity negotiation counsel signature agreement term license dispute trademark privacy regulation filing amendment obligation warranty")},
	}
	filler := strings.Fields(`meeting team update discussed agreed decided next steps action item follow week
		concern question proposal option plan status review call note summary group project people time
		issue work need want think said asked suggested noted raised mentioned point idea approach`)
	top := tb.TempDir()
	if err := os.MkdirAll(filepath.Join(top, ".git"), 0o755); err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2026, 10_000))
	pick := func(ws []string) string { return ws[rng.IntN(len(ws))] }
	start := time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		main, second := topics[rng.IntN(len(topics))], topics[rng.IntN(len(topics))]
		date := start.AddDate(0, 0, rng.IntN(4*365))
		typ := benchTypes[rng.IntN(len(benchTypes))]
		title := fmt.Sprintf("%s %s %d, %s and %s", strings.ToUpper(main.name[:1])+main.name[1:], typ, i, pick(main.words), pick(main.words))
		var b strings.Builder
		fmt.Fprintf(&b, "---\ntitle: %s\nsource_type: %s\ndate: %s\n---\n\n# %s\n\n", title, typ, date.Format("2006-01-02"), title)
		for w := range 150 + rng.IntN(251) {
			if w > 0 {
				b.WriteByte(' ')
			}
			switch r := rng.IntN(100); {
			case r < 60:
				b.WriteString(pick(main.words))
			case r < 75:
				b.WriteString(pick(second.words))
			default:
				b.WriteString(pick(filler))
			}
		}
		b.WriteString(".\n")
		dir := filepath.Join(top, ".sot", "corpus", main.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%05d.md", i)), []byte(b.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return top
}

// median is the middle of ds: the typical run, unmoved by the odd run that
// a busy machine slows down.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func mean(ds []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

// The fake provider's answers (see serveProvider), read off the prompts.
var (
	// benchSentenceRE finds the sentences of a source about the decision.
	benchSentenceRE = regexp.MustCompile(`[A-Z][^.?!\n]*\bbilling migration\b[^.?!\n]*\.`)
	// benchAnswerRE finds a MAP answer in a debate or reduce prompt: its
	// id, its perspective and its summary.
	benchAnswerRE = regexp.MustCompile(`(A\d+) \(([^(),]*)(?:, weight [0-9.]+)?, from the sources? [^()]*\): ([^\n]*)`)
	// benchTensionRE finds a tension to treat in a reduce prompt.
	benchTensionRE = regexp.MustCompile(`(?m)^(?:` + prompt.Gutter + `)?(T\d+): `)
)

// benchResponder answers each step of a question from what its prompt
// holds, as a model that did its job would: a MAP answer quotes the
// source's sentences about the billing migration; the debate puts the
// answers that would delay it against those that would finish it; the
// reduce answer has one sentence per answer in that answer's words,
// quoting its source, and lists every tension as open. So the reduce
// answer passes Check the first time.
func benchResponder(rec *llmtest.Recorded) llmtest.Reply {
	switch rec.SchemaName {
	case mapSchemaName:
		src := rec.System
		if i := max(strings.LastIndex(src, "\n# Source "), strings.LastIndex(src, "\n# Sources ")); i >= 0 {
			src = src[i:]
		}
		found := benchSentenceRE.FindAllString(src, 3)
		if len(found) == 0 {
			return llmtest.Reply{JSON: map[string]any{"addresses": false, "points": []any{},
				"summary": "This source does not address the billing migration; it is about the office."}}
		}
		points := []any{}
		for _, s := range found {
			points = append(points, map[string]any{"point": s, "quote": strings.TrimSuffix(s, ".")})
		}
		return llmtest.Reply{JSON: map[string]any{"addresses": true, "points": points, "summary": strings.Join(found, " ")}}
	case debateSchemaName:
		var delay, finish []any
		for _, m := range benchAnswerRE.FindAllStringSubmatch(rec.LastUser(), -1) {
			if strings.Contains(m[3], "delay the billing migration") {
				delay = append(delay, m[1])
			} else {
				finish = append(finish, m[1])
			}
		}
		tensions := []any{}
		risks := []any{}
		assumptions := []any{}
		if len(delay) > 0 && len(finish) > 0 {
			tensions = append(tensions, map[string]any{"topic": "when the billing migration should happen", "sides": []any{
				map[string]any{"position": "delay it until the vendor contract is signed", "answers": delay},
				map[string]any{"position": "finish it before the old billing license ends in October", "answers": finish}}})
			risks = append(risks, map[string]any{"risk": "renewing the old license doubles the cost of the migration", "answer": finish[0]})
			assumptions = append(assumptions, map[string]any{"assumption": "the vendor contract will be signed soon", "answers": delay})
		}
		return llmtest.Reply{JSON: map[string]any{"tensions": tensions, "unique_risks": risks, "assumptions": assumptions,
			"recommendations": []any{"give both positions with the teams that hold them", "keep the October license deadline visible"}}}
	case reduceSchemaName:
		prompt := rec.LastUser()
		sentences := []any{}
		for _, m := range benchAnswerRE.FindAllStringSubmatch(prompt, -1) {
			first := benchSentenceRE.FindString(m[3])
			if first == "" {
				continue
			}
			sentences = append(sentences, map[string]any{"text": first, "answers": []any{m[1]}, "quote": strings.TrimSuffix(first, ".")})
		}
		tensions := []any{}
		for _, m := range benchTensionRE.FindAllStringSubmatch(prompt, -1) {
			tensions = append(tensions, map[string]any{"id": m[1], "treatment": "open", "how": "the teams hold two positions on the date and the notes do not settle it"})
		}
		return llmtest.Reply{JSON: map[string]any{"sentences": sentences, "tensions": tensions}}
	}
	return llmtest.Reply{}
}

// The benchmark's responder must pass the reduce check at the first try,
// and the 10-source corpus must be read whole; this runs in the tests,
// with no latency, so a change in the prompts that breaks the benchmarks
// shows here first.
func TestBenchResponderPassesTheCheck(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	top := benchCorpus(t, 10, 4, 200)
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: benchResponder}}})
	defer srv.Close()
	for _, sot := range []bool{true, false} {
		o := benchAskOptions(t, top, srv.OpenAIBaseURL(), func(c *config.Config) { c.Ask.EnableSoT = sot })
		r := runAsk(t, o, filepath.Join(top, ".sot", "answers", fmt.Sprint("check-", sot)))
		p, a := r.out.Plan, r.out.Answer
		// With a society, the rotation over analyst, critic and
		// synthesizer gives the synthesizer sources 3, 6 and 9, which it
		// reads in one span with two more: 7 readings of one source and
		// one of five.
		want := map[bool]int{true: 8, false: 10}[sot]
		if len(p.Readings) != want || p.SoT != sot || p.Debate != sot || p.Classification.Intent != route.IntentComparative {
			t.Fatalf("sot %v: %d readings (want %d), sot %v, debate %v, intent %s", sot, len(p.Readings), want, p.SoT, p.Debate, p.Classification.Intent)
		}
		if sot && (len(p.Spans) != 1 || len(p.Spans[0].Members) != 5) {
			t.Errorf("spans %+v, want the synthesizer's of five sources", p.Spans)
		}
		if len(a.Sentences) != want {
			t.Errorf("sot %v: %d sentences kept, want %d", sot, len(a.Sentences), want)
		}
		if sot && (a.Debate == nil || len(a.Debate.Tensions) != 1 || a.Debate.Tensions[0].Treatment != "open") {
			t.Errorf("debate: %+v", a.Debate)
		}
	}
}

// BenchmarkAskGroups: 20 sources of four source types (four groups), a
// comparative question, read one source a call (SoT-Rotating) and one
// group a call (SoT-Groups, --groups source), neither with the debate
// step. Reported: the groups run's tokens and calls over the rotating
// run's; the seed claims 40-60% fewer tokens with groups at 15 or more
// sources.
func BenchmarkAskGroups(b *testing.B) {
	b.Setenv("XDG_CACHE_HOME", b.TempDir())
	top := benchCorpus(b, 20, 0, 500)
	base := providerProcess(b, benchLatency)
	edit := func(c *config.Config) { c.Ask.MaxSources = 20; c.Ask.DebatePhase = false }
	rotating := benchAskOptions(b, top, base, edit)
	grouped := benchAskOptions(b, top, base, edit)
	grouped.Groups = "source"
	// The fake provider's reduce answers cite sources by title, which a
	// group's answer does not carry, so the answers are not checked here:
	// only what each run sent and received is compared.
	ask := func(o *Options, dir string) *Outcome {
		o.OutputDir, o.Fresh = dir, true
		p, err := Prepare(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		out, err := Execute(context.Background(), p, o)
		if err != nil {
			b.Fatal(err)
		}
		if out.Answer.Partial() {
			b.Fatalf("partial: %+v", out.Answer.Missing)
		}
		return out
	}
	var r, g *Outcome
	for i := 0; b.Loop(); i++ {
		r = ask(rotating, filepath.Join(top, ".sot", "answers", fmt.Sprintf("rotating-%03d", i)))
		g = ask(grouped, filepath.Join(top, ".sot", "answers", fmt.Sprintf("groups-%03d", i)))
	}
	if len(g.Plan.Groups) != 4 || len(r.Plan.Groups) != 0 || len(r.Plan.Chosen) != 20 || unread(r.Plan) != nil || unread(g.Plan) != nil {
		b.Fatalf("groups %d (%s); rotating run: %d sources chosen, %d readings; unread: rotating %v, groups %v",
			len(g.Plan.Groups), g.Plan.GroupsWhy, len(r.Plan.Chosen), len(r.Plan.Readings), unread(r.Plan), unread(g.Plan))
	}
	ru, gu := r.Answer.Usage, g.Answer.Usage
	rt, gt := ru.InputTokens+ru.OutputTokens, gu.InputTokens+gu.OutputTokens
	b.ReportMetric(float64(gt)/float64(rt), "groups-tokens/rotating-tokens")
	b.ReportMetric(100*(1-float64(gt)/float64(rt)), "token-savings-%")
	b.ReportMetric(float64(gu.Calls), "groups-calls")
	b.ReportMetric(float64(ru.Calls), "rotating-calls")
	b.ReportMetric(float64(len(r.Plan.Readings)), "rotating-readings")
}

// retrieve is the way a question found its sources before the index kept
// its files' records: every source loaded, synced into the index by
// content and ranked for the question. The benchmark times it beside
// Prepare, which reads only what changed.
func retrieve(ctx context.Context, top string, sources []corpus.Source, question string, want int) ([]index.Hit, string, error) {
	ix, err := OpenIndex(top)
	if err != nil {
		return nil, "", err
	}
	defer ix.Close()
	note := RebuiltNote(ix)
	docs := make([]index.Doc, 0, len(sources))
	loaded := map[string]bool{}
	for _, s := range sources {
		docs = append(docs, DocOf(s))
		loaded[s.ID] = true
	}
	if _, err := ix.Sync(ctx, docs, index.SyncOptions{}); err != nil {
		return nil, "", fmt.Errorf("update the corpus index: %w", err)
	}
	all, err := ix.Search(ctx, question, index.SearchOptions{Limit: max(want*8, 64)})
	if err != nil {
		return nil, "", err
	}
	return slices.DeleteFunc(all, func(h index.Hit) bool { return !loaded[h.Doc.ID] }), note, nil
}
