package eval

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"sync"
)

//go:embed report.html.tmpl
var htmlSource string

var htmlTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"pct": pct, "num": num, "perTrue": perTrue, "wall": wall,
		"add": func(a, b float64) float64 { return a + b },
		"sub": func(a, b float64) float64 { return a - b },
	}).Parse(htmlSource))
})

// chart is the bar chart of recall and precision per mode, as SVG
// coordinates: drawn by the page itself, so it needs no script and loads
// nothing.
type chart struct {
	Width, Height, Left, Right, Base float64
	Ticks                            []struct {
		Y     float64
		Label string
	}
	Bars   []bar
	Labels []struct {
		X, Y float64
		Text string
	}
}

type bar struct {
	X, Y, W, H, Mid, Low, High float64
	Whisker                    bool
	Color, Title               string
}

func newChart(modes []Mode) chart {
	c := chart{Width: 760, Height: 300, Left: 48, Base: 250}
	c.Right = c.Width - 10
	top := 20.0
	scale := func(v float64) float64 { return c.Base - v*(c.Base-top) }
	for _, v := range []float64{0, 0.25, 0.5, 0.75, 1} {
		c.Ticks = append(c.Ticks, struct {
			Y     float64
			Label string
		}{scale(v), fmt.Sprintf("%.0f%%", v*100)})
	}
	slot := (c.Right - c.Left) / float64(max(1, len(modes)))
	w := math.Min(40, slot/3)
	for i, m := range modes {
		x0 := c.Left + float64(i)*slot + slot/2 - w
		for j, iv := range []Interval{m.Figures.Recall, m.Figures.Precision} {
			b := bar{X: x0 + float64(j)*w, W: w - 2, Color: []string{"#4a6fa5", "#d08c34"}[j]}
			v := iv.Value
			if math.IsNaN(v) {
				v = 0
			}
			b.Y, b.H = scale(v), c.Base-scale(v)
			b.Mid = b.X + b.W/2
			if !math.IsNaN(iv.Low) {
				b.Whisker, b.Low, b.High = true, scale(iv.Low), scale(iv.High)
			}
			b.Title = fmt.Sprintf("%s %s: %s", m.Name, []string{"recall", "precision"}[j], pct(iv))
			c.Bars = append(c.Bars, b)
		}
		c.Labels = append(c.Labels, struct {
			X, Y float64
			Text string
		}{c.Left + float64(i)*slot + slot/2, c.Base + 18, m.Name})
	}
	return c
}

// HTML is the report as one self-contained page: the figures, a chart of
// recall and precision per mode with their intervals, and every case.
func (r *Report) HTML() ([]byte, error) {
	type row struct {
		Case  string
		Cells []string
	}
	var rows []row
	if len(r.Modes) > 0 {
		for i, o := range r.Modes[0].Outcomes {
			rw := row{Case: o.Case}
			for _, m := range r.Modes {
				rw.Cells = append(rw.Cells, cell(m.Outcomes[i]))
			}
			rows = append(rows, rw)
		}
	}
	var b bytes.Buffer
	err := htmlTemplate().Execute(&b, struct {
		*Report
		Chart chart
		Rows  []row
	}{r, newChart(r.Modes), rows})
	return b.Bytes(), err
}
