package review

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/material"
	"github.com/sotlabs/sot/persona"
)

// instructionsPersona is a project specialist in PAW's shape: no signals
// in its frontmatter, a Domain Boundary that names the files it owns.
const instructionsPersona = `---
context: implementation
---
# Instruction Reviewer

## Identity & Narrative Backstory
You have rewritten the same agent instructions often enough to know which sentences a model actually obeys.

## Cognitive Strategy
**Authority tracing.**

1. **List the instructions**: who tells the model what.
2. **Find the conflicts**: where two of them disagree.

## Domain Boundary
Your domain is **agent instruction quality**: the agent definitions (` + "`*.agent.md`" + `, ` + "`agents/`" + `) and the prompt templates under prompts/ that a model reads at run time.
Go code is not your concern; leave it to correctness.
`

// domainOnlyPersona names no file at all; its domain words are all it has.
const domainOnlyPersona = `---
context: implementation
---
# Ledger Reviewer

## Identity & Narrative Backstory
An accountant turned engineer.

## Cognitive Strategy
Follow each amount from entry to report.

## Domain Boundary
Your domain is the **ledger**: journal entries and their balances.
`

// libraryWith discovers the built-ins plus project personas.
func libraryWith(t *testing.T, personas map[string]string) *persona.Library {
	t.Helper()
	root := t.TempDir()
	for name, text := range personas {
		p := filepath.Join(root, ".paw", "personas", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lib, err := persona.Discover(persona.Dirs{Project: root})
	if err != nil {
		t.Fatal(err)
	}
	if len(lib.Problems) > 0 {
		t.Fatalf("fixture problems: %v", lib.Problems)
	}
	return lib
}

// TestAdaptivePicksCustomPersonas: a project persona that declares no
// signals is picked when the change touches what its text says it owns.
func TestAdaptivePicksCustomPersonas(t *testing.T) {
	lib := libraryWith(t, map[string]string{"instructions.md": instructionsPersona, "ledger.md": domainOnlyPersona})
	pool := lib.List(persona.Specialist)
	agentFile := "---\ndescription: 'Runs the release checklist'\n---\n# Release Agent\n\nFollow the checklist.\n"
	tests := []struct {
		name          string
		before, after files
		n             int
		want, absent  []string
		why           string
	}{
		{
			// Like PAW's commit 0b3d01c: one frontmatter line added to two
			// agent definitions.
			name:   "agent definitions",
			before: files{"agents/Release.agent.md": agentFile, "agents/Triage.agent.md": agentFile},
			after: files{"agents/Release.agent.md": strings.Replace(agentFile, "---\n#", "tools: [\"*\"]\n---\n#", 1),
				"agents/Triage.agent.md": strings.Replace(agentFile, "---\n#", "tools: [\"*\"]\n---\n#", 1)},
			n: 5, want: []string{"instructions"}, absent: []string{"ledger"}, why: "instructions (*.agent.md, agents/",
		},
		{
			name:   "a prompt template",
			before: files{"prompts/summarize.md": "Summarize the text.\n"},
			after:  files{"prompts/summarize.md": "Summarize the text in three sentences.\n"},
			n:      3, want: []string{"instructions"}, why: "instructions (prompts/",
		},
		{
			name:   "a path that names the domain",
			before: files{"ledger/post.go": appGo},
			after:  files{"ledger/post.go": appGo + "\nfunc Sub(a, b int) int { return a - b }\n"},
			n:      5, want: []string{"ledger"}, absent: []string{"instructions"}, why: `ledger/post.go names its domain, "ledger"`,
		},
		{
			name:   "unrelated code",
			before: files{"app.go": appGo},
			after:  files{"app.go": "package app\n\nfunc Add(a, b int) int {\n\tif a < 0 {\n\t\treturn b\n\t}\n\treturn a + b\n}\n"},
			n:      5, absent: []string{"instructions", "ledger"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := changeMaterial(t, tt.before, tt.after)
			picked, rationale, trivial := adaptive(pool, tt.n, m, m.Analyze, nil)
			if trivial {
				t.Fatalf("judged trivial: %s", rationale)
			}
			got := ids(picked)
			for _, w := range tt.want {
				if !slices.Contains(got, w) {
					t.Errorf("picked %v, want %s among them; rationale: %s", got, w, rationale)
				}
			}
			for _, a := range tt.absent {
				if slices.Contains(got, a) {
					t.Errorf("picked %v, want no %s; rationale: %s", got, a, rationale)
				}
			}
			if !strings.Contains(rationale, tt.why) {
				t.Errorf("rationale %q does not say %q", rationale, tt.why)
			}
		})
	}
}

// TestDerivedWordsAreBounded: however often a change repeats a derived
// persona's words, they count for at most one point, as much as a single
// file pattern, so a long persona cannot outrank a category it serves.
func TestDerivedWordsAreBounded(t *testing.T) {
	lib := libraryWith(t, map[string]string{"ledger.md": domainOnlyPersona})
	p, _ := lib.Get(persona.Specialist, "ledger")
	sig := material.Signals{Keywords: map[string]int{"ledger": 9, "journal": 9, "entries": 9, "balances": 9}}
	score, why := scoreSpecialist(p, sig, []string{"app.go"})
	if score != 1 || len(why) != 4 {
		t.Errorf("score %g (%q), want 1", score, why)
	}
}

// pawBaseline is a perspective of PAW's shape whose Lens Type is neutral.
const pawBaseline = `# Baseline Perspective

## Lens Type
neutral

## Parameters
- **Temporal Frame**: now
- **Scenario**: no shift

## Overlay Template
As the {specialist}, review with your usual method and your usual domain, without imagining a later date, an attacker or any other frame. Keep to what the material shows, state how sure you are of each concern, say what you examined when nothing qualifies, and label each finding with ` + "`**Perspective**: baseline`" + ` so the synthesis can tell the views apart.

## Novelty Constraint
The unshifted view; do not repeat what the shifted lenses find.
`

// TestNeutralBaselineLensApplies: PAW's baseline (Lens Type neutral)
// replaces the built-in one and is still the lens applied when nothing
// calls for another.
func TestNeutralBaselineLensApplies(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, ".paw", "perspectives", "baseline.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(pawBaseline), 0o644); err != nil {
		t.Fatal(err)
	}
	lib, err := persona.Discover(persona.Dirs{Project: root})
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := lib.Get(persona.Lens, "baseline"); l == nil || l.Level != persona.LevelProject {
		t.Fatalf("the PAW baseline should win: %+v, problems %v", l, lib.Problems)
	}
	m := changeMaterial(t, files{"app.go": "package app\n\nfunc add(a, b int) int { return a + b }\n"},
		files{"app.go": "package app\n\nfunc add(a, b int) int {\n\tif a < 0 {\n\t\treturn b\n\t}\n\treturn a + b\n}\n"})
	lp, _, err := planLenses(lib, "auto", 2, lib.List(persona.Specialist), m, m.Analyze)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(lp.lenses); len(got) != 1 || got[0] != "baseline" || lp.lenses[0].Level != persona.LevelProject {
		t.Errorf("lenses %v (%s), want the project's baseline", got, lp.rationale)
	}
}
