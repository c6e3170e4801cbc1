package compare

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/sotlabs/sot/ask"
)

//go:embed compare.html.tmpl
var compareTemplateText string

// compareTemplate renders compare.html. html/template escapes every value
// that comes from a question, the corpus or a model, in the context it
// lands in.
var compareTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("compare.html").Parse(compareTemplateText))
})

// The chart's geometry, in SVG user units: a column of configuration
// names, a panel of token bars (input, then output), a panel of tension
// bars, each bar followed by its number as text, so that colour is never
// the only signal.
const (
	chartWidth     = 720
	chartLabelEnd  = 150 // the configuration names end here
	chartTokensX   = 160
	chartTokensMax = 200
	chartTensionsX = 490
	chartTensionsW = 140
	chartTop       = 40 // below the panels' titles
	chartRow       = 30
	chartBar       = 18
	chartLegend    = 28
)

type htmlCompare struct {
	C              *Comparison
	Title          string
	Configurations []Configuration
	Coverage       *htmlCoverage
	Questions      []htmlQuestion
	// Rates are shown over several questions.
	Rates   []htmlRate
	Targets string
}

type htmlCoverage struct {
	*MetadataCoverage
	Percent, Target string
	FillW, TargetX  int
}

type htmlQuestion struct {
	ID       string // q1, q2, ...
	Question string
	Rows     []htmlRow
	Chart    htmlChart
}

type htmlRow struct {
	Slug, Configuration, RunID string
	Error                      string
	Missing                    int
	// Replayed: the comparison sent no call for the run.
	Replayed bool
	Calls, Input, Cached, Output,
	Cost, Wall, Tensions, Agreements,
	Groups, Overhead, Latency string
}

type htmlChart struct {
	Width, Height int
	TensionsX     int
	LegendY       int
	Bars          []htmlBar
}

type htmlBar struct {
	Slug, Configuration string
	Y, TextY            int
	Failed              bool
	InputW, OutputX     int
	OutputW             int
	TokensX             int
	Tokens              string
	TensionW, TensionsX int
	Tensions            string
}

type htmlRate struct {
	Slug, Configuration string
	Questions           int
	Conflict            htmlRateCell
	Group               htmlRateCell
	InterGroup          htmlRateCell
}

// htmlRateCell is a rate with its counts and where it stands against the
// seed's target, in words; Absent when the rate does not apply.
type htmlRateCell struct {
	Absent          bool
	Rate, Of, Where string
	// Class is target-in, target-out or target-none.
	Class string
}

// slug is a configuration's name as a class or id: lower case letters,
// digits and dashes.
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func percent(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }

// relative is an overhead against Control: "+25%", "-10%"; one that
// rounds to nothing is "+0%", never "-0%".
func relative(f float64) string {
	p := math.Round(f * 100)
	if p == 0 {
		p = 0 // no negative zero
	}
	return fmt.Sprintf("%+.0f%%", p)
}

// band says where a rate stands against a target band, in words.
func band(f, low, high float64) (string, string) {
	switch {
	case f < low:
		return fmt.Sprintf("below the %s-%s band", percent(low), percent(high)), "target-out"
	case f > high:
		return fmt.Sprintf("above the %s-%s band", percent(low), percent(high)), "target-out"
	}
	return fmt.Sprintf("within the %s-%s band", percent(low), percent(high)), "target-in"
}

func rateCell(r *float64, n, d *int, noun string, judge func(float64) (string, string)) htmlRateCell {
	if n == nil || d == nil {
		return htmlRateCell{Absent: true, Class: "target-none"}
	}
	c := htmlRateCell{Of: fmt.Sprintf("%d of %d %s", *n, *d, noun)}
	if r == nil {
		c.Rate, c.Where, c.Class = "-", "no question to count", "target-none"
		return c
	}
	c.Rate = percent(*r)
	c.Where, c.Class = judge(*r)
	return c
}

// HTML renders compare.html: one self-contained page (inline CSS and SVG,
// no script, no request of any kind) with, for each question, the table of
// what each configuration cost and found and a chart of its tokens and
// tensions; over several questions, the seed's rates against their
// targets; and the corpus's SoT metadata coverage. Every text from a
// question, the corpus or a model is escaped.
func (c *Comparison) HTML() ([]byte, error) {
	v := htmlCompare{C: c, Configurations: Configurations,
		Targets: fmt.Sprintf("conflict detection %s-%s of questions; group decomposition over %s of the questions whose sources fall into 2 or more groups; inter-group conflicts %s-%s of the questions read by group; SoT metadata on more than %s of the sources",
			percent(ConflictRateLow), percent(ConflictRateHigh), percent(GroupRateTarget), percent(InterGroupRateLow), percent(InterGroupRateHigh), percent(ask.CoverageTarget))}
	if mc := c.Metadata; mc != nil {
		v.Coverage = &htmlCoverage{MetadataCoverage: mc, Percent: fmt.Sprintf("%.1f%%", mc.Coverage*100), Target: percent(mc.Target),
			FillW: int(mc.Coverage*400 + 0.5), TargetX: int(mc.Target*400 + 0.5)}
	}
	byQuestion := map[string]int{}
	var runs [][]Measured
	for _, m := range c.Runs {
		i, ok := byQuestion[m.Question]
		if !ok {
			i = len(v.Questions)
			byQuestion[m.Question] = i
			v.Questions = append(v.Questions, htmlQuestion{ID: fmt.Sprintf("q%d", i+1), Question: m.Question})
			runs = append(runs, nil)
		}
		runs[i] = append(runs[i], m)
	}
	for i := range v.Questions {
		v.Questions[i].Rows, v.Questions[i].Chart = questionRows(runs[i]), questionChart(runs[i])
	}
	switch len(v.Questions) {
	case 1:
		v.Title = "Comparison: " + v.Questions[0].Question
	default:
		v.Title = fmt.Sprintf("Comparison of %d questions", len(v.Questions))
	}
	if len(v.Questions) > 1 {
		for _, r := range c.Rates {
			hr := htmlRate{Slug: slug(r.Configuration), Configuration: r.Configuration, Questions: r.Questions}
			q, n := r.Questions, r.Conflicts
			hr.Conflict = rateCell(&r.ConflictRate, &n, &q, "questions", func(f float64) (string, string) { return band(f, ConflictRateLow, ConflictRateHigh) })
			if r.Questions == 0 {
				hr.Conflict = rateCell(nil, &n, &q, "questions", nil)
			}
			hr.Group = rateCell(r.GroupRate, r.ByGroup, r.WithGroups, "with groups", func(f float64) (string, string) {
				if f > GroupRateTarget {
					return "over the " + percent(GroupRateTarget) + " target", "target-in"
				}
				return "not over the " + percent(GroupRateTarget) + " target", "target-out"
			})
			hr.InterGroup = rateCell(r.InterGroupRate, r.InterGroup, r.ByGroup, "read by group", func(f float64) (string, string) { return band(f, InterGroupRateLow, InterGroupRateHigh) })
			v.Rates = append(v.Rates, hr)
		}
	}
	var b bytes.Buffer
	if err := compareTemplate().Execute(&b, v); err != nil {
		return nil, fmt.Errorf("rendering compare.html: %w", err)
	}
	return b.Bytes(), nil
}

