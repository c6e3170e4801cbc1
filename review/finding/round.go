package finding

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Stances a specialist takes on a debate thread. The thread's author
// maintains, revises or concedes it; the others agree or disagree.
const (
	StanceMaintain = "maintain"
	StanceRevise   = "revise"
	StanceConcede  = "concede"
	StanceAgree    = "agree"
	StanceDisagree = "disagree"
)

// RoundSchema is the answer of a specialist in debate rounds 2 and later:
// what it checked, positions on existing threads, and new findings (which
// open new threads). As in ReportSchema, what reasons comes before what
// decides: "examined" first, the positions (which say what is already
// raised) before new findings, and in a position the argument before the
// stance and the revised severity.
var RoundSchema = compact(`{
  "type": "object",
  "properties": {
    "examined": ` + examinedSchema + `,
    "positions": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "thread_id": {"type": "string", "description": "The thread you respond to, e.g. T3."},
          "argument": {"type": "string", "description": "Your reasoning and the evidence (file:line) behind the stance."},
          "stance": {"type": "string", "enum": ["` + StanceMaintain + `", "` + StanceRevise + `", "` + StanceConcede + `", "` + StanceAgree + `", "` + StanceDisagree + `"],
            "description": "On your own thread: maintain, revise or concede. On another's: agree or disagree."},
          "revised_severity": {"type": "string", "enum": ["unchanged", "must-fix", "should-fix", "consider"]}
        },
        "required": ["thread_id", "argument", "stance", "revised_severity"],
        "additionalProperties": false
      }
    },
    "findings": {"type": "array", "items": ` + findingSchema + `}
  },
  "required": ["examined", "positions", "findings"],
  "additionalProperties": false
}`)

// RoundSchemaName names RoundSchema to providers.
const RoundSchemaName = "debate_round"

// Position is one specialist's stance on one thread in one round.
type Position struct {
	ThreadID        string   `json:"thread_id"`
	Source          string   `json:"source"`
	Stance          string   `json:"stance"`
	Argument        string   `json:"argument"`
	RevisedSeverity Severity `json:"revised_severity,omitempty"`
}

// RoundAnswer is a specialist's answer in a debate round.
type RoundAnswer struct {
	Positions []Position
	Report    Report // the new findings, if any
}

// RoundFromJSON reads a round answer. New findings get IDs numbered after
// the specialist's earlier ones (start is the next number to use).
func RoundFromJSON(data json.RawMessage, specialist, lens string, chunk, round, start int) (RoundAnswer, []string, error) {
	var w struct {
		Positions []struct {
			ThreadID        string `json:"thread_id"`
			Stance          string `json:"stance"`
			Argument        string `json:"argument"`
			RevisedSeverity string `json:"revised_severity"`
		} `json:"positions"`
		Findings json.RawMessage `json:"findings"`
		Examined string          `json:"examined"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return RoundAnswer{}, nil, fmt.Errorf("specialist %s: round answer is not JSON of the expected shape: %w", specialist, err)
	}
	src := specialist
	if lens != "" {
		src += "/" + lens
	}
	var a RoundAnswer
	for _, p := range w.Positions {
		pos := Position{ThreadID: strings.ToUpper(strings.TrimSpace(p.ThreadID)), Source: src, Stance: strings.ToLower(strings.TrimSpace(p.Stance)), Argument: strings.TrimSpace(p.Argument)}
		if sev, err := ParseSeverity(p.RevisedSeverity); err == nil {
			pos.RevisedSeverity = sev
		}
		a.Positions = append(a.Positions, pos)
	}
	findings := w.Findings
	if len(findings) == 0 {
		findings = json.RawMessage("[]")
	}
	rep, problems, err := FromJSON(json.RawMessage(fmt.Sprintf(`{"findings":%s,"examined":%q}`, findings, w.Examined)), specialist, lens, chunk)
	if err != nil {
		return a, problems, err
	}
	for i := range rep.Findings {
		rep.Findings[i].ID = IDFor(specialist, lens, chunk, start+i)
		rep.Findings[i].Round = round
	}
	a.Report = rep
	return a, problems, nil
}
