package debate

import (
	"encoding/json"
	"testing"

	"github.com/sotlabs/sot/persona"
)

// The built-in observers are scored against their shuffled and duplicated
// variants: the content measure tells duplicates apart, and the seed's
// measure, which sits near 0.9 for any descriptions, tells neither.
func TestCheckEnsemble(t *testing.T) {
	lib, err := persona.Discover(persona.Dirs{})
	if err != nil {
		t.Fatal(err)
	}
	obs := BuiltinEnsemble(lib)
	seps, err := CheckEnsemble(obs, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Separation{}
	for _, s := range seps {
		got[s.Measure] = s
	}
	if c := got["content_words"]; !c.SeparatesDuplicated || c.Duplicated > 0.05 {
		t.Errorf("the content measure on duplicates: %+v", c)
	}
	if s := got["seed_jaccard"]; s.SeparatesShuffled {
		t.Errorf("the seed's measure told a shuffled ensemble apart: %+v", s)
	}
	if again, _ := CheckEnsemble(obs, 1); again[1] != seps[1] {
		t.Error("the same seed gave other figures")
	}
	if _, err := CheckEnsemble(obs[:1], 1); err == nil {
		t.Error("one observer was checked")
	}
}

// A debate's questions: distinct questions score above their duplicates.
func TestCheckQuestions(t *testing.T) {
	res := Result{RunID: "r1", Passage: Passage{Text: "The ant stores grain for winter while the grasshopper sings all summer in the field."},
		Questions: []*Question{
			{Observer: "a", Question: "Who owns the grain the ant stores, and who decides that it may be stored?"},
			{Observer: "b", Question: "Why does the fable treat singing as idleness rather than as work?"},
			{Observer: "c", Question: "What would the grasshopper's winter look like in a village that shares its harvest?"},
		}}
	b, _ := json.Marshal(res)
	s, err := CheckQuestions(b, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !s.SeparatesDuplicated || s.Real <= s.Duplicated {
		t.Errorf("questions against their duplicates: %+v", s)
	}
}
