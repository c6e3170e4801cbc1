package finding

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ReportSchema is the JSON Schema a specialist answers with. Every object
// lists all its properties as required and forbids others, so OpenAI can
// enforce it strictly; "not applicable" is an empty string or zero.
var ReportSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "findings": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "finding": {"type": "string", "description": "The claim, one sentence: the problem and its effect."},
          "severity": {"type": "string", "enum": ["must-fix", "should-fix", "consider"]},
          "confidence": {"type": "string", "enum": ["HIGH", "MEDIUM", "LOW"]},
          "category": {"type": "string"},
          "grounds": {"type": "string", "description": "What the material shows, citing file:line or a document section."},
          "file": {"type": "string", "description": "The file (or document) the grounds cite; empty if none."},
          "start_line": {"type": "integer", "description": "First line cited, in the new version of the file; 0 if none."},
          "end_line": {"type": "integer", "description": "Last line cited; 0 if a single line or none."},
          "section": {"type": "string", "description": "The document section cited, for documents; empty for code."},
          "warrant": {"type": "string", "description": "Why the grounds support the claim."},
          "rebuttal_conditions": {"type": "string", "description": "What evidence would make this finding wrong."},
          "suggested_verification": {"type": "string", "description": "A concrete check or test that settles it."}
        },
        "required": ["finding", "severity", "confidence", "category", "grounds", "file", "start_line", "end_line", "section", "warrant", "rebuttal_conditions", "suggested_verification"],
        "additionalProperties": false
      }
    },
    "examined": {"type": "string", "description": "What you examined and how; when there are no findings, why nothing qualified."}
  },
  "required": ["findings", "examined"],
  "additionalProperties": false
}`)

// ReportSchemaName names ReportSchema to providers.
const ReportSchemaName = "specialist_review"

// wire is a finding as the schema shapes it.
type wire struct {
	Finding      string `json:"finding"`
	Severity     string `json:"severity"`
	Confidence   string `json:"confidence"`
	Category     string `json:"category"`
	Grounds      string `json:"grounds"`
	File         string `json:"file"`
	StartLine    int    `json:"start_line"`
	EndLine      int    `json:"end_line"`
	Section      string `json:"section"`
	Warrant      string `json:"warrant"`
	Rebuttal     string `json:"rebuttal_conditions"`
	Verification string `json:"suggested_verification"`
}

// FromJSON reads a specialist's structured answer. IDs are assigned as
// "<specialist>[.<lens>].<n>" (with the chunk when the review was split).
// Findings that fail validation are dropped and reported in the returned
// problems, so one bad item does not cost a whole review.
func FromJSON(data json.RawMessage, specialist, lens string, chunk int) (Report, []string, error) {
	var w struct {
		Findings []wire `json:"findings"`
		Examined string `json:"examined"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return Report{}, nil, fmt.Errorf("specialist %s: answer is not a review: %w", specialist, err)
	}
	r := Report{Specialist: specialist, Lens: lens, Chunk: chunk, Examined: strings.TrimSpace(w.Examined)}
	var problems []string
	for i, x := range w.Findings {
		f := Finding{
			ID:           IDFor(specialist, lens, chunk, i+1),
			Specialist:   specialist,
			Lens:         lens,
			Claim:        strings.TrimSpace(x.Finding),
			Category:     strings.TrimSpace(x.Category),
			Grounds:      strings.TrimSpace(x.Grounds),
			Location:     Location{File: cleanPath(x.File), StartLine: max(x.StartLine, 0), EndLine: max(x.EndLine, 0), Section: strings.TrimSpace(x.Section)},
			Warrant:      strings.TrimSpace(x.Warrant),
			Rebuttal:     strings.TrimSpace(x.Rebuttal),
			Verification: strings.TrimSpace(x.Verification),
			Chunk:        chunk,
		}
		var err error
		if f.Severity, err = ParseSeverity(x.Severity); err == nil {
			f.Confidence, err = ParseConfidence(x.Confidence)
		}
		if err == nil {
			if f.Location.File == "" {
				f.Location = LocationFromGrounds(f.Grounds, f.Location.Section)
			}
			err = f.Validate()
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: dropped an incomplete finding: %v", specialist, err))
			continue
		}
		r.Findings = append(r.Findings, f)
	}
	return r, problems, nil
}

// IDFor builds a finding ID.
func IDFor(specialist, lens string, chunk, n int) string {
	id := specialist
	if lens != "" {
		id += "." + lens
	}
	if chunk > 0 {
		id += fmt.Sprintf(".c%d", chunk)
	}
	return fmt.Sprintf("%s.%d", id, n)
}

// cleanPath normalises a cited path: no leading ./ or a/ b/ diff prefixes.
func cleanPath(p string) string {
	p = strings.Trim(strings.TrimSpace(p), "`'\"")
	for _, pre := range []string{"./", "a/", "b/"} {
		p = strings.TrimPrefix(p, pre)
	}
	return p
}
