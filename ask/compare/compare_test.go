package compare

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/ask"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/internal/browsertest"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/middleware"
)

// compareOptions makes fresh options for each question from base, as sot
// ask --compare does.
func compareOptions(base *ask.Options) func(string) *ask.Options {
	return func(q string) *ask.Options {
		o := *base
		cfg := *base.Config
		o.Config, o.Question = &cfg, q
		return &o
	}
}

// --compare asks the question under the seed's six configurations; the
// figures are what each run's journal records, the control run has no
// overhead, and comparing again sends nothing and gives the same figures.
func TestCompare(t *testing.T) {
	top := testCorpus(t)
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: responder}}})
	defer srv.Close()
	base := testOptions(t, top, srv.OpenAIBaseURL())
	newOptions := compareOptions(base)
	ctx := context.Background()
	c, err := Compare(ctx, []string{"Why did the billing migration slip?"}, newOptions)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Runs) != len(Configurations) || len(c.Rates) != len(Configurations) {
		t.Fatalf("%d runs, %d rates", len(c.Runs), len(c.Rates))
	}
	for _, m := range c.Runs {
		if m.Error != "" {
			t.Errorf("%s: %s", m.Configuration, m.Error)
		}
	}
	if c.Runs[0].Configuration != "Control" || c.Runs[0].TokenOverhead != 0 {
		t.Errorf("first run %+v, want the control run with no overhead", c.Runs[0])
	}
	// Tensions are the lexical detector's between the readings, in every
	// configuration: SoT-Debate's are counted as the others', not its
	// debate's.
	for _, m := range c.Runs {
		if m.Tensions != c.Runs[0].Tensions {
			t.Errorf("%s: %d tensions, Control %d; the readings are alike, so the detector's count is too", m.Configuration, m.Tensions, c.Runs[0].Tensions)
		}
	}
	if c.Definitions.Tensions == "" || !strings.Contains(c.Definitions.Tensions, "same way in every configuration") {
		t.Errorf("definitions %+v: the tensions are not named", c.Definitions)
	}
	// Each run's figures are its journal's. Two configurations that come
	// to the same plan are one run, whose journal the second replays.
	total, seen := 0, map[string]bool{}
	for _, m := range c.Runs {
		calls, byModel, err := middleware.JournalUsage(filepath.Join(top, ".sot", "answers", m.RunID, "journal.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		var u llm.Usage
		for _, mu := range byModel {
			u = u.Add(mu)
		}
		if calls != m.Calls || u.InputTokens != m.InputTokens || u.CachedInputTokens != m.CachedTokens || u.OutputTokens != m.OutputTokens {
			t.Errorf("%s: measured %d calls, %d/%d/%d tokens; its journal records %d calls, %+v", m.Configuration, m.Calls, m.InputTokens, m.CachedTokens, m.OutputTokens, calls, u)
		}
		if m.Calls == 0 || m.InputTokens == 0 {
			t.Errorf("%s: %d calls, %d input tokens", m.Configuration, m.Calls, m.InputTokens)
		}
		if !seen[m.RunID] {
			total += calls
		}
		seen[m.RunID] = true
	}
	if sent := len(srv.Requests()); sent != total {
		t.Errorf("%d requests sent, the journals record %d", sent, total)
	}
	if c.Metadata == nil || c.Metadata.Sources != len(notes) || c.Metadata.WithMetadata != 0 || c.Metadata.MeetsTarget {
		t.Errorf("metadata coverage %+v, want 0 of %d sources", c.Metadata, len(notes))
	}

	sent := len(srv.Requests())
	again, err := Compare(ctx, []string{"Why did the billing migration slip?"}, newOptions)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()) - sent; n != 0 {
		t.Errorf("comparing again sent %d requests", n)
	}
	for i, m := range again.Runs {
		w := c.Runs[i]
		if m.RunID != w.RunID || m.Calls != w.Calls || m.InputTokens != w.InputTokens || m.OutputTokens != w.OutputTokens || m.Tensions != w.Tensions {
			t.Errorf("%s again: %+v, first %+v", m.Configuration, m, w)
		}
	}
	if again.ID != c.ID || !strings.HasPrefix(c.ID, "r") {
		t.Errorf("comparison ids %q and %q, want one id for the same runs", c.ID, again.ID)
	}

	// Written next to each other in the default directory, named by the id.
	files, err := c.Write(top, "", true)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(top, ".sot", "answers", "compare-"+c.ID)
	if len(files) != 2 {
		t.Fatalf("wrote %v", files)
	}
	b, err := os.ReadFile(filepath.Join(dir, ComparisonFile))
	if err != nil {
		t.Fatal(err)
	}
	var back Comparison
	if err := json.Unmarshal(b, &back); err != nil || back.ID != c.ID || len(back.Runs) != len(c.Runs) {
		t.Errorf("comparison.json: %v, %+v", err, back)
	}
	if h, err := os.ReadFile(filepath.Join(dir, HTMLFile)); err != nil || !strings.Contains(string(h), `id="q1-chart"`) {
		t.Errorf("compare.html: %v", err)
	}
	// sot runs does not take the comparison for a question.
	runs, err := ask.ListRuns(top, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if strings.Contains(r.Dir, "compare-") {
			t.Errorf("sot runs lists the comparison: %+v", r)
		}
	}
}

