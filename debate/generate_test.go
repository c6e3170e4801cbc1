package debate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sotlabs/sot/llm/llmtest"
)

// The generated observers of the tests: the second comes out first as a
// rewording of the first, and is generated again.
var (
	obsCartographer = map[string]any{"name": "The Cartographer of Silences", "bias": "What a text leaves unsaid maps its meaning more truly than what it says.",
		"focus": "Omissions, pauses, dashes and the places the speaker will not describe", "blind_spots": []any{"plain statement", "historical fact", "sound"},
		"example_questions": []any{"What does the dash after Death withhold?", "Why is the grave never named?"}, "anti_examples": []any{"What is left out?", "What is the theme?"}}
	obsSilences = map[string]any{"name": "The Listener for Omissions", "bias": "What a text leaves unsaid maps its meaning more truly than what it says aloud.",
		"focus": "Omissions, pauses and the dashes where the speaker will not describe", "blind_spots": []any{"plain sense", "history", "rhythm"},
		"example_questions": []any{"What is silent here?", "Which dash hides most?"}, "anti_examples": []any{"What is missing?", "What is it about?"}}
	obsSurveyor = map[string]any{"name": "The Land Surveyor", "bias": "Every journey in a poem crosses real ground, and its geography carries the argument.",
		"focus": "Roads, fields, distances, boundaries and the order of places passed", "blind_spots": []any{"inner life", "symbol", "voice"},
		"example_questions": []any{"Why does the road pass the school before the fields?", "Where does the carriage stop?"}, "anti_examples": []any{"Where is it set?", "Is it a journey?"}}
	obsAccountant = map[string]any{"name": "The Household Accountant", "bias": "Leisure and labor are budgets, and a poem that puts both away is settling an account.",
		"focus": "Work, idleness, costs, debts and who pays for the speaker's time", "blind_spots": []any{"metaphysics", "form", "feeling"},
		"example_questions": []any{"Who kept house while she rode?", "What did the civility cost?"}, "anti_examples": []any{"Is it about money?", "What does it cost?"}}
)

// generatedQuestions are the generated observers' branch questions.
var generatedQuestions = map[string]string{
	"The Cartographer of Silences": "What does the dash after each stanza withhold that the debaters fill in?",
	"The Land Surveyor":            "Why does the road pass the school before the fields and the setting sun?",
	"The Household Accountant":     "Who kept house and paid for the hours while the speaker rode with Death?",
	"The Listener for Omissions":   "Which silence in the poem carries the most weight?",
}

var listedObserver = regexp.MustCompile(`(?m)^\d+\. `)

// generating answers observer generation by how many observers the
// request lists and whether it carries discarded attempts.
func generating(r *llmtest.Recorded) llmtest.Reply {
	if r.SchemaName != observerSchemaName {
		if r.SchemaName == questionSchemaName {
			m := youAre.FindStringSubmatch(unfenced(r.System))
			if m == nil {
				return llmtest.Reply{Fault: llmtest.Fault500}
			}
			q := map[string]any{"question": generatedQuestions[m[1]], "missing": "No turn asks.", "why": "Its bias.", "debate_summary": "The debaters disagree about Death."}
			return llmtest.Reply{JSON: q}
		}
		return responder(r)
	}
	u := unfenced(r.LastUser())
	switch n, again := len(listedObserver.FindAllString(u, -1)), strings.Contains(u, "# Attempts already discarded"); {
	case n == 0:
		return llmtest.Reply{JSON: obsCartographer}
	case n == 1 && !again:
		return llmtest.Reply{JSON: obsSilences}
	case n == 1:
		return llmtest.Reply{JSON: obsSurveyor}
	default:
		return llmtest.Reply{JSON: obsAccountant}
	}
}

