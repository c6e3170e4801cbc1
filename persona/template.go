package persona

import (
	"fmt"
	"strings"
)

// Template returns the text of a new persona file of the given kind that
// validates as written; every placeholder says what to replace it with.
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
description: One sentence on what this specialist hunts for and by which method.
# model: anthropic:claude-sonnet-4-5   # optional: run this specialist on its own model
signals: [keyword, "*.ext"]
---
# %[1]s specialist

## Identity & Narrative Backstory
Who this reviewer is, and the incidents in their career that explain why they
look at changes the way they do. Two or three concrete paragraphs work best.

## Cognitive Strategy
1. The first step of this specialist's method, concrete enough to repeat.
2. The next step, and what evidence it collects.
3. How the method adapts to diffs, design documents and freeform material.

## Domain Boundary
What this specialist examines, and what it leaves to the other specialists.

## Behavioral Rules
- Cite a file and line (or a document section) for every claim.
- When nothing qualifies, say what was examined and why it passed.

## Demand Rationale
Which defects reach production when nobody reviews this way, and what
evidence this specialist asks authors for.

## Example Review Comments

### Finding: A one-sentence claim about the material.

- **Severity**: should-fix
- **Confidence**: MEDIUM
- **Category**: category
- **Grounds**: `+"`path/to/file.go:42`"+` shows what the code does.
- **Warrant**: Why those grounds support the claim.
- **Rebuttal Conditions**: What evidence would make the finding wrong.
- **Suggested Verification**: A test or check that settles it.
`, title), nil
	case Lens:
		return fmt.Sprintf(`---
kind: lens
description: One sentence on the frame this lens puts on a review.
---
# %[1]s

## Lens Type
temporal

## Parameters
- **Temporal frame**: when the reviewer imagines standing, such as six months after release
- **Scenario**: the situation the reviewer adopts

## Overlay Template
As the {specialist} specialist, adopt this frame before you read the material:
describe here, in fifty to a hundred words, the situation the reviewer imagines,
what they should look for from inside it that a plain review would miss, and
how their method changes. Keep the specialist's own method; this lens only shifts
where it looks. Add the line **Perspective**: %[2]s to every finding this lens produces.

## Novelty Constraint
Say what this lens must surface that a baseline review would not, and that
findings identical to a baseline review should be dropped.
`, title, id), nil
	case Role:
		return fmt.Sprintf(`---
kind: role
description: One sentence on how this role reads the sources.
prompt_prefix: "One sentence that opens a prompt for this role:"
traits: [trait, trait, trait]
weight: 0.8
triggers: ["word or phrase that calls for this role"]
tier: specialized
color: "#64748b"
---
# %s

How this role reasons over a set of documents, what it looks for first, and
what it tends to miss.
`, title), nil
	case Debater:
		return fmt.Sprintf(`---
name: The %s
kind: debater
stance: What this debater always looks for in a passage.
focus: The debater's area of expertise.
lineage: The schools and thinkers this stance descends from.
methodology: How the debater builds an argument, step by step.
blind_spots: [what this debater misses]
voice: how the debater sounds
---
# The %[1]s

How the debater reads a passage, answers the others, and what would make them
concede a point.
`, title), nil
	case Observer:
		return fmt.Sprintf(`---
name: The %s
kind: observer
bias: The orientation this observer cannot help bringing to a debate.
focus: The angles this observer attends to.
blind_spots: [what this observer systematically misses]
example_questions: ["A specific branch question this observer would ask about a passage?"]
anti_examples: ["What remains unresolved?"]
---
# The %[1]s

What this observer notices in a debate transcript that the debaters miss, and
how it phrases a branch question.
`, title), nil
	}
	return "", fmt.Errorf("unknown kind %q: use specialist, lens, role, debater or observer", kind)
}