// The configurations that do not ask for groups read source by source
// whatever the run or the config says; those that do read by what the run
// asked for (--groups, ask.groups, the custom groups of --group), else by
// quarter.
func TestConfigurationsGroups(t *testing.T) {
	custom := []config.CustomGroup{{Name: "Launch risks", Tags: []string{"risk"}}}
	for _, c := range []struct {
		name         string
		groups, conf string
		custom       []config.CustomGroup
		want         string
	}{
		{"nothing asked", "", "", nil, "temporal"},
		{"--groups", "source", "temporal", nil, "source"},
		{"ask.groups", "", "source", nil, "source"},
		{"--group", "", "", custom, ""},
	} {
		for _, cf := range Configurations {
			cfg := config.Defaults()
			cfg.Ask.Groups = c.conf
			o := &ask.Options{Groups: c.groups, CustomGroups: c.custom}
			o.Config = &cfg
			cf.apply(o)
			if !cf.Groups {
				if o.Groups != "" || o.Config.Ask.Groups != "" || o.CustomGroups != nil {
					t.Errorf("%s, %s: groups %q, ask.groups %q, custom %v; want none", c.name, cf.Name, o.Groups, o.Config.Ask.Groups, o.CustomGroups)
				}
				continue
			}
			if o.Groups != c.want || len(o.CustomGroups) != len(c.custom) {
				t.Errorf("%s, %s: groups %q, custom %v; want %q", c.name, cf.Name, o.Groups, o.CustomGroups, c.want)
			}
		}
	}
}

// The rates follow the seed's definitions: conflict detection over every
// question answered; group decomposition only for the configurations that
// ask for groups, over the questions whose sources fell into 2 or more
// groups; inter-group conflicts over the questions read by group.
func TestCompareRates(t *testing.T) {
	groups := func(n int) *int { return &n }
	var runs []Measured
	add := func(q string, f func(cf Configuration) Measured) {
		for _, cf := range Configurations {
			m := f(cf)
			m.Question, m.Configuration = q, cf.Name
			if !cf.Groups {
				m.Groups, m.ByGroup = nil, false
			}
			runs = append(runs, m)
		}
	}
	// q1: 3 groups, read by group, a tension everywhere.
	add("q1", func(Configuration) Measured { return Measured{Tensions: 1, Groups: groups(3), ByGroup: true} })
	// q2: 2 groups, read by group, no tension.
	add("q2", func(Configuration) Measured { return Measured{Groups: groups(2), ByGroup: true} })
	// q3: 2 groups but a simple question: read source by source.
	add("q3", func(Configuration) Measured { return Measured{Groups: groups(2)} })
	// q4: one group only, with a tension: not counted for groups.
	add("q4", func(Configuration) Measured { return Measured{Tensions: 2, Groups: groups(1)} })
	// q5: failed everywhere: counted nowhere.
	add("q5", func(Configuration) Measured {
		return Measured{Tensions: 5, Groups: groups(4), ByGroup: true, Error: "boom"}
	})

	for _, r := range rates(runs) {
		cf, _ := configuration(r.Configuration)
		if r.Questions != 4 || r.Conflicts != 2 || r.ConflictRate != 0.5 {
			t.Errorf("%s: %d questions, %d conflicts (%v), want 4, 2 (0.5)", r.Configuration, r.Questions, r.Conflicts, r.ConflictRate)
		}
		if !cf.Groups {
			if r.GroupRate != nil || r.InterGroupRate != nil || r.WithGroups != nil || r.ByGroup != nil {
				t.Errorf("%s asks for no groups, yet has group rates %+v", r.Configuration, r)
			}
			continue
		}
		if r.WithGroups == nil || *r.WithGroups != 3 || r.ByGroup == nil || *r.ByGroup != 2 || r.GroupRate == nil || *r.GroupRate != 2.0/3 {
			t.Errorf("%s: group decomposition %+v, want 2 of the 3 questions with groups", r.Configuration, r)
		}
		if r.InterGroup == nil || *r.InterGroup != 1 || r.InterGroupRate == nil || *r.InterGroupRate != 0.5 {
			t.Errorf("%s: inter-group conflicts %+v, want 1 of the 2 read by group", r.Configuration, r)
		}
	}
	// No question with groups: no rate, rather than 0%.
	for _, r := range rates([]Measured{{Question: "q", Configuration: "SoT-Groups", Groups: groups(1)}}) {
		if r.Configuration == "SoT-Groups" && (r.GroupRate != nil || r.InterGroupRate != nil || *r.WithGroups != 0) {
			t.Errorf("no question with groups: %+v", r)
		}
	}
	// In JSON a rate that does not apply is left out.
	b, _ := json.Marshal(rates(runs)[0])
	if strings.Contains(string(b), "group_decomposition_rate") || strings.Contains(string(b), "inter_group") {
		t.Errorf("Control's rates say something of groups: %s", b)
	}
}

