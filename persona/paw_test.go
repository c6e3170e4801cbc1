package persona

import (
	"slices"
	"strings"
	"testing"
)

// The fixtures below have the shape of PAW's own files (frontmatter with
// only a context, headings with a suffix, "Shared Rules" and "Shared
// Output Format" pointers, findings separated by --- lines, shared rules
// whose severities live inside "## Required Output Format", a perspective
// of Lens Type neutral); the words are ours.

const pawDeploySpecialist = `---
context: implementation
---

# Rollout Specialist

## Identity & Narrative Backstory

You ran the release train for a payments company and still remember the night a config flag shipped half-enabled.

## Cognitive Strategy: Blast-Radius Mapping / Rollback Rehearsal

1. **Map what ships**: list every artifact the change alters.
2. **Rehearse the rollback**: walk the undo path for each artifact.

## Domain Boundary

Your domain is **release safety** - whether the change can be shipped, observed and undone.

## Behavioral Rules

- Name the artifact and the step of the rollout for every concern.

## Shared Rules

See ` + "`_shared-rules.md`" + ` for the rules every specialist follows.

## Demand Rationale

Ask for the rollout plan before judging the change.

## Shared Output Format

See ` + "`_shared-rules.md`" + `. Use ` + "`**Category**: rollout`" + `.

## Example Review Comments

### Example 1: A migration without a down step

**Severity**: should-fix
**Confidence**: MEDIUM
**Category**: rollout

#### Grounds (Evidence)
` + "`db/0042_add_index.sql`" + ` adds an index and no reverse migration.

---

### Example 2: A flag that defaults to on

**Severity**: must-fix
**Confidence**: HIGH
**Category**: rollout
`

const pawSharedRules = `# Rules Shared by the Panel

Every specialist follows these.

## Anti-Sycophancy Rules

Report at least one real concern, or say what you examined and why it held.

## Confidence Scoring

- **HIGH**: the diff shows it.
- **MEDIUM**: inferred from what the diff shows.
- **LOW**: a hunch.

## Required Output Format

### Finding: [one-sentence claim]

**Severity**: must-fix | should-fix | consider
**Confidence**: HIGH | MEDIUM | LOW
**Category**: [specialist-name]

#### Grounds (Evidence)
[file and line]
`

const pawNeutralLens = `# Plain Perspective

## Lens Type
neutral

## Parameters
- **Temporal Frame**: today
- **Scenario**: no shift of frame at all

## Overlay Template

As the {specialist}, review the change the way you always do, with your own method and your own domain, and without imagining any later date, any attacker or any other shift of frame. Keep to the evidence the material shows, say how sure you are of each concern, and label each finding with ` + "`**Perspective**: plain`" + ` so that the synthesis can tell it apart.

## Novelty Constraint

This is the unshifted view; do not repeat what shifted lenses will say.
`

func TestPAWShapedFilesValidate(t *testing.T) {
	tests := []struct {
		file, body string
		kind       Kind
	}{
		{"rollout.md", pawDeploySpecialist, Specialist},
		{"_shared-rules.md", pawSharedRules, SharedRules},
		{"plain.md", pawNeutralLens, Lens},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			p, probs := Parse(tt.file, []byte(tt.body), KindForDir(map[Kind]string{Lens: "perspectives"}[tt.kind]), LevelProject)
			if len(probs) > 0 || p.Kind != tt.kind {
				t.Errorf("kind %s, problems %v; want a %s with none (warnings included)", p.Kind, probs, tt.kind)
			}
		})
	}
}

func TestSectionHeadingWithSuffix(t *testing.T) {
	p, _ := Parse("rollout.md", []byte(pawDeploySpecialist), Specialist, LevelProject)
	tests := []struct {
		name, heading string
		line          int
	}{
		{"Cognitive Strategy", "Cognitive Strategy: Blast-Radius Mapping / Rollback Rehearsal", 11},
		{"cognitive strategy", "Cognitive Strategy: Blast-Radius Mapping / Rollback Rehearsal", 11},
		{"Domain Boundary", "Domain Boundary", 16},
		{"Output Format", "", 0},     // "Shared Output Format" does not start with it
		{"Cognitive Strateg", "", 0}, // the name ends at a word's end
	}
	for _, tt := range tests {
		h, line, ok := p.Heading(tt.name)
		if h != tt.heading || line != tt.line || ok != (tt.heading != "") {
			t.Errorf("Heading(%q) = %q, %d, %v; want %q, %d", tt.name, h, line, ok, tt.heading, tt.line)
		}
	}
	if s := p.Section("Cognitive Strategy"); !strings.HasPrefix(s, "1. **Map what ships**") {
		t.Errorf("Section(Cognitive Strategy) = %q", s)
	}
	// An exact heading wins over one with a suffix.
	q, _ := Parse("x.md", []byte("# X\n\n## Identity & Narrative Backstory: early\nfirst\n\n## Identity & Narrative Backstory\nsecond\n"), Specialist, LevelProject)
	if s := q.Section("Identity & Narrative Backstory"); s != "second" {
		t.Errorf("exact heading should win, got %q", s)
	}
}

