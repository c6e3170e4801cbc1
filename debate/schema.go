package debate

import (
	"encoding/json"
	"strings"

	"github.com/sotlabs/sot/llm"
)

// Structured answers are asked for with a JSON Schema. The stack's schema
// check validates each answer (finding the JSON in prose or a code fence
// around it) and asks once more with the validation error when it does not
// fit. A provider without structured output (the command provider) gets
// the schema in its instructions, so the same check holds it to it.

// questionSchema is an observer's branch question. The fields that reason
// come before the one that decides: where the debate stands, what it
// lacks and why the observer sees it, then the question (a model commits
// to what it writes first).
var questionSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "debate_summary": {"type": "string", "pattern": "\\S", "description": "Two or three neutral sentences on where the main debate stands (the positions taken and the main disagreement), for debaters who will take up the question without reading the transcript."},
    "missing": {"type": "string", "pattern": "\\S", "description": "What the transcript lacks: the turns or claims that pass over it."},
    "why": {"type": "string", "pattern": "\\S", "description": "Why this perspective sees it when the debaters' stances do not."},
    "question": {"type": "string", "pattern": "\\S", "description": "The branch question that follows from what is missing: one or two sentences ending in a question mark, about a specific moment of the passage."}
  },
  "required": ["debate_summary", "missing", "why", "question"],
  "additionalProperties": false
}`)

const questionSchemaName = "branch_question"

type questionAnswer struct {
	DebateSummary string `json:"debate_summary"`
	Missing       string `json:"missing"`
	Why           string `json:"why"`
	Question      string `json:"question"`
}

// synthesisSchema is a branch debate's resolution: the positions first,
// then what they settled and left open, then the summary that concludes.
var synthesisSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "perspectives": {"type": "array", "items": {"type": "string"}, "description": "The distinct positions that emerged, one sentence each, naming who held them."},
    "resolved": {"type": "array", "items": {"type": "string"}, "description": "What the debaters came to agree on, or what the passage settled, one sentence each; empty when nothing was."},
    "in_tension": {"type": "array", "items": {"type": "string"}, "description": "What remains disputed, one sentence each."},
    "summary": {"type": "string", "pattern": "\\S", "description": "Two or three sentences on where the branch leaves its question."}
  },
  "required": ["perspectives", "resolved", "in_tension", "summary"],
  "additionalProperties": false
}`)

const synthesisSchemaName = "branch_synthesis"

// decode reads a structured answer into v.
func decode(resp *llm.Response, v any) error {
	raw := resp.JSON
	if len(raw) == 0 {
		raw = llm.ExtractJSON(resp.Text)
	}
	return json.Unmarshal(raw, v)
}

// oneLine flattens a model's short text to one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// lines flattens a list of a model's sentences, dropping empty ones.
func lines(in []string) []string {
	var out []string
	for _, s := range in {
		if s = oneLine(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