// Over a corpus whose sources fall into several groups, the group
// configurations record how many, and the rates are those of the runs:
// a question that is not simple is read by group, a simple one is not.
func TestCompareGroupRates(t *testing.T) {
	top := t.TempDir()
	os.MkdirAll(filepath.Join(top, ".git"), 0o755)
	dir := filepath.Join(top, ".sot", "corpus")
	os.MkdirAll(dir, 0o755)
	for i, typ := range []string{"meeting", "meeting", "meeting", "report", "report", "retrospective", "meeting"} {
		body := fmt.Sprintf("---\nsource_type: %s\n---\n# Note %d\n\nAll the billing migration decisions in note %d.\n", typ, i, i)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("note%d.md", i)), []byte(body), 0o644)
	}
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: responder}}})
	defer srv.Close()
	base := testOptions(t, top, srv.OpenAIBaseURL())
	base.Config.Ask.Groups = "source"
	questions := []string{"Summarize all the billing migration decisions across every note.", "What did note 3 decide about the billing migration?"}
	c, err := Compare(context.Background(), questions, compareOptions(base))
	if err != nil {
		t.Fatal(err)
	}
	readByGroup := map[string]bool{}
	for _, m := range c.Runs {
		if m.Error != "" {
			t.Fatalf("%s, %q: %s", m.Configuration, m.Question, m.Error)
		}
		cf, _ := configuration(m.Configuration)
		switch {
		case !cf.Groups && (m.Groups != nil || m.ByGroup):
			t.Errorf("%s records groups %v, by group %v", m.Configuration, m.Groups, m.ByGroup)
		case cf.Groups && !m.GroupsExisted():
			t.Errorf("%s, %q: groups %v, want the 3 source types", m.Configuration, m.Question, m.Groups)
		}
		if m.ByGroup {
			readByGroup[m.Question] = true
		}
	}
	if !readByGroup[questions[0]] || readByGroup[questions[1]] {
		t.Fatalf("read by group: %v; want the summary only", readByGroup)
	}
	for _, r := range c.Rates {
		cf, _ := configuration(r.Configuration)
		if !cf.Groups {
			if r.GroupRate != nil || r.InterGroupRate != nil {
				t.Errorf("%s: %+v", r.Configuration, r)
			}
			continue
		}
		if r.GroupRate == nil || *r.GroupRate != 0.5 || *r.WithGroups != 2 || *r.ByGroup != 1 {
			t.Errorf("%s: group decomposition %+v, want 1 of the 2 questions with groups", r.Configuration, r)
		}
		want := 0.0
		for _, m := range c.Runs {
			if m.Configuration == r.Configuration && m.ByGroup && m.Tensions > 0 {
				want = 1
			}
		}
		if r.InterGroupRate == nil || *r.InterGroupRate != want {
			t.Errorf("%s: inter-group conflict rate %v, want %v over the one question read by group", r.Configuration, r.InterGroupRate, want)
		}
	}
}