func TestSharedRulesOutputFormat(t *testing.T) {
	p, _ := Parse("_shared-rules.md", []byte(pawSharedRules), "", LevelProject)
	if h, line, ok := p.Heading("Output Format"); !ok || h != "Required Output Format" || line != 15 {
		t.Errorf("Heading(Output Format) = %q, %d, %v; want PAW's Required Output Format on line 15", h, line, ok)
	}
	// Severities defined nowhere: the Severity section is missing.
	noSev := strings.Replace(pawSharedRules, "**Severity**: must-fix | should-fix | consider\n", "", 1)
	_, probs := Parse("_shared-rules.md", []byte(noSev), "", LevelProject)
	if !HasErrors(probs) || !strings.Contains(probs[0].Error(), `_shared-rules.md:1: section "## Severity" is missing; add it below the title on this line`) {
		t.Errorf("problems %v; want a missing Severity section at the title", probs)
	}
	lib, _ := discoverIn(t, map[string]string{"repo/.paw/personas/_shared-rules.md": pawSharedRules})
	if r := lib.SharedRules(); r == nil || r.Level != LevelProject {
		t.Errorf("the project's PAW shared rules should win: %+v (problems %v)", r, lib.Problems)
	}
}

func TestNeutralLensIsBaseline(t *testing.T) {
	p, _ := Parse("plain.md", []byte(pawNeutralLens), Lens, LevelProject)
	if got := p.LensType(); got != "baseline" {
		t.Errorf("LensType() = %q, want baseline", got)
	}
	q, probs := Parse("odd.md", []byte(strings.Replace(pawNeutralLens, "neutral", "sideways", 1)), Lens, LevelProject)
	if q.LensType() != "sideways" || len(probs) != 1 || probs[0].Error() != "odd.md:3: warning: Lens Type \"sideways\" is not one of baseline, temporal, adversarial (or neutral, PAW's word for baseline)" {
		t.Errorf("an unknown lens type: %q, %v", q.LensType(), probs)
	}
}

// TestProblemsCarryLines: every validation message names file:line; a
// missing section is reported at the title, or at the end of the
// frontmatter when there is no title, and the message says which.
func TestProblemsCarryLines(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"missing at title", "---\ncontext: implementation\n---\n\n# Thin\n\n## Identity & Narrative Backstory\nWho.\n",
			`thin.md:5: section "## Cognitive Strategy" is missing; add it below the title on this line`},
		{"missing, no title", "---\ncontext: implementation\n---\n## Identity & Narrative Backstory\nWho.\n",
			`thin.md:3: section "## Cognitive Strategy" is missing; add it below the frontmatter, which ends on this line`},
		{"missing, nothing", "## Identity & Narrative Backstory\nWho.\n",
			`thin.md:1: section "## Cognitive Strategy" is missing; add it to the file`},
		{"empty section at its heading", "# T\n\n## Identity & Narrative Backstory\nWho.\n\n## Cognitive Strategy: Counting\n\n## Domain Boundary\nAll.\n",
			`thin.md:6: section "## Cognitive Strategy: Counting" is empty; write its content below the heading`},
		{"context list at its key", "---\nmodel: openai:gpt-4.1\ncontext: a, b\n---\n# T\n\n## Identity & Narrative Backstory\nx\n\n## Cognitive Strategy\ny\n",
			`thin.md:3: context "a, b" lists several values`},
		{"unknown kind at its key", "---\ncontext: x\nkind: wizard\n---\n# x\n", `thin.md:3: unknown kind "wizard"`},
		{"not UTF-8 at the line", "# T\n\n## Identity & Narrative Backstory\ncaf\xe9\n", `thin.md:4: file is not UTF-8 text`},
		{"warning at the title", "# T\n\n## Identity & Narrative Backstory\nx\n\n## Cognitive Strategy\ny\n",
			`thin.md:1: warning: section "## Domain Boundary" is missing; add it below the title on this line`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, probs := Parse("thin.md", []byte(tt.body), Specialist, LevelProject)
			var msgs []string
			for _, p := range probs {
				msgs = append(msgs, p.Error())
				if p.Line < 1 {
					t.Errorf("problem without a line: %s", p)
				}
			}
			if !slices.ContainsFunc(msgs, func(m string) bool { return strings.HasPrefix(m, tt.want) }) {
				t.Errorf("problems %q; want one starting %q", msgs, tt.want)
			}
		})
	}
}

