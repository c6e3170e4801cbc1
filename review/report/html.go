package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"hash/fnv"
	"html/template"
	"slices"
	"strings"
	"sync"

	"github.com/sotlabs/sot/internal/markdown"
	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/review/synthesis"
)

//go:embed review.html.tmpl
var reviewTemplateText string

// reviewTemplate renders review.html; html/template escapes every value
// from the material under review and from the models.
var reviewTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("review.html").Funcs(template.FuncMap{
		"specBadge": specBadge,
		"lensBadge": lensBadge,
		"oneLine":   markdown.OneLine,
		"orNone":    orNone,
		"joinOne":   joinOne,
		"loc":       htmlLoc,
		"lenses":    lenses,
		"from":      reviewFile,
		"who":       whoBadges,
		"isTradeOff": func(k synthesis.DisputeKind) bool {
			return k == synthesis.TradeOff
		},
		"kind": func(k synthesis.DisputeKind) string {
			switch k {
			case synthesis.Factual:
				return "factual dispute"
			case synthesis.TradeOff:
				return "trade-off"
			}
			return orNone(string(k))
		},
		"tierClass": func(g synthesis.Grounding) string { return "tier-" + classWord(string(g)) },
		"looked":    func(it htmlItem) bool { return it.Grounding == synthesis.Contextual && looked(it.Item) },
		"sevClass":  func(s finding.Severity) string { return "sev-" + classWord(string(s)) },
		"stateClass": func(s string) string {
			return "state-" + classWord(s)
		},
		"decisionNeeded": func(d synthesis.Dispute, affected []*synthesis.Item) string {
			var dec *synthesis.Decision
			for _, it := range affected {
				if it.Decision != nil {
					dec = it.Decision
					break
				}
			}
			return decisionNeeded(&d, dec)
		},
		"priority": func() string { return strings.Join(synthesis.PriorityHierarchy, " > ") },
	}).Parse(reviewTemplateText))
})

// badgeColours is the number of colour classes (.c0 ... .c7) specialists
// and lenses are spread over; the label always goes with the colour.
const badgeColours = 8

type htmlBadge struct {
	Class string
	Label string
}

func colourOf(name string) string {
	h := fnv.New32a()
	h.Write([]byte(strings.ToLower(name)))
	return fmt.Sprintf("c%d", h.Sum32()%badgeColours)
}

// specBadge is a specialist's badge: solid, in a colour of its name.
func specBadge(name string) htmlBadge {
	name = orNone(name)
	return htmlBadge{Class: "spec " + colourOf(name), Label: name}
}

// lensBadge is a lens's badge: outlined, so it never reads as a specialist.
func lensBadge(name string) htmlBadge {
	name = orNone(name)
	return htmlBadge{Class: "lens " + colourOf(name), Label: name}
}

// classWord turns a value into a safe part of a class name.
func classWord(s string) string {
	s = strings.ToLower(markdown.OneLine(s))
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// htmlLoc renders a location as plain text (the template escapes it).
func htmlLoc(l finding.Location) string {
	if l.File == "" && markdown.OneLine(l.Section) != "" {
		return "section " + markdown.OneLine(l.Section)
	}
	if s := locString(l); s != "" {
		return s
	}
	return "none (not tied to a file or section)"
}

// whoBadges are the badges of a "specialist" or "specialist/lens" name.
func whoBadges(source string) []htmlBadge {
	spec, lens, ok := strings.Cut(markdown.OneLine(source), "/")
	if !ok || lens == "" {
		return []htmlBadge{specBadge(spec)}
	}
	return []htmlBadge{specBadge(spec), lensBadge(lens)}
}

// htmlItem is an item as a section lists it.
type htmlItem struct {
	*synthesis.Item
	Actions     bool // must-fix and should-fix show the reasoning and the check
	Observation bool
}

type htmlSection struct {
	ID, Title string
	Items     []htmlItem
}

type htmlTradeOff struct {
	synthesis.Dispute
	Affected []*synthesis.Item
}

type htmlLensRow struct {
	Lens        string
	Specialists []string
}

type htmlReview struct {
	R         *synthesis.Result
	Version   string
	Mode      string
	Debate    bool
	Summary   Summary
	Threads   string
	Sections  []htmlSection
	TradeOffs []htmlTradeOff
	Lenses    []htmlLensRow
	Models    [][2]string
	Observed  []htmlItem
	Usage     string
}

// HTML renders review.html: one self-contained page (inline CSS, no script,
// no request of any kind) with the must-fix, should-fix and consider items
// and their specialist and lens badges and grounding tiers, the trade-offs,
// the observations, the dissent log, the debate trace in debate mode and the
// synthesis trace: what SynthesisMarkdown shows. version is sot's, shown in
// the footer.
func HTML(res *synthesis.Result, version string) ([]byte, error) {
	if res == nil {
		res = &synthesis.Result{}
	}
	v := htmlReview{R: res, Version: version, Mode: reviewMode(res), Debate: res.Mode == "debate",
		Summary: Summarize(res), Threads: threadCounts(res.Threads)}
	for _, s := range []struct {
		sev       finding.Severity
		id, title string
	}{
		{finding.MustFix, "must-fix", SectionMustFix},
		{finding.ShouldFix, "should-fix", SectionShouldFix},
		{finding.Consider, "consider", SectionConsider},
	} {
		sec := htmlSection{ID: s.id, Title: s.title}
		for i := range res.Items {
			if bucket(res.Items[i].Severity) == s.sev {
				it := &res.Items[i]
				sec.Items = append(sec.Items, htmlItem{Item: it, Actions: it.Severity == finding.MustFix || it.Severity == finding.ShouldFix})
			}
		}
		v.Sections = append(v.Sections, sec)
	}
	for i := range res.Observations {
		v.Observed = append(v.Observed, htmlItem{Item: &res.Observations[i], Observation: true})
	}
	w := &mdWriter{res: res}
	for _, d := range res.TradeOffs {
		v.TradeOffs = append(v.TradeOffs, htmlTradeOff{Dispute: d, Affected: w.itemsFor(d.ID)})
	}
	order := slices.Clone(res.Perspectives)
	for _, l := range sortedKeys(res.PerspectiveMap) {
		if !slices.Contains(order, l) {
			order = append(order, l)
		}
	}
	for _, l := range order {
		v.Lenses = append(v.Lenses, htmlLensRow{Lens: l, Specialists: res.PerspectiveMap[l]})
	}
	for _, s := range sortedKeys(res.Models) {
		v.Models = append(v.Models, [2]string{s, res.Models[s]})
	}
	u := res.Usage
	v.Usage = fmt.Sprintf("%s, %s input tokens (%s cached), %s output tokens, %s, wall time %s",
		plural(u.Calls, "call", "calls"), num(u.InputTokens), num(u.CachedInputTokens), num(u.OutputTokens), usd(u.CostUSD), wall(u.WallMS))
	if u.Replayed > 0 {
		v.Usage += fmt.Sprintf("; %s replayed from the journal, so the last invocation sent %s (%s)",
			plural(u.Replayed, "call", "calls"), plural(u.NewCalls, "call", "calls"), usd(u.NewCostUSD))
	}
	if u.CacheHits > 0 {
		v.Usage += fmt.Sprintf("; %s served from the response cache", plural(u.CacheHits, "call", "calls"))
	}
	var b bytes.Buffer
	if err := reviewTemplate().Execute(&b, v); err != nil {
		return nil, fmt.Errorf("rendering review.html: %w", err)
	}
	return b.Bytes(), nil
}