// The coverage counts the corpus's sources with SoT metadata: from an
// export's payload, or from an analysis stored in the index.
func TestCompareMetadataCoverage(t *testing.T) {
	top := testCorpus(t)
	export := "---\nagent_type: northstar-meeting-agent\nagent_name: Q2 costs\nsource_type: documentation\ncreated: 2025-06-30T12:00:00Z\n---\n\n# Meeting Agent: Q2 costs\n\n## Executive Summary\n\nWhat the billing system cost in Q2.\n\n## Export Payload (JSON)\n\n```json\n" +
		`{"agent": {"id": "q2-costs", "name": "Q2 costs", "created": "2025-06-30T12:00:00Z"}, "source": {"type": "documentation"}, "analysis": {"summary": "What the billing system cost in Q2."},` +
		`"sotMetadata": {"meetingType": "report", "topicTags": ["billing", "costs", "vendors"], "temporalContext": {"quarter": "Q2 2025", "timeframe": "past"}, "suggestedPerspective": "historian"}}` + "\n```\n"
	if err := os.WriteFile(filepath.Join(top, ".sot", "corpus", "q2-costs.md"), []byte(export), 0o644); err != nil {
		t.Fatal(err)
	}
	o := testOptions(t, top, "http://127.0.0.1:1")
	ctx := context.Background()
	p, err := ask.Prepare(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := metadataCoverage(ctx, top, p)
	if err != nil {
		t.Fatal(err)
	}
	if mc.Sources != 5 || mc.FromPayload != 1 || mc.FromAnalysis != 0 || mc.WithMetadata != 1 || mc.Coverage != 0.2 || mc.MeetsTarget || mc.Target != ask.CoverageTarget {
		t.Errorf("coverage %+v, want 1 of 5 from the payload", mc)
	}
	// An analysis of every other source meets the target.
	ix, err := ask.OpenIndex(top)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := ix.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if d.Meta != nil {
			continue
		}
		b, _ := json.Marshal(map[string]any{"sotMetadata": map[string]any{"meetingType": "planning", "suggestedPerspective": "critic"}})
		if err := ix.SetAnalysis(ctx, d.ID, b); err != nil {
			t.Fatal(err)
		}
	}
	ix.Close()
	if mc, err = metadataCoverage(ctx, top, p); err != nil {
		t.Fatal(err)
	}
	if mc.WithMetadata != 5 || mc.FromAnalysis != 4 || mc.Coverage != 1 || !mc.MeetsTarget {
		t.Errorf("coverage %+v, want all 5", mc)
	}
}

// compareFixture is a comparison with every part compare.html shows: two
// questions, one with a failed and a partial run, the rates and the
// metadata coverage.
func compareFixture() *Comparison {
	c := &Comparison{ID: "r0123456789", Definitions: definitions(0.6), Metadata: &MetadataCoverage{Sources: 20, WithMetadata: 18, FromPayload: 12, FromAnalysis: 6, Coverage: 0.9, Target: ask.CoverageTarget}}
	for qi, q := range []string{"Why did the billing migration slip?", "How did the plan change across the quarters?"} {
		for i, cf := range Configurations {
			m := Measured{Question: q, Configuration: cf.Name, RunID: fmt.Sprintf("r%d%d00000000", qi, i),
				Calls: 4 + i, InputTokens: 10000 + 2500*i + 1000*qi, CachedTokens: 1000 * i, OutputTokens: 900 + 300*i, CostUSD: 0.01 * float64(i+1),
				WallMS: int64(2000 + 400*i), Tensions: i % 3, Agreements: 2}
			if cf.Groups {
				n := 3 - qi // q2's sources fall into 2 groups, but it is not read by group
				m.Groups, m.ByGroup = &n, qi == 0
			}
			if qi == 1 && cf.Name == "SoT-Primary" {
				m = Measured{Question: q, Configuration: cf.Name, Error: "the provider is unavailable"}
			}
			if qi == 1 && cf.Name == "SoT-Debate" {
				m.Missing = 1
			}
			if qi == 0 && cf.Name == "SoT-Rotating" {
				m.Replayed = true
			}
			if qi == 0 && cf.Name == "SoT-Primary" {
				m.Replayed, m.FromCache, m.WallMS = true, true, 0
			}
			c.Runs = append(c.Runs, m)
		}
	}
	for i := range c.Runs {
		m := &c.Runs[i]
		ctl := c.Runs[i/len(Configurations)*len(Configurations)]
		if m.Error == "" {
			m.TokenOverhead = float64(m.InputTokens+m.OutputTokens)/float64(ctl.InputTokens+ctl.OutputTokens) - 1
			if !m.FromCache {
				l := float64(m.WallMS)/float64(ctl.WallMS) - 1
				m.Latency = &l
			}
		}
	}
	c.Rates = rates(c.Runs)
	return c
}

