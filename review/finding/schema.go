package finding

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ReportSchema is the JSON Schema a specialist answers with. Every object
// lists all its properties as required and forbids others, so OpenAI can
// enforce it strictly; "not applicable" is an empty string or zero.
//
// Models write the properties in the order the schema lists them, and
// commit to what they write first, so the fields that reason come before
// the fields that decide: "examined" (what was looked at, which candidate
// concerns were weighed and why each was kept or dropped) before
// "findings"; in a finding, the grounds and their location, the warrant,
// the rebuttal conditions and the verification before the severity and
// the confidence, which come last. The one-sentence claim ("finding")
// comes first in a finding, as in Toulmin's order: the concern it names
// was chosen in "examined", which the model has already written, and the
// grounds and warrant that follow test it before any verdict is given.
// A claim written after its warrant would leave the grounds without a
// stated subject, and the worked examples of the personas (a heading
// with the claim, then its fields) would show another order than the one
// the model writes. "perspective" opens a finding so that the lens it was
// written under frames it; FromJSON sets it to the lens actually applied.
// The "required" lists follow the same order.
//
// The number of findings is capped in the shared rules' output format
// (MaxFindings), not with maxItems: the JSON Schema subsets providers
// enforce do not all take array length limits (a schema one provider
// refuses would need a second copy), and an answer over a schema's
// maxItems fails validation here (CheckSchema), is asked for again and,
// failing twice, loses the specialist's whole review. A stated cap asks the model to merge and
// rank; what it reports beyond the cap is kept, with a note.
var ReportSchema = compact(`{
  "type": "object",
  "properties": {
    "examined": ` + examinedSchema + `,
    "findings": {"type": "array", "items": ` + findingSchema + `}
  },
  "required": ["examined", "findings"],
  "additionalProperties": false
}`)

// compact is a schema without the white space that lays it out here: the
// schema is sent with every call, and white space costs tokens. The order
// of the properties stays.
func compact(schema string) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(schema)); err != nil {
		panic("finding: a schema is not JSON: " + err.Error())
	}
	return b.Bytes()
}

// examinedSchema is the "examined" property of specialists' answers.
const examinedSchema = `{"type": "string", "description": "Written first: what you examined and how, the candidate concerns you considered and why each was kept or dismissed; when there are no findings, why nothing qualified."}`

// findingSchema is one finding of a specialist's answer.
const findingSchema = `{
      "type": "object",
      "properties": {
        "perspective": {"type": "string", "description": "The perspective lens applied to this review, by the name its instructions give; empty when no lens was applied."},
        "finding": {"type": "string", "description": "The claim, one sentence: the problem and its effect."},
        "category": {"type": "string"},
        "grounds": {"type": "string", "description": "What the material shows, citing file:line or a document section."},
        "file": {"type": "string", "description": "The file (or document) the grounds cite; empty if none."},
        "start_line": {"type": "integer", "description": "First line cited, in the new version of the file; 0 if none."},
        "end_line": {"type": "integer", "description": "Last line cited; 0 if a single line or none."},
        "section": {"type": "string", "description": "The document section cited, for documents; empty for code."},
        "warrant": {"type": "string", "description": "Why the grounds support the claim, with any assumption that limits confidence."},
        "rebuttal_conditions": {"type": "string", "description": "What evidence would make this finding wrong."},
        "suggested_verification": {"type": "string", "description": "A concrete check or test that settles it."},
        "severity": {"type": "string", "enum": ["must-fix", "should-fix", "consider"]},
        "confidence": {"type": "string", "enum": ["HIGH", "MEDIUM", "LOW"]}
      },
      "required": ["perspective", "finding", "category", "grounds", "file", "start_line", "end_line", "section", "warrant", "rebuttal_conditions", "suggested_verification", "severity", "confidence"],
      "additionalProperties": false
    }`

// MaxFindings is the cap on one specialist's findings in one answer, as
// the built-in shared rules state it (see ReportSchema for why it is
// stated rather than enforced). Around eight: a review of one change
// rarely has more problems worth a reader's time in one domain, and a
// longer list is usually one problem split up or padding.
const MaxFindings = 8

// ReportSchemaName names ReportSchema to providers.
const ReportSchemaName = "specialist_review"

// wire is a finding as the schema shapes it.
type wire struct {
	Perspective  string `json:"perspective"`
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
// problems, so one bad item does not cost a whole review. A finding's
// perspective is the lens actually applied: one the model named wrongly
// is repaired to it (a missing one silently), with a problem, and never
// costs the finding. Findings beyond MaxFindings are kept, with a problem.
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
	if len(w.Findings) > MaxFindings {
		problems = append(problems, fmt.Sprintf("%s: %d findings, more than the %d the built-in rules ask for; all are kept", specialist, len(w.Findings), MaxFindings))
	}
	var wrong []string
	for i, x := range w.Findings {
		if !samePerspective(x.Perspective, lens) && !slices.Contains(wrong, x.Perspective) {
			wrong = append(wrong, x.Perspective)
		}
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
	if len(wrong) > 0 {
		quoted := make([]string, len(wrong))
		for i, p := range wrong {
			quoted[i] = strconv.Quote(oneLine(p))
		}
		fix := "no lens was applied; they have no perspective"
		if lens != "" {
			fix = "the lens applied was " + lens + "; they are attributed to it"
		}
		problems = append(problems, fmt.Sprintf("%s: findings named the perspective %s, but %s", specialist, strings.Join(quoted, ", "), fix))
	}
	return r, problems, nil
}

// samePerspective reports whether the perspective a model named is the
// lens applied: the same name in any case, spaces and underscores read as
// dashes ("Red Team" is red-team). A missing name matches any lens, and
// without a lens so do the words models write for none.
func samePerspective(named, lens string) bool {
	n := strings.ToLower(strings.Join(strings.Fields(strings.NewReplacer("_", " ", "-", " ").Replace(named)), "-"))
	n = strings.Trim(n, "`'\"*.")
	switch n {
	case "":
		return true
	case "none", "n/a", "na", "no-lens", "no-perspective":
		return lens == ""
	}
	return n == strings.ToLower(lens)
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
