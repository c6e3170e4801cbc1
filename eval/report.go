package eval

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Mode is one way of reviewing the cases and what it came to.
type Mode struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Figures     Figures   `json:"figures"`
	Outcomes    []Outcome `json:"outcomes"`
	// Specialists are the figures of each specialist of a society's
	// review, scored on the findings it took part in.
	Specialists map[string]Figures `json:"specialists,omitempty"`
}

// Report is an evaluation: the cases, the model, each mode's figures, and
// how findings were matched.
type Report struct {
	Name     string `json:"name"`
	Model    string `json:"model"`
	Cases    int    `json:"cases"`
	Defects  int    `json:"defects"`
	Clean    int    `json:"clean_cases"`
	Matching string `json:"matching"`
	Budget   string `json:"budget"`
	Modes    []Mode `json:"modes"`
}

// MatchingRule says how findings are matched, for the report.
var MatchingRule = fmt.Sprintf("deterministic: the same file, lines overlapping the defect's within %d, and a category compatible with the defect's (by the words the finding is filed and stated under)", Tolerance)

// JSON is the report as JSON.
func (r *Report) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	return append(b, '\n'), err
}

// Markdown is the report as Markdown.
func (r *Report) Markdown() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w("# Evaluation: %s", r.Name)
	w("")
	w("- Model: %s", r.Model)
	w("- Cases: %d (%d planted defects; %d clean changes)", r.Cases, r.Defects, r.Clean)
	w("- Matching: %s", r.Matching)
	w("- Budget: %s", r.Budget)
	w("- Intervals: 95%%, by bootstrap over the cases (%d resamples)", Bootstraps)
	w("")
	w("## Modes")
	w("")
	w("| mode | recall | precision | F1 | false findings per clean case | cost | cost per true finding | wall time | failed |")
	w("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, m := range r.Modes {
		f := m.Figures
		w("| %s | %s | %s | %s | %s | $%.4f | %s | %s | %d |", m.Name, pct(f.Recall), pct(f.Precision), pct(f.F1), num(f.FalsePerCleanCase),
			f.CostUSD, perTrue(f), wall(f.WallMS), f.Failed)
	}
	w("")
	for _, m := range r.Modes {
		w("- **%s**: %s", m.Name, m.Description)
	}
	for _, m := range r.Modes {
		if len(m.Specialists) == 0 {
			continue
		}
		w("")
		w("## Specialists of %s", m.Name)
		w("")
		w("| specialist | recall | precision | false findings per clean case | findings |")
		w("| --- | --- | --- | --- | --- |")
		names := make([]string, 0, len(m.Specialists))
		for s := range m.Specialists {
			names = append(names, s)
		}
		sort.Strings(names)
		for _, s := range names {
			f := m.Specialists[s]
			w("| %s | %s | %s | %s | %d |", s, pct(f.Recall), pct(f.Precision), num(f.FalsePerCleanCase), f.Findings)
		}
	}
	w("")
	w("## Cases")
	w("")
	header := "| case |"
	rule := "| --- |"
	for _, m := range r.Modes {
		header += " " + m.Name + " |"
		rule += " --- |"
	}
	w("%s", header)
	w("%s", rule)
	if len(r.Modes) > 0 {
		for i, o := range r.Modes[0].Outcomes {
			row := "| " + o.Case + " |"
			for _, m := range r.Modes {
				row += " " + cell(m.Outcomes[i]) + " |"
			}
			w("%s", row)
		}
	}
	return b.String()
}

// cell says what one review of one case found: defects found of planted,
// and false findings.
func cell(o Outcome) string {
	if o.Error != "" {
		return "failed"
	}
	s := fmt.Sprintf("%d/%d found, %d false", o.Found, o.Defects, o.False)
	if o.Clean {
		s = fmt.Sprintf("clean: %d false", o.False)
	}
	if o.Partial {
		s += " (partial)"
	}
	return s
}

func pct(iv Interval) string {
	if math.IsNaN(iv.Value) {
		return "n/a"
	}
	if math.IsNaN(iv.Low) {
		return fmt.Sprintf("%.0f%%", 100*iv.Value)
	}
	return fmt.Sprintf("%.0f%% [%.0f–%.0f]", 100*iv.Value, 100*iv.Low, 100*iv.High)
}

func num(iv Interval) string {
	if math.IsNaN(iv.Value) {
		return "n/a"
	}
	if math.IsNaN(iv.Low) {
		return fmt.Sprintf("%.2f", iv.Value)
	}
	return fmt.Sprintf("%.2f [%.2f–%.2f]", iv.Value, iv.Low, iv.High)
}

func perTrue(f Figures) string {
	if f.CostPerTrueFinding == 0 {
		return "n/a"
	}
	return fmt.Sprintf("$%.4f", f.CostPerTrueFinding)
}

func wall(ms int64) string {
	return fmt.Sprintf("%.1f s", float64(ms)/1000)
}