// generate:3, with the second observer coming out too close to the first:
// it is generated again with the discarded attempt in the prompt, and the
// ensemble, its report and ensemble.json say so. Every link of the chain
// rides in a turn of the main debate.
func TestGeneratedEnsembleWithRegeneration(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: generating}}})
	defer srv.Close()
	o := testOptions(t, testProject(t), srv.OpenAIBaseURL(), nil)
	o.Rounds, o.BranchRounds, o.Observers = 2, 1, "generate:3"
	var mu sync.Mutex
	var warnings []string
	o.Warn = func(s string) { mu.Lock(); warnings = append(warnings, s); mu.Unlock() }
	p, out := runDebate(t, o)
	res := out.Result
	if err := out.Verdict(); err != nil {
		t.Fatalf("verdict %v: %+v", err, res.Missing)
	}
	var names []string
	for _, ob := range res.Observers {
		names = append(names, ob.Name)
	}
	if !slices.Equal(names, []string{"The Cartographer of Silences", "The Land Surveyor", "The Household Accountant"}) {
		t.Fatalf("observers %v", names)
	}
	surveyor := res.Observers[1]
	if len(surveyor.Rejected) != 1 || surveyor.Rejected[0].Name != "The Listener for Omissions" || surveyor.Rejected[0].CloseTo != "The Cartographer of Silences" ||
		surveyor.Rejected[0].Distance >= p.Settings.MinObserverDistance {
		t.Errorf("the surveyor's rejected attempts: %+v", surveyor.Rejected)
	}
	if len(res.Observers[0].Rejected)+len(res.Observers[2].Rejected) != 0 || surveyor.Origin != "generated" || surveyor.ID != "land-surveyor" {
		t.Errorf("observers %+v", res.Observers)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "too close to The Cartographer of Silences") {
		t.Errorf("warnings %q", warnings)
	}
	// The chain rode in the main debate's turns: one link a step.
	wantRiders := []string{"debate/observer/1", "debate/observer/2", "debate/observer/2/again/1", "debate/observer/3"}
	for i, l := range wantRiders {
		if st := res.Steps[i]; !slices.Contains(st.Riders, l) || !strings.HasPrefix(st.Calls[0], "debate/main/turn/") {
			t.Errorf("step %d: %+v, want %s riding with a turn", i+1, st, l)
		}
	}
	if q := res.Steps[6]; len(q.Calls) != 3 || q.Calls[0] != "debate/question/cartographer-of-silences" {
		t.Errorf("the question step: %+v", q)
	}
	if len(res.Branches) != 3 {
		t.Errorf("%d branches", len(res.Branches))
	}
	// The requests: every generation sees the passage and the observers
	// before it; the regeneration sees the discarded attempt.
	var gens []llmtest.Recorded
	for _, r := range srv.Requests() {
		if r.SchemaName == observerSchemaName {
			gens = append(gens, r)
		}
	}
	if len(gens) != 4 {
		t.Fatalf("%d generation requests", len(gens))
	}
	for i, g := range gens {
		if *g.Temperature != 0.85 || !strings.Contains(g.System, "Because I could not stop for Death") {
			t.Errorf("generation %d: temperature %v, passage %v", i+1, *g.Temperature, strings.Contains(g.System, "Because I could not"))
		}
	}
	if u := gens[0].LastUser(); !strings.Contains(u, "Design the first observer") {
		t.Errorf("the first generation: %q", u)
	}
	if u := gens[2].LastUser(); !strings.Contains(u, "The Listener for Omissions (bias:") || !strings.Contains(u, "from The Cartographer of Silences") || !strings.Contains(u, "as different as possible") {
		t.Errorf("the regeneration: %q", u)
	}
	if u := unfenced(gens[3].LastUser()); !strings.Contains(u, "\n2. The Land Surveyor") || strings.Contains(u, "Listener") {
		t.Errorf("the third generation: %q", u)
	}
	// Diversity and ensemble.json.
	d := res.Diversity
	if d == nil || d.NumPerspectives != 3 || len(d.Pairs) != 3 || d.Questions == nil || len(d.Questions.Pairs) != 3 {
		t.Fatalf("diversity %+v", d)
	}
	b, err := os.ReadFile(filepath.Join(p.OutputDir, EnsembleFile))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	da, _ := raw["diversity_analysis"].(map[string]any)
	for _, k := range []string{"num_perspectives", "avg_pairwise_distance", "min_pairwise_distance", "max_pairwise_distance", "diversity_score"} {
		if _, ok := da[k]; !ok {
			t.Errorf("ensemble.json's diversity_analysis lacks %s: %s", k, b)
		}
	}
	for _, k := range []string{"perspectives", "generated_at", "question_diversity", "measures"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("ensemble.json lacks %s", k)
		}
	}
	if ps, _ := raw["perspectives"].([]any); len(ps) != 3 || ps[1].(map[string]any)["regenerated"] != 1.0 {
		t.Errorf("perspectives %v", raw["perspectives"])
	}
	if len(srv.Requests()) > p.Calls() || len(res.Steps) > p.Steps() {
		t.Errorf("%d calls in %d steps; the plan bounds them at %d and %d", len(srv.Requests()), len(res.Steps), p.Calls(), p.Steps())
	}

	// --observers-from the ensemble: the same observers, no generation.
	before := len(srv.Requests())
	o2 := *o
	o2.Observers, o2.ObserversFrom = "", filepath.Join(p.OutputDir, EnsembleFile)
	p2, out2 := runDebate(t, &o2)
	if p2.RunID == p.RunID || len(p2.Observers) != 3 || p2.Observers[1].Name != "The Land Surveyor" || !strings.HasPrefix(p2.Observers[1].Origin, "ensemble ") {
		t.Fatalf("the ensemble's plan: %s, %+v", p2.RunID, p2.Observers)
	}
	for _, r := range srv.Requests()[before:] {
		if r.SchemaName == observerSchemaName {
			t.Errorf("an observer was generated with --observers-from")
		}
	}
	if err := out2.Verdict(); err != nil || len(out2.Result.Branches) != 3 {
		t.Errorf("the ensemble's debate: %v, %d branches", err, len(out2.Result.Branches))
	}
}

