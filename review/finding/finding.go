// Package finding is the Toulmin finding: the unit every specialist reports
// and every later stage (synthesis, debate, reports) works on. It defines the
// model, the JSON Schema specialists answer with, validation, and the
// Markdown form (rendering and parsing).
package finding

import (
	"fmt"
	"strings"
)

// Severity says how much a finding matters.
type Severity string

// Severities, most severe first.
const (
	MustFix   Severity = "must-fix"
	ShouldFix Severity = "should-fix"
	Consider  Severity = "consider"
)

// Severities lists the severities, most severe first.
var Severities = []Severity{MustFix, ShouldFix, Consider}

// Rank orders severities: must-fix 3, should-fix 2, consider 1, unknown 0.
func (s Severity) Rank() int {
	switch s {
	case MustFix:
		return 3
	case ShouldFix:
		return 2
	case Consider:
		return 1
	}
	return 0
}

// ParseSeverity accepts the severities in any case, with spaces or dashes.
func ParseSeverity(s string) (Severity, error) {
	n := strings.ToLower(strings.Join(strings.Fields(strings.ReplaceAll(s, "_", "-")), "-"))
	for _, v := range Severities {
		if n == string(v) {
			return v, nil
		}
	}
	return "", fmt.Errorf("severity %q: use must-fix, should-fix or consider", s)
}

// Confidence is how sure the specialist is, and what evidence it had.
type Confidence string

// Confidence levels.
const (
	High   Confidence = "HIGH"   // verified directly in the cited lines
	Medium Confidence = "MEDIUM" // strong inference resting on one unverified assumption
	Low    Confidence = "LOW"    // plausible concern that needs investigation
)

// Confidences lists the levels, highest first.
var Confidences = []Confidence{High, Medium, Low}

// Weight turns confidence into a number for aggregation.
func (c Confidence) Weight() float64 {
	switch c {
	case High:
		return 1
	case Medium:
		return 0.6
	case Low:
		return 0.3
	}
	return 0
}

// ParseConfidence accepts the levels in any case.
func ParseConfidence(s string) (Confidence, error) {
	n := Confidence(strings.ToUpper(strings.TrimSpace(s)))
	for _, v := range Confidences {
		if n == v {
			return v, nil
		}
	}
	return "", fmt.Errorf("confidence %q: use HIGH, MEDIUM or LOW", s)
}

// Location is where a finding points: a file and line range for code, a
// document and section for documents.
type Location struct {
	File      string `json:"file,omitempty"`
	StartLine int    `json:"start_line,omitempty"`
	EndLine   int    `json:"end_line,omitempty"`
	Section   string `json:"section,omitempty"`
}

func (l Location) String() string {
	switch {
	case l.File == "":
		return l.Section
	case l.StartLine == 0:
		return l.File
	case l.EndLine > l.StartLine:
		return fmt.Sprintf("%s:%d-%d", l.File, l.StartLine, l.EndLine)
	}
	return fmt.Sprintf("%s:%d", l.File, l.StartLine)
}

// Overlaps reports whether two locations share a file and some lines.
func (l Location) Overlaps(m Location) bool {
	if l.File == "" || l.File != m.File {
		return false
	}
	if l.StartLine == 0 || m.StartLine == 0 {
		return l.StartLine == m.StartLine
	}
	le, me := max(l.EndLine, l.StartLine), max(m.EndLine, m.StartLine)
	return l.StartLine <= me && m.StartLine <= le
}

// Finding is one Toulmin-structured claim by one specialist.
type Finding struct {
	// ID is unique within a run, e.g. "security.2" or "security.premortem.1".
	ID string `json:"id"`
	// Specialist made the finding; Lens framed it ("" without a lens).
	Specialist string `json:"specialist"`
	Lens       string `json:"perspective,omitempty"`
	// Claim is the finding itself, one sentence.
	Claim      string     `json:"finding"`
	Severity   Severity   `json:"severity"`
	Confidence Confidence `json:"confidence"`
	Category   string     `json:"category"`
	// Grounds is the evidence, as the specialist wrote it; Location is where
	// it points.
	Grounds      string   `json:"grounds"`
	Location     Location `json:"location"`
	Warrant      string   `json:"warrant"`
	Rebuttal     string   `json:"rebuttal_conditions"`
	Verification string   `json:"suggested_verification"`
	// Model answered the call that produced it; Chunk is the part of a split
	// review it came from (0 when the material was not split).
	Model string `json:"model,omitempty"`
	Chunk int    `json:"chunk,omitempty"`
	// Round is the debate round that produced it (1 for the first sweep).
	Round int `json:"round,omitempty"`
	// Looked is set when the finding cites a file outside the material
	// that the specialist's tools showed it.
	Looked bool `json:"looked,omitempty"`
}

// Source names who made the finding: "security" or "security/premortem".
func (f *Finding) Source() string {
	if f.Lens == "" {
		return f.Specialist
	}
	return f.Specialist + "/" + f.Lens
}

// Validate checks that a finding is complete enough to act on.
func (f *Finding) Validate() error {
	var missing []string
	for _, field := range []struct{ name, v string }{
		{"finding", f.Claim}, {"grounds", f.Grounds}, {"warrant", f.Warrant},
	} {
		if strings.TrimSpace(field.v) == "" {
			missing = append(missing, field.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("finding %s: empty %s", f.ID, strings.Join(missing, ", "))
	}
	if f.Severity.Rank() == 0 {
		return fmt.Errorf("finding %s: severity %q is not must-fix, should-fix or consider", f.ID, f.Severity)
	}
	if f.Confidence.Weight() == 0 {
		return fmt.Errorf("finding %s: confidence %q is not HIGH, MEDIUM or LOW", f.ID, f.Confidence)
	}
	return nil
}

// Report is one specialist's answer for one lens (and one chunk).
type Report struct {
	Specialist string    `json:"specialist"`
	Lens       string    `json:"perspective,omitempty"`
	Model      string    `json:"model"`
	Chunk      int       `json:"chunk,omitempty"`
	Findings   []Finding `json:"findings"`
	// Examined is the specialist's account of what it examined, required
	// when it reports no findings (the anti-sycophancy rule).
	Examined string `json:"examined,omitempty"`
	// Error is set when the specialist failed for good; Findings is empty.
	Error string `json:"error,omitempty"`
}
