package ask

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"strings"
	"sync"
)

//go:embed report.html.tmpl
var reportTemplate string

// answerTemplate renders answer.html. html/template escapes every value
// that comes from the corpus or the model, in the context it lands in.
var answerTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("answer.html").Parse(reportTemplate))
})

// roleLabels are the seed's seven perspectives by role id; each has a badge
// colour in the template's stylesheet (.role-analyst, ...).
var roleLabels = map[string]string{
	"analyst":     "Analyst",
	"advocate":    "Advocate",
	"critic":      "Critic",
	"synthesizer": "Synthesizer",
	"historian":   "Historian",
	"stakeholder": "Stakeholder",
	"pragmatist":  "Pragmatist",
}

// htmlBadge is a perspective badge: a colour class and the label that
// always goes with it, so that colour is never the only signal.
type htmlBadge struct {
	Class string
	Label string
}

// roleBadge is the badge of a role id; a role the seed does not name (a
// project's own) gets the neutral colour and its id as label, and no role
// the "plain reading" badge.
func roleBadge(role string) htmlBadge {
	id := strings.ToLower(strings.TrimSpace(role))
	if l, ok := roleLabels[id]; ok {
		return htmlBadge{Class: "role-" + id, Label: l}
	}
	if id == "" {
		return htmlBadge{Class: "role-plain", Label: "Plain reading"}
	}
	return htmlBadge{Class: "role-other", Label: strings.TrimSpace(role)}
}

type htmlCite struct {
	ID    string
	Title string
	Badge *htmlBadge
}

type htmlSentence struct {
	Text  string
	Quote string
	Cites []htmlCite
}

type htmlSide struct {
	Position string
	Cites    []htmlCite
}

type htmlTension struct {
	ID, Topic, Treatment, How string
	Sides                     []htmlSide
}

type htmlRisk struct {
	Text  string
	Cites []htmlCite
}

type htmlPerspective struct {
	Badge   htmlBadge
	Answers []Evidence
}

type htmlSource struct {
	SourceUse
	Badge     htmlBadge
	Relevance string
	Bonus     string
}

type htmlAnswer struct {
	A            *Answer
	Sentences    []htmlSentence
	Conflict     *ConflictSummary
	Themes       string
	Listing      string // where the pairs are listed
	Debate       bool
	Tensions     []htmlTension
	Risks        []htmlRisk
	Assumptions  []htmlRisk
	Perspectives []htmlPerspective
	Sources      []htmlSource
	Usage        string
}

// cites resolves answer ids to citations; the badge is shown when the
// answer carries its perspective (include_perspective_in_response).
func (a *Answer) cites(ix answerIndex, ids []string) []htmlCite {
	var out []htmlCite
	for _, id := range ids {
		e, ok := a.cited(ix, id)
		if !ok {
			continue
		}
		c := htmlCite{ID: e.ID, Title: e.Title}
		if a.Labels && e.Role != "" {
			b := roleBadge(e.Role)
			c.Badge = &b
		}
		out = append(out, c)
	}
	return out
}

// HTML renders answer.html: one self-contained page (inline CSS and SVG, no
// script, no request of any kind) with the answer and its perspective
// badges, the conflict summary, the tensions with both sides and their
// sources, the sources, the per-perspective answers folded, and what was
// dropped or is missing. Every text from the corpus or the model is
// escaped.
func (a *Answer) HTML() ([]byte, error) {
	v := htmlAnswer{A: a, Conflict: a.ConflictSummary, Debate: a.Debate != nil}
	ix := a.index()
	for _, s := range a.Sentences {
		v.Sentences = append(v.Sentences, htmlSentence{Text: s.Text, Quote: strings.TrimSpace(s.Quote), Cites: a.cites(ix, s.Answers)})
	}
	if c := a.ConflictSummary; c != nil {
		v.Themes = strings.Join(c.Themes, ", ")
		v.Listing = c.listing()
	}
	if d := a.Debate; d != nil {
		for _, t := range d.Tensions {
			ht := htmlTension{ID: t.ID, Topic: t.Topic, Treatment: t.Treatment, How: t.How}
			if ht.Treatment != "addressed" && ht.Treatment != "open" {
				ht.Treatment = "not treated"
			}
			for _, s := range t.Sides {
				ht.Sides = append(ht.Sides, htmlSide{Position: s.Position, Cites: a.cites(ix, s.Answers)})
			}
			v.Tensions = append(v.Tensions, ht)
		}
		for _, r := range d.UniqueRisks {
			v.Risks = append(v.Risks, htmlRisk{Text: r.Risk, Cites: a.cites(ix, []string{r.Answer})})
		}
		for _, as := range d.Assumptions {
			v.Assumptions = append(v.Assumptions, htmlRisk{Text: as.Assumption, Cites: a.cites(ix, as.Answers)})
		}
	}
	byRole := map[string]int{}
	for _, e := range a.Evidence {
		i, ok := byRole[e.Role]
		if !ok {
			i = len(v.Perspectives)
			byRole[e.Role] = i
			v.Perspectives = append(v.Perspectives, htmlPerspective{Badge: roleBadge(e.Role)})
		}
		v.Perspectives[i].Answers = append(v.Perspectives[i].Answers, e)
	}
	for _, s := range a.Sources {
		v.Sources = append(v.Sources, htmlSource{SourceUse: s, Badge: roleBadge(s.Role),
			Relevance: fmt.Sprintf("%.2f", s.Relevance), Bonus: fmt.Sprintf("%.2f", s.Bonus)})
	}
	u := a.Usage
	v.Usage = fmt.Sprintf("%d call(s), %d input tokens (%d cached), %d output tokens, $%.4f", u.Calls, u.InputTokens, u.CachedInputTokens, u.OutputTokens, u.CostUSD)
	var b bytes.Buffer
	if err := answerTemplate().Execute(&b, v); err != nil {
		return nil, fmt.Errorf("rendering answer.html: %w", err)
	}
	return b.Bytes(), nil
}