// A chain longer than the main debate goes on in steps of its own before
// the questions; an observer that stays too close after every
// regeneration is kept as the most distant attempt, with a note.
func TestGenerationOutlastsTheDebate(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: func(r *llmtest.Recorded) llmtest.Reply {
		if r.SchemaName == observerSchemaName && strings.Contains(r.LastUser(), "# Observers already designed") {
			return llmtest.Reply{JSON: obsSilences} // always too close
		}
		return generating(r)
	}}}})
	defer srv.Close()
	o := testOptions(t, testProject(t), srv.OpenAIBaseURL(), nil)
	o.Rounds, o.BranchRounds, o.Observers = 1, 1, "generate:2"
	p, out := runDebate(t, o)
	res := out.Result
	if len(res.Observers) != 2 || len(res.Observers[1].Rejected) != 2 {
		t.Fatalf("observers %+v", res.Observers)
	}
	// 1 + 3 links (the second observer, twice more) for 3 turns: one more
	// step before the questions.
	if st := res.Steps[3]; !slices.Equal(st.Calls, []string{"debate/observer/2/again/2"}) {
		t.Errorf("step 4: %+v", st)
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "stayed too close") }) {
		t.Errorf("notes %v", res.Notes)
	}
	if len(res.Steps) > p.Steps() {
		t.Errorf("%d steps, plan %d", len(res.Steps), p.Steps())
	}
}

func TestParseObservers(t *testing.T) {
	for in, want := range map[string]ObserverSpec{
		"":                 {Names: DefaultObservers},
		"none":             {None: true},
		"generate:5":       {Generate: 5},
		"a, b.md":          {Names: []string{"a", "b.md"}},
		"Generate: 2":      {Generate: 2},
		"phenomenologist,": {Names: []string{"phenomenologist"}},
	} {
		got, err := ParseObservers(in)
		if err != nil || !slices.Equal(got.Names, want.Names) || got.None != want.None || got.Generate != want.Generate {
			t.Errorf("%q: %+v, %v", in, got, err)
		}
	}
	for _, in := range []string{"generate:0", "generate:x", "generate:99", ",,"} {
		if _, err := ParseObservers(in); err == nil {
			t.Errorf("%q parsed", in)
		}
	}
}

// The plan's bound covers a generated ensemble's calls, regenerations and
// all; its typical estimate stays below the bound.
func TestEstimateWithGeneration(t *testing.T) {
	o := testOptions(t, testProject(t), "http://127.0.0.1:1", nil)
	o.Observers = "generate:5"
	p, err := Prepare(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	e := p.Estimate(nil)
	plain := *o
	plain.Observers = "none"
	q, err := Prepare(t.Context(), &plain)
	if err != nil {
		t.Fatal(err)
	}
	f := q.Estimate(nil)
	if e.Calls <= f.Calls || e.Bound.InputTokens <= f.Bound.InputTokens || e.Typical.InputTokens >= e.Bound.InputTokens || e.TypicalOutput >= e.BoundOutput {
		t.Errorf("generate:5 %+v; none %+v", e, f)
	}
}