// questionRows are a question's table: a row a configuration.
func questionRows(runs []Measured) []htmlRow {
	controlOK := false
	for _, m := range runs {
		if m.Configuration == "Control" {
			controlOK = m.Error == ""
		}
	}
	var rows []htmlRow
	for _, m := range runs {
		r := htmlRow{Slug: slug(m.Configuration), Configuration: m.Configuration, RunID: m.RunID, Error: m.Error, Missing: m.Missing, Replayed: m.Replayed && m.Error == ""}
		if m.Error == "" {
			r.Calls, r.Input, r.Cached, r.Output = thousands(m.Calls), thousands(m.InputTokens), thousands(m.CachedTokens), thousands(m.OutputTokens)
			r.Cost, r.Wall = fmt.Sprintf("$%.4f", m.CostUSD), fmt.Sprintf("%s ms", thousands(int(m.WallMS)))
			if m.FromCache {
				r.Wall = "-"
			}
			r.Tensions, r.Agreements = strconv.Itoa(m.Tensions), strconv.Itoa(m.Agreements)
		}
		r.Groups = "-"
		if m.Groups != nil {
			r.Groups = strconv.Itoa(*m.Groups)
			if m.ByGroup {
				r.Groups += ", read by group"
			}
		}
		switch {
		case m.Configuration == "Control" && m.Error == "":
			r.Overhead, r.Latency = "baseline", "baseline"
			if m.FromCache {
				r.Latency = "-"
			}
		case controlOK && m.Error == "":
			r.Overhead, r.Latency = relative(m.TokenOverhead), "-"
			if m.Latency != nil {
				r.Latency = relative(*m.Latency)
			}
		default:
			r.Overhead, r.Latency = "-", "-"
		}
		rows = append(rows, r)
	}
	return rows
}

// questionChart lays out a question's chart: for each configuration a
// token bar (input, then output) and a tension bar, each scaled to the
// question's largest, with its number written after it. A bar of nothing
// is left out; its number is still written.
func questionChart(runs []Measured) htmlChart {
	maxTokens, maxTensions := 0, 0
	for _, m := range runs {
		if m.Error == "" {
			maxTokens = max(maxTokens, m.InputTokens+m.OutputTokens)
			maxTensions = max(maxTensions, m.Tensions)
		}
	}
	ch := htmlChart{Width: chartWidth, TensionsX: chartTensionsX}
	scale := func(n, most, width int) int {
		if n <= 0 || most <= 0 {
			return 0
		}
		return max(1, int(float64(n)/float64(most)*float64(width)+0.5))
	}
	for i, m := range runs {
		y := chartTop + i*chartRow
		b := htmlBar{Slug: slug(m.Configuration), Configuration: m.Configuration, Y: y, TextY: y + chartBar/2 + 4}
		if m.Error != "" {
			b.Failed, b.TokensX, b.Tokens = true, chartTokensX, "failed"
			ch.Bars = append(ch.Bars, b)
			continue
		}
		total := m.InputTokens + m.OutputTokens
		whole := scale(total, maxTokens, chartTokensMax)
		b.InputW = scale(m.InputTokens, maxTokens, chartTokensMax)
		if b.InputW > whole {
			b.InputW = whole
		}
		b.OutputX, b.OutputW = chartTokensX+b.InputW, whole-b.InputW
		b.TokensX = chartTokensX + whole + 6
		b.Tokens = thousands(total) + " tokens"
		b.TensionW = scale(m.Tensions, maxTensions, chartTensionsW)
		b.TensionsX = chartTensionsX + b.TensionW + 6
		b.Tensions = strconv.Itoa(m.Tensions) + " tension"
		if m.Tensions != 1 {
			b.Tensions += "s"
		}
		ch.Bars = append(ch.Bars, b)
	}
	ch.LegendY = chartTop + len(runs)*chartRow + 8
	ch.Height = ch.LegendY + chartLegend
	return ch
}