// compare.html is golden: go test ./ask/compare -run TestCompareHTML -update
// rewrites it.
func TestCompareHTML(t *testing.T) {
	got, err := compareFixture().HTML()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.html", got)
	s := string(got)
	for _, want := range []string{
		`id="q1-table"`, `id="q1-chart"`, `id="q2-table"`, `id="q2-chart"`, `id="rates-table"`, `id="metadata-coverage"`,
		`class="bar bar-input"`, `class="bar bar-output"`, `class="bar bar-tensions"`,
		"10,900 tokens", "2 tensions", "1 tension<", "0 tensions", "failed: the provider is unavailable", "(1 part(s) missing)", "baseline",
		"18 of 20</b> source(s)", "90.0%", "more than 95%", "not met",
		"1 of 2 with groups", "not over the 60% target", "1 of 1 read by group", "below the 15%-30% band", "above the 15%-30% band",
		`<tr class="config-sot-rotating replayed">`, `class="badge-replayed"`, `id="def-tensions"`, "the same way in every configuration",
		`id="def-wall"`, "recorded them when they were made", `id="def-replayed"`,
		// SoT-Primary's answers all came from the cache: no wall time, no latency.
		`<td class="num">$0.0300</td><td class="num">-</td>`, `<td class="num">&#43;51%</td><td class="num">-</td>`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("compare.html lacks %q", want)
		}
	}
	// The rows of the configurations that ask for no groups show a dash.
	if n := strings.Count(s, `<span class="absent">-</span>`); n != 2*4 {
		t.Errorf("%d absent rates, want 2 for each of the 4 configurations without groups", n)
	}
	assertCompareSelfContained(t, got)

	// One question: no rates table.
	one := compareFixture()
	one.Runs = one.Runs[:len(Configurations)]
	one.Rates = rates(one.Runs)
	got, err = one.HTML()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got), `id="rates"`) || !strings.Contains(string(got), "<title>Comparison: Why did the billing migration slip?</title>") {
		t.Error("one question: a rates table, or no question in the title")
	}
}

// Hostile text in a question or an error never becomes markup.
func TestCompareHTMLEscapesHostileText(t *testing.T) {
	for _, h := range hostile {
		c := compareFixture()
		for i := range c.Runs {
			if c.Runs[i].Question == c.Runs[0].Question {
				c.Runs[i].Question = h
			}
			if c.Runs[i].Error != "" {
				c.Runs[i].Error = h
			}
		}
		c.Runs[1].RunID = h
		got, err := c.HTML()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(got), h) && strings.ContainsAny(h, `<>"'`) {
			t.Errorf("%q appears unescaped", h)
		}
		assertCompareSelfContained(t, got)
	}
}

// compareTags are the only elements compare.html's template writes.
var compareTags = map[string]bool{
	"html": true, "head": true, "meta": true, "title": true, "style": true, "body": true, "main": true,
	"h1": true, "h2": true, "p": true, "b": true, "br": true, "span": true, "div": true, "section": true, "ul": true, "li": true,
	"table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true,
	"svg": true, "g": true, "rect": true, "line": true, "text": true,
}

// assertCompareSelfContained checks that the page holds only the
// template's own elements, with no event handler, no script URL and
// nothing to load.
func assertCompareSelfContained(t *testing.T, page []byte) {
	t.Helper()
	s := string(page)
	if i, j := strings.Index(s, "<style>"), strings.Index(s, "</style>"); i >= 0 && j > i {
		s = s[:i] + s[j:]
	}
	for _, m := range tagRE.FindAllStringSubmatch(s, -1) {
		if !compareTags[strings.ToLower(m[2])] {
			t.Errorf("unexpected element <%s%s>", m[1]+m[2], m[3])
		}
		if eventAttrRE.MatchString(m[3]) {
			t.Errorf("element <%s%s> has a handler, a URL or a resource", m[2], m[3])
		}
	}
	if strings.Contains(strings.ToLower(s), "<script") || strings.Contains(s, "url(") || strings.Contains(s, "@import") {
		t.Error("the page has a script or loads a resource")
	}
}