// TestRejectedProjectFileIsReported: a project file that fails validation
// is skipped, the built-in of the same name takes its place, and the
// library says so.
func TestRejectedProjectFileIsReported(t *testing.T) {
	broken := strings.Replace(pawDeploySpecialist, "## Cognitive Strategy: Blast-Radius Mapping / Rollback Rehearsal", "## Method", 1)
	lib, _ := discoverIn(t, map[string]string{
		"repo/.paw/personas/release-manager.md": broken,
		"repo/.paw/personas/testing.md":         pawDeploySpecialist,
	})
	p, _ := lib.Get(Specialist, "release-manager")
	if p == nil || p.Level != LevelBuiltin {
		t.Fatalf("the built-in should take the rejected file's place: %+v", p)
	}
	r := lib.RejectedFor(Specialist, "release-manager")
	if len(r) != 1 || !strings.HasSuffix(r[0].Persona.Path, "release-manager.md") || len(r[0].Problems) != 1 ||
		!strings.Contains(r[0].Problems[0].Error(), `release-manager.md:5: skipped: section "## Cognitive Strategy" is missing`) {
		t.Errorf("rejected = %+v", r)
	}
	if got, _ := lib.Get(Specialist, "testing"); got.Level != LevelProject || len(lib.RejectedFor(Specialist, "testing")) != 0 {
		t.Errorf("a PAW file with a suffixed heading should win over the built-in: %+v", got)
	}
}

const promptSpecialist = `---
context: implementation
---
# Instruction Reviewer

## Identity & Narrative Backstory
You have rewritten the same agent instructions often enough to know which sentences a model actually obeys.

## Cognitive Strategy
**Authority tracing.**

1. **List the instructions**: who says what to the model.
2. **Find the conflicts**: where two of them disagree.

## Domain Boundary
Your domain is **model instruction quality** - the agent definitions (` + "`*.agent.md`" + `, ` + "`agents/`" + `) and the prompt templates under prompts/ that a model reads at run time.
Go code under ` + "`internal/`" + ` is not your concern; leave it to correctness.
`

func TestDerivedSignals(t *testing.T) {
	p, probs := Parse("instructions.md", []byte(promptSpecialist), Specialist, LevelProject)
	if HasErrors(probs) {
		t.Fatal(probs)
	}
	got := p.SelectionSignals()
	want := []string{"*.agent.md", "agents/", "prompts/", "model", "instruction", "quality", "agent", "definitions", "prompt", "templates", "authority"}
	if !got.Derived || !slices.Equal(got.Terms, want) || !slices.Equal(got.Domain, []string{"model", "instruction", "quality"}) {
		t.Errorf("SelectionSignals() = %+v; want terms %q and the bold phrase's words as the domain, derived", got, want)
	}
	if slices.Contains(got.Terms, "internal/") || slices.Contains(got.Terms, "correctness") {
		t.Errorf("a sentence about what the persona leaves to others must not give signals: %q", got.Terms)
	}
	// Without bold, the Domain Boundary's first sentence names the domain.
	plain, _ := Parse("x.md", []byte(strings.Replace(promptSpecialist, "**model instruction quality**", "model instructions", 1)), Specialist, LevelProject)
	if d := plain.SelectionSignals().Domain; !slices.Equal(d, []string{"model", "instructions", "agent", "definitions", "prompt", "templates"}) {
		t.Errorf("domain without bold = %q", d)
	}
	declared, _ := Parse("x.md", []byte(strings.Replace(promptSpecialist, "context: implementation", "context: implementation\nsignals: [prompt]", 1)), Specialist, LevelProject)
	if got := declared.SelectionSignals(); got.Derived || !slices.Equal(got.Terms, []string{"prompt"}) || got.Domain != nil {
		t.Errorf("declared signals should be used as written: %+v", got)
	}
}
