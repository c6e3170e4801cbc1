package persona

import (
	"fmt"
	"strings"

	"github.com/sotlabs/sot/internal/lazyre"
)

// placeholderPattern matches a placeholder of a template written by
// Template: "<<TODO: what to write here>>".
var placeholderPattern = lazyre.New(`<<TODO:[^\n]*?>>`)

// placeholders reports every template placeholder left in a file, one
// error per placeholder at its line: a persona still holding one has not
// been written yet, so it takes no part in reviews.
func placeholders(file, text string) []Problem {
	var probs []Problem
	for i, line := range strings.Split(text, "\n") {
		for _, m := range placeholderPattern.Re().FindAllString(line, -1) {
			probs = append(probs, Problem{File: file, Line: i + 1, placeholder: true,
				Message: fmt.Sprintf("template placeholder left: %s; replace it with your own text", m)})
		}
	}
	return probs
}

// Template returns the text of a new persona file of the given kind. Every
// part the author must write is a placeholder "<<TODO: what to write>>";
// until each is replaced, validation reports it (with its line) and
// discovery skips the file, so a half-written persona never reviews
// anything.
func Template(kind Kind, id string) (string, error) {
	if !ValidID(id) {
		return "", fmt.Errorf("name %q is not allowed: use lower-case letters, digits, - and _", id)
	}
	title := strings.ReplaceAll(id, "-", " ")
	switch kind {
	case Specialist:
		return fmt.Sprintf(`---
kind: specialist
context: implementation
description: "<<TODO: one sentence on what this specialist hunts for, and by which method>>"
# model: anthropic:claude-sonnet-4-5   # optional: run this specialist on its own model
# signals: [keyword, "*.ext", "dir/"]  # optional: what adaptive:N looks for in a change; without it, sot reads the Domain Boundary and Cognitive Strategy
---
# %[1]s specialist

## Identity & Narrative Backstory
<<TODO: who this reviewer is, and the incidents in their career that explain how they read a change; two or three concrete paragraphs>>

## Cognitive Strategy
<<TODO: the method as numbered steps, each concrete enough to repeat, and the evidence each step collects>>

## Domain Boundary
<<TODO: what this specialist examines (name the files, directories or patterns it owns, such as *.sql or migrations/), and what it leaves to the other specialists>>

## Behavioral Rules
- Cite a file and line (or a document section) for every claim.
- When nothing qualifies, say what was examined and why it passed.
- <<TODO: the rules particular to this specialist>>

## Demand Rationale
<<TODO: which defects reach production when nobody reviews this way, and what evidence this specialist asks authors for>>

## Example Review Comments

### Finding: <<TODO: a one-sentence claim this specialist would make>>

- **Severity**: should-fix
- **Confidence**: MEDIUM
- **Category**: %[2]s
- **Grounds**: <<TODO: the file and line, and what they show>>
- **Warrant**: <<TODO: why those grounds support the claim>>
- **Rebuttal Conditions**: <<TODO: what evidence would make the finding wrong>>
- **Suggested Verification**: <<TODO: a test or check that settles it>>
`, title, id), nil
	case Lens:
		return fmt.Sprintf(`---
kind: lens
description: "<<TODO: one sentence on the frame this lens puts on a review>>"
---
# %[1]s

## Lens Type
temporal

## Parameters
- **Temporal frame**: <<TODO: when the reviewer imagines standing, such as six months after release>>
- **Scenario**: <<TODO: the situation the reviewer adopts>>

## Overlay Template
As the {specialist} specialist, <<TODO: in fifty to a hundred words, the situation the reviewer imagines, what to look for from inside it that a plain review would miss, and how the method shifts>>
Add the line **Perspective**: %[2]s to every finding this lens produces.

## Novelty Constraint
<<TODO: what this lens must surface that a baseline review would not>>
`, title, id), nil
	case Role:
		return fmt.Sprintf(`---
kind: role
description: "<<TODO: one sentence on how this role reads the sources>>"
prompt_prefix: "<<TODO: one sentence that opens a prompt for this role>>"
traits: ["<<TODO: three traits>>"]
weight: 0.8
triggers: ["<<TODO: words or phrases that call for this role>>"]
tier: specialized
color: "#64748b"
---
# %s

<<TODO: how this role reasons over a set of documents, what it looks for first, and what it tends to miss; this part is for the people who choose roles>>

## Method

1. <<TODO: the first thing a model reading from this role does with the sources, as an instruction (sot ask sends the steps of this section, not the text above)>>
2. <<TODO: the next step; keep the method to 2 or 3 steps, about 50 tokens in all>>
3. <<TODO: a third step, or delete this line>>
`, title), nil
	case Debater:
		return fmt.Sprintf(`---
name: The %s
kind: debater
stance: "<<TODO: what this debater always looks for in a passage>>"
focus: "<<TODO: the debater's area of expertise>>"
lineage: "<<TODO: the schools and thinkers this stance descends from>>"
methodology: "<<TODO: how the debater builds an argument, step by step>>"
blind_spots: ["<<TODO: what this debater misses>>"]
voice: "<<TODO: how the debater sounds>>"
---
# The %[1]s

<<TODO: how the debater reads a passage, answers the others, and what would make them concede a point>>
`, title), nil
	case Observer:
		return fmt.Sprintf(`---
name: The %s
kind: observer
bias: "<<TODO: the orientation this observer cannot help bringing to a debate>>"
focus: "<<TODO: the angles this observer attends to>>"
blind_spots: ["<<TODO: what this observer systematically misses>>"]
example_questions: ["<<TODO: a specific branch question this observer would ask about a passage>>"]
anti_examples: ["What remains unresolved?"]
---
# The %[1]s

<<TODO: what this observer notices in a debate transcript that the debaters miss, and how it phrases a branch question>>
`, title), nil
	}
	return "", fmt.Errorf("unknown kind %q: use specialist, lens, role, debater or observer", kind)
}