// compare.html in headless Chromium: no console error, no request but the
// file, the tables, the charts with their bars and labels, the rates and
// the coverage visible. The screenshot is compare.png (SOT_SCREENSHOTS=DIR
// keeps it).
func TestCompareHTMLInBrowser(t *testing.T) {
	page, err := compareFixture().HTML()
	if err != nil {
		t.Fatal(err)
	}
	browsertest.Check(t, "compare.html", page,
		"#q1-table", "#q1-table td", "#q2-table tr.failed", "#q1-chart", "#q2-chart",
		"#q1-chart .bar-input", "#q1-chart .bar-output", "#q1-chart .bar-tensions", "#q1-chart text.tokens", "#q1-chart text.tensions",
		"#q2-chart text.failed", "#rates-table td", "#metadata-coverage", "#coverage-bar .coverage-fill", "#q1-table .badge-replayed", "#def-tensions")
}

// Hostile text in a question does nothing in a browser either.
func TestCompareHTMLHostileInBrowser(t *testing.T) {
	c := compareFixture()
	all := strings.Join(hostile, " ")
	for i := range c.Runs {
		c.Runs[i].Question += all
		if c.Runs[i].Error != "" {
			c.Runs[i].Error = all
		}
	}
	page, err := c.HTML()
	if err != nil {
		t.Fatal(err)
	}
	browsertest.Check(t, "compare-hostile.html", page, "#q1-chart", "#q1-table")
}

// Write puts comparison.json, and compare.html when asked, in the
// directory named, or in .sot/answers/compare-<id>; never through a
// symlink, never into a directory of someone else's files, and an earlier
// compare.html not asked for again goes.
func TestCompareWrite(t *testing.T) {
	top := t.TempDir()
	os.MkdirAll(filepath.Join(top, ".git"), 0o755)
	c := compareFixture()
	files, err := c.Write(top, "", false)
	if err != nil {
		t.Fatal(err)
	}
	def := filepath.Join(top, ".sot", "answers", "compare-r0123456789")
	if len(files) != 1 || filepath.Base(files[0]) != ComparisonFile {
		t.Errorf("wrote %v", files)
	}
	if b, err := os.ReadFile(filepath.Join(def, ".gitignore")); err != nil || string(b) != "*\n" {
		t.Errorf(".gitignore: %q, %v", b, err)
	}
	out := filepath.Join(top, "report")
	if _, err := c.Write(top, out, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, HTMLFile)); err != nil {
		t.Fatal(err)
	}
	if err := CheckDir(top, out); err != nil {
		t.Errorf("its own directory refused: %v", err)
	}
	if _, err := c.Write(top, out, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, HTMLFile)); !os.IsNotExist(err) {
		t.Errorf("an earlier compare.html stayed: %v", err)
	}

	// A directory of someone else's files is refused, before any run.
	mine := filepath.Join(top, "docs")
	os.MkdirAll(mine, 0o755)
	os.WriteFile(filepath.Join(mine, "notes.md"), []byte("mine"), 0o644)
	if err := CheckDir(top, mine); err == nil || !strings.Contains(err.Error(), "did not write") {
		t.Errorf("CheckDir(docs) = %v", err)
	}
	if _, err := c.Write(top, mine, true); err == nil {
		t.Error("wrote into a directory of someone else's files")
	}

	// A symlink on the way, or in place of a file, is refused.
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(top, "link")); err != nil {
		t.Skip(err)
	}
	if err := CheckDir(top, filepath.Join(top, "link", "out")); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("CheckDir through a symlink = %v", err)
	}
	if _, err := c.Write(top, filepath.Join(top, "link", "out"), true); err == nil {
		t.Error("wrote through a symlinked directory")
	}
	os.Symlink(filepath.Join(elsewhere, "x.html"), filepath.Join(out, HTMLFile))
	if _, err := c.Write(top, out, true); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("Write over a symlinked compare.html = %v", err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("files written through a symlink: %v", entries)
	}
}
