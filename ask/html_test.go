package ask

import (
	"regexp"
	"strings"
	"testing"

	"github.com/sotlabs/sot/internal/browsertest"
)

// htmlFixture is an answer with every part answer.html shows: all seven
// perspectives, a conflict summary, a debate, dropped and missing parts.
func htmlFixture() *Answer {
	roles := []string{"analyst", "advocate", "critic", "synthesizer", "historian", "stakeholder", "pragmatist"}
	a := &Answer{
		RunID: "rhtml", Question: "When does the billing migration happen?", Intent: "temporal", Complexity: "moderate", Rule: `"when" asks about time`,
		SoT: true, Strategy: "rotating", Labels: true,
		ConflictSummary: &ConflictSummary{Tensions: 1, Agreements: 2, Themes: []string{"migration", "contract"}, Summary: "1 potential conflict detected."},
		Debate: &Debate{
			Tensions: []Tension{{ID: "T1", Topic: "when it happens", Sides: []Side{
				{Position: "It was delayed to Q4.", Answers: []string{"A3"}},
				{Position: "It is under way.", Answers: []string{"A2"}},
			}, Treatment: "open", How: "the sources give two dates"}},
			UniqueRisks: []UniqueRisk{{Risk: "the unsigned contract", Answer: "A3"}},
			Assumptions: []Assumption{{Assumption: "the vendor keeps its price", Answers: []string{"A1", "A4"}}},
		},
		Sentences: []Sentence{
			{Text: "The migration was delayed to Q4.", Answers: []string{"A3", "A5"}, Quote: "delay to Q4"},
			{Text: "The pilot shipped in August.", Answers: []string{"A2"}},
		},
		Dropped: []Dropped{{Sentence: Sentence{Text: "Everyone agrees."}, Reason: "it cites no answer"}},
		Missing: []Missing{{Step: "map", What: "A8 (Facilities)", Error: "the provider is unavailable"}},
		Skipped: []Skipped{{Path: "notes/broken.pdf", Reason: "not text"}},
		Notes:   []string{"2 sources were read in parts."},
		Usage:   Usage{Calls: 9, InputTokens: 12000, CachedInputTokens: 3000, OutputTokens: 1500, CostUSD: 0.0421},
	}
	for i, r := range roles {
		id := "A" + string(rune('1'+i))
		src := "s" + string(rune('1'+i))
		title := "Source " + string(rune('1'+i))
		a.Sources = append(a.Sources, SourceUse{ID: src, Title: title, Type: "meeting", Date: "2024-0" + string(rune('1'+i)) + "-15",
			Relevance: 0.9 - float64(i)/20, Bonus: 0.1, Chosen: "relevance and a new source type", Role: r, RoleWhy: "rotation", Parts: 1 + i%2, Answers: []string{id}})
		a.Evidence = append(a.Evidence, Evidence{ID: id, Source: src, Title: title, Role: r, Addresses: i != 6,
			Summary: "What the " + r + " read.", Points: []Point{{Point: "A point.", Quote: "a quote", QuoteFound: i%2 == 0}}})
	}
	return a
}

// answer.html is golden: go test ./ask -run TestAnswerHTML -update rewrites it.
func TestAnswerHTML(t *testing.T) {
	got, err := htmlFixture().HTML()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "answer.html", got)
	for _, want := range []string{
		`class="badge role-analyst">Analyst<`, `class="badge role-advocate">Advocate<`, `class="badge role-critic">Critic<`,
		`class="badge role-synthesizer">Synthesizer<`, `class="badge role-historian">Historian<`,
		`class="badge role-stakeholder">Stakeholder<`, `class="badge role-pragmatist">Pragmatist<`,
		`id="conflict-summary"`, "<svg", "<details>",
		"#3b82f6", "#22c55e", "#ef4444", "#a855f7", "#f59e0b", "#06b6d4", "#64748b",
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("answer.html lacks %q", want)
		}
	}
	assertSelfContained(t, got)
}

// An answer without a debate, conflict summary or sentence still renders.
func TestAnswerHTMLEmpty(t *testing.T) {
	got, err := (&Answer{Question: "Why?"}).HTML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "No sentence of the answer stood on its sources.") {
		t.Error("an empty answer does not say so")
	}
	if strings.Contains(string(got), `id="conflict-summary"`) {
		t.Error("a conflict box without a conflict summary")
	}
}

