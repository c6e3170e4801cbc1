package persona

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/sotlabs/sot/internal/tokens"
)

func builtinLibrary(t *testing.T) *Library {
	t.Helper()
	lib, err := Discover(Dirs{})
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

func TestBuiltinsValidate(t *testing.T) {
	lib := builtinLibrary(t)
	if len(lib.Problems) > 0 {
		for _, p := range lib.Problems {
			t.Errorf("built-in problem: %s", p)
		}
	}
	for _, p := range lib.All() {
		data, err := builtinFS.ReadFile("builtin/" + strings.TrimPrefix(p.Path, "builtin:"))
		if err != nil {
			t.Fatal(err)
		}
		_, probs := Parse(p.Path, data, p.Kind, LevelBuiltin)
		for _, pr := range probs {
			t.Errorf("%s (warnings count too for built-ins)", pr)
		}
	}
}

func TestBuiltinRoster(t *testing.T) {
	lib := builtinLibrary(t)
	want := map[Kind][]string{
		Specialist: {"architecture", "assumptions", "correctness", "edge-cases", "maintainability", "performance", "release-manager", "security", "testing"},
		Lens:       {"baseline", "premortem", "red-team", "retrospective"},
		Role:       {"advocate", "analyst", "critic", "historian", "pragmatist", "stakeholder", "synthesizer"},
		Debater:    {"literalist", "structuralist", "symbolist"},
		Observer:   {"materialist-historian", "phenomenologist", "pragmatist-engineer"},
	}
	for kind, names := range want {
		got := ids(lib.List(kind))
		if strings.Join(got, ",") != strings.Join(names, ",") {
			t.Errorf("%s built-ins = %v, want %v", kind, got, names)
		}
	}
	if lib.SharedRules() == nil {
		t.Fatal("no built-in shared rules")
	}
}

var findingField = regexp.MustCompile(`(?m)^- \*\*(Severity|Confidence|Category|Grounds|Warrant|Rebuttal Conditions|Suggested Verification)\*\*:`)

func TestBuiltinSpecialistsShape(t *testing.T) {
	lib := builtinLibrary(t)
	for _, p := range lib.List(Specialist) {
		t.Run(p.ID, func(t *testing.T) {
			if n := len(strings.Fields(p.Body)); n < 500 || n > 2000 {
				t.Errorf("body has %d words, want 500–2,000", n)
			}
			for _, s := range SpecialistSections {
				if p.Section(s) == "" {
					t.Errorf("section %q missing", s)
				}
			}
			examples := strings.Split(p.Section("Example Review Comments"), "### Finding:")[1:]
			if len(examples) < 2 || len(examples) > 3 {
				t.Fatalf("%d example findings, want 2 or 3", len(examples))
			}
			for i, ex := range examples {
				if got := len(findingField.FindAllString(ex, -1)); got != 7 {
					t.Errorf("example %d has %d of the 7 Toulmin fields", i+1, got)
				}
			}
			if p.Context() != "implementation" || p.Meta.Description == "" || len(p.Meta.Signals) == 0 {
				t.Errorf("frontmatter incomplete: context %q, description %q, %d signals", p.Context(), p.Meta.Description, len(p.Meta.Signals))
			}
		})
	}
}

func TestBuiltinLenses(t *testing.T) {
	lib := builtinLibrary(t)
	wantType := map[string]string{"baseline": "baseline", "premortem": "temporal", "retrospective": "temporal", "red-team": "adversarial"}
	for _, p := range lib.List(Lens) {
		if got := firstWord(p.Section("Lens Type")); got != wantType[p.ID] {
			t.Errorf("%s: Lens Type %q, want %q", p.ID, got, wantType[p.ID])
		}
		o := p.Section("Overlay Template")
		if n := len(strings.Fields(o)); n < 50 || n > 100 {
			t.Errorf("%s: overlay has %d words", p.ID, n)
		}
		if !strings.Contains(o, "{specialist}") || !strings.Contains(o, "**Perspective**: "+p.ID) {
			t.Errorf("%s: overlay lacks {specialist} or the Perspective instruction", p.ID)
		}
	}
}

// The seed's facts: weights, tiers, triggers and badge colours of the seven roles.
func TestBuiltinRolesMatchSeed(t *testing.T) {
	lib := builtinLibrary(t)
	want := map[string]struct {
		weight   float64
		tier     string
		color    string
		triggers string
	}{
		"analyst":     {1.0, "primary", "#3b82f6", ""},
		"advocate":    {0.8, "primary", "#22c55e", ""},
		"critic":      {0.9, "primary", "#ef4444", ""},
		"synthesizer": {0.85, "primary", "#a855f7", ""},
		"historian":   {0.7, "specialized", "#f59e0b", "over time,evolution,history,progress,changed"},
		"stakeholder": {0.75, "specialized", "#06b6d4", "impact,stakeholder,team,customer,user"},
		"pragmatist":  {0.8, "specialized", "#64748b", "action,do,implement,next steps,practical"},
	}
	for id, w := range want {
		p, ok := lib.Get(Role, id)
		if !ok {
			t.Errorf("role %s missing", id)
			continue
		}
		m := p.Meta
		if m.Weight != w.weight || m.Tier != w.tier || !strings.EqualFold(m.Color, w.color) || strings.Join(m.Triggers, ",") != w.triggers {
			t.Errorf("role %s = weight %v tier %s color %s triggers %v; want %+v", id, m.Weight, m.Tier, m.Color, m.Triggers, w)
		}
		if m.PromptPrefix == "" || len(m.Traits) != 3 {
			t.Errorf("role %s: prompt prefix %q, traits %v", id, m.PromptPrefix, m.Traits)
		}
	}
}

// TestBuiltinRoleMethods: sot ask sends a role's method, not its label:
// every built-in role has a "## Method" of 2 or 3 numbered steps, about 50
// tokens in all, so that a reading gets the role's way of working at a
// price it can pay on every source.
func TestBuiltinRoleMethods(t *testing.T) {
	lib := builtinLibrary(t)
	step := regexp.MustCompile(`^[1-9]\. \S`)
	for _, p := range lib.List(Role) {
		m := p.Section("Method")
		if m == "" {
			t.Errorf("role %s has no ## Method", p.ID)
			continue
		}
		lines := strings.Split(m, "\n")
		for i, l := range lines {
			if !step.MatchString(l) || !strings.HasPrefix(l, fmt.Sprintf("%d. ", i+1)) {
				t.Errorf("role %s: method line %d is not step %d: %q", p.ID, i+1, i+1, l)
			}
		}
		if len(lines) < 2 || len(lines) > 3 {
			t.Errorf("role %s: method has %d steps, want 2 or 3", p.ID, len(lines))
		}
		if n := tokens.Count(m); n < 35 || n > 70 {
			t.Errorf("role %s: method has %d tokens, want about 50 (35–70)", p.ID, n)
		}
	}
}

func TestBuiltinDebatersAndObservers(t *testing.T) {
	lib := builtinLibrary(t)
	for _, p := range lib.List(Debater) {
		m := p.Meta
		if m.Stance == "" || m.Focus == "" || m.Lineage == "" || m.Methodology == "" || len(m.BlindSpots) == 0 || m.Voice == "" {
			t.Errorf("debater %s lacks a field: %+v", p.ID, m)
		}
	}
	for _, p := range lib.List(Observer) {
		m := p.Meta
		if m.Bias == "" || m.Focus == "" || len(m.BlindSpots) == 0 || len(m.ExampleQuestions) == 0 || len(m.AntiExamples) == 0 {
			t.Errorf("observer %s lacks a field: %+v", p.ID, m)
		}
	}
}

// TestTemplatesKeepOutUntilFilled: a new persona's template is not
// usable as written; validation names every placeholder with its line, and
// once each is replaced the file validates without a problem.
func TestTemplatesKeepOutUntilFilled(t *testing.T) {
	filler := "Replace this with a sentence that a reviewer wrote about the way this persona reads a change to billing code, " +
		"naming the ledger, the invoices and the rounding rules it checks before anything else, and the evidence it wants from authors"
	for _, kind := range []Kind{Specialist, Lens, Role, Debater, Observer} {
		t.Run(string(kind), func(t *testing.T) {
			name := "my-" + string(kind)
			text, err := Template(kind, name)
			if err != nil {
				t.Fatal(err)
			}
			p, probs := Parse(name+".md", []byte(text), "", LevelProject)
			if p.Kind != kind || !HasErrors(probs) {
				t.Fatalf("template: kind %s, problems %v; want errors", p.Kind, probs)
			}
			lines := strings.Split(text, "\n")
			holders := 0
			for _, pr := range probs {
				if pr.Warning {
					continue
				}
				if !strings.Contains(pr.Message, "template placeholder left: <<TODO:") || pr.Line < 1 || !strings.Contains(lines[pr.Line-1], "<<TODO:") {
					t.Errorf("error %q does not name a placeholder on its line", pr)
				}
				holders++
			}
			if want := strings.Count(text, "<<TODO:"); holders != want {
				t.Errorf("%d placeholders reported, the template has %d", holders, want)
			}
			filled := placeholderPattern.Re().ReplaceAllString(text, filler)
			if _, probs := Parse(name+".md", []byte(filled), "", LevelProject); len(probs) > 0 {
				t.Errorf("filled in, the template still has problems: %v", probs)
			}
		})
	}
	if _, err := Template(Specialist, "../x"); err == nil {
		t.Error("a template name with a path must be refused")
	}
}

// TestDiscoverySkipsUnfilledTemplate: a template left as written takes no
// part in reviews, with one warning that says how many placeholders are
// left and where the first is.
func TestDiscoverySkipsUnfilledTemplate(t *testing.T) {
	text, err := Template(Specialist, "billing")
	if err != nil {
		t.Fatal(err)
	}
	lib, _ := discoverIn(t, map[string]string{"repo/.sot/personas/billing.md": text})
	if _, ok := lib.Get(Specialist, "billing"); ok {
		t.Fatal("an unfilled template must not be used")
	}
	var msgs []string
	for _, p := range lib.Problems {
		msgs = append(msgs, p.Error())
	}
	want := regexp.MustCompile(`billing\.md:4: skipped: 11 template placeholder\(s\) <<TODO: \.\.\.>> left, the first on this line; replace them, then check the file with: sot personas validate \S+billing\.md`)
	if len(msgs) != 1 || !want.MatchString(msgs[0]) {
		t.Errorf("warnings %q, want one matching %s", msgs, want)
	}
	if r := lib.RejectedFor(Specialist, "billing"); len(r) != 1 || r[0].Persona.Level != LevelProject {
		t.Errorf("rejected = %+v, want the project file", r)
	}
}
