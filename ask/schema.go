package ask

import "encoding/json"

// The schemas put the fields that reason before the fields that decide:
// a model commits to what it writes first, so it finds the points before
// it says whether the source addresses the question, picks its citations
// before it writes a sentence on them, and says how a tension is settled
// before it marks it addressed or open.

// mapSchema is what a role answers from one source: the points the source
// supports, each with a short quote from it, or a plain statement that the
// source does not address the question.
var mapSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "points": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "point": {"type": "string", "description": "One claim the source supports, in your own words, from your perspective."},
          "quote": {"type": "string", "description": "A short passage copied exactly from the source that supports the point."}
        },
        "required": ["point", "quote"],
        "additionalProperties": false
      }
    },
    "summary": {"type": "string", "description": "Your answer from this source in two or three sentences; when it does not address the question, say so and what it is about instead."},
    "addresses": {"type": "boolean", "description": "Whether this source says anything that bears on the question."}
  },
  "required": ["points", "summary", "addresses"],
  "additionalProperties": false
}`)

const mapSchemaName = "source_answer"

// mapAnswer is a MAP answer as the schema shapes it.
type mapAnswer struct {
	Points    []mapPoint `json:"points"`
	Summary   string     `json:"summary"`
	Addresses bool       `json:"addresses"`
}

type mapPoint struct {
	Point string `json:"point"`
	Quote string `json:"quote"`
}

// debateSchema is the debate step's account of where the answers pull
// apart.
var debateSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "tensions": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "topic": {"type": "string", "description": "What the answers disagree about, as a short noun phrase."},
          "sides": {
            "type": "array",
            "items": {
              "type": "object",
              "properties": {
                "position": {"type": "string"},
                "answers": {"type": "array", "items": {"type": "string"}, "description": "The ids of the answers that take this position, such as A2."}
              },
              "required": ["position", "answers"],
              "additionalProperties": false
            }
          }
        },
        "required": ["topic", "sides"],
        "additionalProperties": false
      }
    },
    "unique_risks": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "risk": {"type": "string"},
          "answer": {"type": "string", "description": "The id of the only answer that raises it."}
        },
        "required": ["risk", "answer"],
        "additionalProperties": false
      }
    },
    "assumptions": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "assumption": {"type": "string"},
          "answers": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["assumption", "answers"],
        "additionalProperties": false
      }
    },
    "recommendations": {"type": "array", "items": {"type": "string"}, "minItems": 0, "maxItems": 3, "description": "At most three things the final answer should do with the tensions, risks and assumptions named; none when there is nothing to treat."}
  },
  "required": ["tensions", "unique_risks", "assumptions", "recommendations"],
  "additionalProperties": false
}`)

const debateSchemaName = "perspective_debate"

type debateAnswer struct {
	Tensions []struct {
		Topic string `json:"topic"`
		Sides []struct {
			Position string   `json:"position"`
			Answers  []string `json:"answers"`
		} `json:"sides"`
	} `json:"tensions"`
	UniqueRisks []struct {
		Risk   string `json:"risk"`
		Answer string `json:"answer"`
	} `json:"unique_risks"`
	Assumptions []struct {
		Assumption string   `json:"assumption"`
		Answers    []string `json:"answers"`
	} `json:"assumptions"`
	Recommendations []string `json:"recommendations"`
}

// reduceSchema is the answer, one sentence at a time, each carrying its
// citations so that the program can check it.
var reduceSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "sentences": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "answers": {"type": "array", "items": {"type": "string"}, "description": "The ids of the answers (A1, A2, ...) this sentence rests on."},
          "quote": {"type": "string", "description": "A short passage copied exactly from a cited answer's source, or empty."},
          "text": {"type": "string", "description": "One sentence of the answer, saying only what the answers cited say, without citation marks."}
        },
        "required": ["answers", "quote", "text"],
        "additionalProperties": false
      }
    },
    "tensions": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "id": {"type": "string", "description": "The tension's id, such as T1."},
          "how": {"type": "string", "description": "How the answer settles it, or why it stays open."},
          "treatment": {"type": "string", "enum": ["addressed", "open"]}
        },
        "required": ["id", "how", "treatment"],
        "additionalProperties": false
      }
    }
  },
  "required": ["sentences", "tensions"],
  "additionalProperties": false
}`)

const reduceSchemaName = "society_answer"

type reduceAnswer struct {
	Sentences []Sentence         `json:"sentences"`
	Tensions  []TensionTreatment `json:"tensions"`
}

// Sentence is one sentence of the answer with what it rests on.
type Sentence struct {
	Text    string   `json:"text"`
	Answers []string `json:"answers"`
	Quote   string   `json:"quote"`
}

// TensionTreatment is how the answer treats a tension of the debate step.
type TensionTreatment struct {
	ID        string `json:"id"`
	Treatment string `json:"treatment"` // addressed or open
	How       string `json:"how"`
}
