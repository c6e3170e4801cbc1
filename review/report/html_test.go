package report

import (
	"regexp"
	"strings"
	"testing"

	"github.com/sotlabs/sot/internal/browsertest"
)

// review.html is golden: go test ./review/report -run TestReviewHTML -update rewrites it.
func TestReviewHTML(t *testing.T) {
	for _, tc := range []struct {
		file   string
		debate bool
	}{{"review_parallel.html", false}, {"review_debate.html", true}} {
		t.Run(tc.file, func(t *testing.T) {
			got, err := HTML(fixture(tc.debate), "0.3.0")
			if err != nil {
				t.Fatal(err)
			}
			for range 3 { // map iteration must not leak into the output
				again, err := HTML(fixture(tc.debate), "0.3.0")
				if err != nil || string(again) != string(got) {
					t.Fatal("output differs between two renders of the same input")
				}
			}
			golden(t, tc.file, got)
			s := string(got)
			for _, want := range []string{
				`id="conflict-summary"`, `id="must-fix"`, `id="should-fix"`, `id="consider"`, `id="dissent"`,
				`class="badge spec `, `class="badge lens `, `tier-direct`, `tier-inferential`, "<svg",
				">security<", ">premortem<", ">red-team<", "Session tokens are compared in non-constant time.",
			} {
				if !strings.Contains(s, want) {
					t.Errorf("review.html lacks %q", want)
				}
			}
			if got := strings.Contains(s, `id="debate"`); got != tc.debate {
				t.Errorf("debate trace shown = %v, want %v", got, tc.debate)
			}
			assertSelfContained(t, got)
		})
	}
}

// A nil or empty result still renders.
func TestReviewHTMLEmpty(t *testing.T) {
	got, err := HTML(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "None.") {
		t.Error("an empty review does not say so")
	}
}

var hostile = []string{
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(1)>`,
	`javascript:alert(1)`,
	`'><svg onload=alert(1)>`,
	`</style><script>alert(2)</script>`,
}

// Hostile text from the material under review or a model never becomes
// markup.
func TestReviewHTMLEscapesHostileText(t *testing.T) {
	for _, h := range hostile {
		res := fixture(true)
		res.Coordinates = h
		res.Specialists = append(res.Specialists, h)
		res.Perspectives = append(res.Perspectives, h)
		res.Items[0].Claim = h
		res.Items[0].Category = h
		res.Items[0].Location.File = h
		res.Items[0].Sources[0].Grounds = h
		res.Items[0].Sources[0].Warrant = h
		res.Items[0].Sources[0].Specialist = h
		res.Items[0].Sources[0].Lens = h
		res.Items[1].Chain = h
		res.Items[4].Decision.Reason = h
		res.Observations[0].Claim = h
		res.TradeOffs[0].Axis = h
		res.TradeOffs[0].Options = []string{h}
		res.Dissent[0].Positions[0].Summary = h
		res.Dissent[0].Positions[0].Source = h + "/" + h
		res.Dissent[0].Resolution = h
		res.Threads[0].Claim = h
		res.Threads[0].Rounds[0].Responses[0].Argument = h
		res.Threads[1].Rounds[1].Responses[0].Stance = h
		res.Threads[1].State = h
		res.Narrative = h
		res.Notes = []string{h}
		res.Rejected = []string{h}
		res.Skipped[0].Reason = h
		res.Missing[0].Error = h
		res.Trace[0].Resolution = h
		res.Models[h] = h
		got, err := HTML(res, h)
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
		"html": true, "head": true, "meta": true, "title": true, "style": true, "body": true, "main": true, "footer": true,
		"h1": true, "h2": true, "h3": true, "p": true, "strong": true, "em": true, "b": true, "br": true, "span": true, "div": true,
		"section": true, "article": true, "ul": true, "li": true, "dl": true, "dt": true, "dd": true, "blockquote": true,
		"details": true, "summary": true, "svg": true, "path": true,
	}
	eventAttrRE = regexp.MustCompile(`(?i)\son[a-z]+\s*=|javascript:|\s(src|href|action|srcset)\s*=`)
)

// assertSelfContained checks that the page holds only the template's own
// elements, with no event handler, no script URL and nothing to load.
func assertSelfContained(t *testing.T, page []byte) {
	t.Helper()
	s := string(page)
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

// review.html in headless Chromium: no console error, no request but the
// file, every badge and the summary box visible. The screenshot is
// review.png (SOT_SCREENSHOTS=DIR keeps it).
func TestReviewHTMLInBrowser(t *testing.T) {
	page, err := HTML(fixture(true), "0.3.0")
	if err != nil {
		t.Fatal(err)
	}
	browsertest.Check(t, "review.html", page,
		".badge", ".badge.spec", ".badge.lens", ".badge.sev", ".badge.tier.tier-direct", ".badge.tier.tier-inferential",
		".badge.signal", "#conflict-summary", "#conflict-summary svg",
		"#must-fix article", "#should-fix article", "#consider article", "#dissent .card", "#debate .round", "#trace li")
}

// Hostile text from the material under review does nothing in a browser
// either.
func TestReviewHTMLHostileInBrowser(t *testing.T) {
	res := fixture(true)
	all := strings.Join(hostile, " ")
	res.Items[0].Claim, res.Items[0].Sources[0].Grounds, res.Threads[0].Rounds[0].Responses[0].Argument = all, all, all
	res.Items[0].Sources[0].Lens, res.Narrative, res.Dissent[0].Resolution = all, all, all
	page, err := HTML(res, all)
	if err != nil {
		t.Fatal(err)
	}
	browsertest.Check(t, "review-hostile.html", page, "#conflict-summary")
}