var hostile = []string{
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(1)>`,
	`javascript:alert(1)`,
	`'><svg onload=alert(1)>`,
	`</style><script>alert(2)</script>`,
}

// Hostile text from a source or the model never becomes markup.
func TestAnswerHTMLEscapesHostileText(t *testing.T) {
	for _, h := range hostile {
		a := htmlFixture()
		a.Question = h
		a.Sources[0].Title = h
		a.Sources[0].Type = h
		a.Sources[1].Chosen = h
		a.Sources[2].Role = h
		a.Evidence[0].Title = h
		a.Evidence[0].Summary = h
		a.Evidence[0].Points[0].Point = h
		a.Evidence[0].Points[0].Quote = h
		a.Evidence[1].Role = h
		a.Sentences[0].Text = h
		a.Sentences[0].Quote = h
		a.Debate.Tensions[0].Topic = h
		a.Debate.Tensions[0].Sides[0].Position = h
		a.Debate.Tensions[0].Treatment = h
		a.ConflictSummary.Themes = []string{h}
		a.ConflictSummary.Summary = h
		a.Dropped[0].Reason = h
		a.Missing[0].Error = h
		a.Skipped[0].Path = h
		a.Notes = []string{h}
		got, err := a.HTML()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(got), h) && strings.ContainsAny(h, `<>"'`) {
			t.Errorf("%q appears unescaped", h)
		}
		assertSelfContained(t, got)
	}
}

var (
	tagRE = regexp.MustCompile(`<(/?)([a-zA-Z][a-zA-Z0-9-]*)([^>]*)>`)
	// htmlTags are the only elements the template writes.
	htmlTags = map[string]bool{
		"html": true, "head": true, "meta": true, "title": true, "style": true, "body": true, "main": true,
		"h1": true, "h2": true, "p": true, "strong": true, "em": true, "b": true, "br": true, "span": true, "div": true,
		"section": true, "ul": true, "li": true, "details": true, "summary": true, "svg": true, "path": true,
		"table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true,
	}
	eventAttrRE = regexp.MustCompile(`(?i)\son[a-z]+\s*=|javascript:|\s(src|href|action|srcset)\s*=`)
)

// assertSelfContained checks that the page holds only the template's own
// elements, with no event handler, no script URL and nothing to load.
func assertSelfContained(t *testing.T, page []byte) {
	t.Helper()
	s := string(page)
	// Drop the stylesheet, whose text is not markup.
	if i, j := strings.Index(s, "<style>"), strings.Index(s, "</style>"); i >= 0 && j > i {
		s = s[:i] + s[j:]
	}
	for _, m := range tagRE.FindAllStringSubmatch(s, -1) {
		if !htmlTags[strings.ToLower(m[2])] {
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

// answer.html in headless Chromium: no console error, no request but the
// file, every badge and the conflict box visible. The screenshot is
// answer.png (SOT_SCREENSHOTS=DIR keeps it).
func TestAnswerHTMLInBrowser(t *testing.T) {
	page, err := htmlFixture().HTML()
	if err != nil {
		t.Fatal(err)
	}
	browsertest.Check(t, "answer.html", page,
		".badge", ".badge.role-analyst", ".badge.role-advocate", ".badge.role-critic", ".badge.role-synthesizer",
		".badge.role-historian", ".badge.role-stakeholder", ".badge.role-pragmatist",
		"#conflict-summary", "#conflict-summary svg", "#tensions .side", "#sources td", "#perspectives details", "#dropped", "#missing")
}

// Hostile text from the corpus does nothing in a browser either.
func TestAnswerHTMLHostileInBrowser(t *testing.T) {
	a := htmlFixture()
	all := strings.Join(hostile, " ")
	a.Question, a.Sources[0].Title, a.Evidence[0].Summary, a.Sentences[0].Quote = all, all, all, all
	a.ConflictSummary.Themes = hostile
	page, err := a.HTML()
	if err != nil {
		t.Fatal(err)
	}
	browsertest.Check(t, "answer-hostile.html", page, "#conflict-summary")
}
