package route

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/sotlabs/sot/persona"
)

func TestRolesFor(t *testing.T) {
	tests := []struct {
		in   Intent
		want []string
	}{
		{IntentFactual, []string{"analyst", "advocate", "critic"}},
		{IntentComparative, []string{"analyst", "critic", "synthesizer"}},
		{IntentAggregative, []string{"analyst", "advocate", "synthesizer"}},
		{IntentAnalytical, []string{"analyst", "critic", "advocate", "synthesizer"}},
		{IntentTemporal, []string{"analyst", "historian", "synthesizer"}},
		{Intent("unknown"), []string{"analyst", "advocate", "critic"}},
	}
	for _, tt := range tests {
		if got := RolesFor(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("RolesFor(%s) = %v, want %v", tt.in, got, tt.want)
		}
	}
	// The result is the caller's own.
	r := RolesFor(IntentFactual)
	r[0] = "changed"
	if RolesFor(IntentFactual)[0] != RoleAnalyst {
		t.Error("RolesFor returned shared storage")
	}
}

// The role IDs are those of the built-in role personas.
func TestRolesArePersonas(t *testing.T) {
	lib, err := persona.Discover(persona.Dirs{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range lib.Builtins(persona.Role) {
		ids = append(ids, p.ID)
	}
	for _, r := range AllRoles {
		if !contains(ids, r) {
			t.Errorf("role %q has no built-in persona (have %v)", r, ids)
		}
	}
	for _, r := range PrimaryRoles {
		p, ok := lib.Get(persona.Role, r)
		if !ok || p.Meta.Tier != "primary" {
			t.Errorf("role %q is not a primary-tier persona", r)
		}
	}
}

func sources(n int) []Candidate {
	out := make([]Candidate, n)
	for i := range out {
		out[i] = Candidate{ID: fmt.Sprintf("s%02d", i+1)}
	}
	return out
}

func roleList(as []Assignment) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Role
	}
	return out
}

// Every source gets a role, always: for each strategy, for three- and
// four-role intents and for 4, 7 and 11 sources (northstar left every fourth
// source without a role for three-role intents).
func TestAssignEverySourceGetsARole(t *testing.T) {
	for _, in := range Intents {
		roles := RolesFor(in)
		for _, st := range Strategies {
			for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 11, 12} {
				srcs := sources(n)
				got := Assign(srcs, roles, st)
				if len(got) != n {
					t.Fatalf("%s/%s/%d: %d assignments", in, st, n, len(got))
				}
				for i, a := range got {
					if a.SourceID != srcs[i].ID || a.Role == "" || a.Rule == "" || a.Why == "" {
						t.Errorf("%s/%s/%d: assignment %d = %+v", in, st, n, i, a)
					}
					if st != PrimaryOnly && !contains(roles, a.Role) {
						t.Errorf("%s/%s/%d: source %d got %q, not one of %v", in, st, n, i, a.Role, roles)
					}
				}
			}
		}
	}
}

func TestAssignRotatingThreeRoles(t *testing.T) {
	roles := RolesFor(IntentComparative) // analyst, critic, synthesizer
	want := map[int][]string{
		4:  {"analyst", "critic", "synthesizer", "analyst"},
		7:  {"analyst", "critic", "synthesizer", "analyst", "critic", "synthesizer", "analyst"},
		11: {"analyst", "critic", "synthesizer", "analyst", "critic", "synthesizer", "analyst", "critic", "synthesizer", "analyst", "critic"},
	}
	for n, w := range want {
		got := Assign(sources(n), roles, Rotating)
		if !reflect.DeepEqual(roleList(got), w) {
			t.Errorf("rotating %d: %v, want %v", n, roleList(got), w)
		}
	}
	got := Assign(sources(4), roles, Rotating)
	if got[3].Rule != "rotation" || got[3].Why != "rotation: source 4 over analyst, critic, synthesizer" {
		t.Errorf("why = %+v", got[3])
	}
}

func TestAssignUniform(t *testing.T) {
	got := Assign(sources(5), RolesFor(IntentTemporal), Uniform)
	for _, a := range got {
		if a.Role != RoleAnalyst || a.Rule != "uniform" {
			t.Errorf("%+v", a)
		}
	}
}

func TestAssignPrimaryOnly(t *testing.T) {
	got := Assign(sources(6), RolesFor(IntentTemporal), PrimaryOnly)
	want := []string{"analyst", "advocate", "critic", "synthesizer", "analyst", "advocate"}
	if !reflect.DeepEqual(roleList(got), want) {
		t.Errorf("primary-only: %v, want %v", roleList(got), want)
	}
	for _, a := range got {
		if a.Role == RoleHistorian {
			t.Errorf("primary-only gave the historian: %+v", a)
		}
	}
}

func TestAssignDefaultsAndCleaning(t *testing.T) {
	// Empty and unknown strategies rotate; empty roles are the factual ones;
	// blank role IDs are dropped.
	for _, st := range []Strategy{"", "bogus"} {
		got := Assign(sources(4), []string{" Critic ", "", "historian"}, st)
		want := []string{"critic", "historian", "critic", "historian"}
		if !reflect.DeepEqual(roleList(got), want) {
			t.Errorf("strategy %q: %v, want %v", st, roleList(got), want)
		}
	}
	got := Assign(sources(4), nil, Uniform)
	if roleList(got)[3] != RoleAnalyst {
		t.Errorf("nil roles: %v", roleList(got))
	}
	got = Assign(sources(2), []string{"", "  "}, Rotating)
	if !reflect.DeepEqual(roleList(got), []string{"analyst", "advocate"}) {
		t.Errorf("blank roles: %v", roleList(got))
	}
	if got := Assign(nil, RolesFor(IntentFactual), Rotating); len(got) != 0 {
		t.Errorf("no sources: %v", got)
	}
}

func TestAssignAdaptive(t *testing.T) {
	roles := RolesFor(IntentComparative) // analyst, critic, synthesizer
	tests := []struct {
		name string
		c    Candidate
		pos  int
		role string
		rule string
		why  string
	}{
		{"suggested wins over signals", Candidate{Suggested: "Stakeholder", Signals: Signals{RiskMentions: 9}}, 0,
			"stakeholder", "suggested", "suggested perspective: the source suggests stakeholder"},
		{"suggested outside the intent's roles", Candidate{Suggested: "historian"}, 0,
			"historian", "suggested", "suggested perspective: the source suggests historian"},
		{"unknown suggestion falls through", Candidate{Suggested: "optimist", Signals: Signals{RiskMentions: 4}}, 0,
			"critic", "signal", `suggested perspective "optimist" is not a role; content signal: riskMentions 4 > 3`},

		{"risks at threshold", Candidate{Signals: Signals{RiskMentions: 3}}, 1,
			"critic", "rotation", "no suggested perspective or signal over its threshold; rotation: source 2 over analyst, critic, synthesizer"},
		{"risks just over", Candidate{Signals: Signals{RiskMentions: 4}}, 1,
			"critic", "signal", "content signal: riskMentions 4 > 3"},
		{"actions at threshold", Candidate{Signals: Signals{ActionsAssigned: 5}}, 0,
			"analyst", "rotation", "no suggested perspective or signal over its threshold; rotation: source 1 over analyst, critic, synthesizer"},
		{"actions just over", Candidate{Signals: Signals{ActionsAssigned: 6}}, 0,
			"pragmatist", "signal", "content signal: actionsAssigned 6 > 5"},
		{"decisions at threshold", Candidate{Signals: Signals{DecisionsMade: 2}}, 2,
			"synthesizer", "rotation", "no suggested perspective or signal over its threshold; rotation: source 3 over analyst, critic, synthesizer"},
		{"decisions just over", Candidate{Signals: Signals{DecisionsMade: 3}}, 2,
			"analyst", "signal", "content signal: decisionsMade 3 > 2"},
		{"questions at threshold", Candidate{Signals: Signals{QuestionsRaised: 3}}, 1,
			"critic", "rotation", "no suggested perspective or signal over its threshold; rotation: source 2 over analyst, critic, synthesizer"},
		{"questions just over", Candidate{Signals: Signals{QuestionsRaised: 4}}, 1,
			"advocate", "signal", "content signal: questionsRaised 4 > 3"},

		{"risks before actions", Candidate{Signals: Signals{RiskMentions: 4, ActionsAssigned: 6, DecisionsMade: 3, QuestionsRaised: 4}}, 0,
			"critic", "signal", "content signal: riskMentions 4 > 3"},
		{"actions before decisions", Candidate{Signals: Signals{RiskMentions: 3, ActionsAssigned: 6, DecisionsMade: 3, QuestionsRaised: 4}}, 0,
			"pragmatist", "signal", "content signal: actionsAssigned 6 > 5"},
		{"decisions before questions", Candidate{Signals: Signals{RiskMentions: 3, ActionsAssigned: 5, DecisionsMade: 3, QuestionsRaised: 4}}, 0,
			"analyst", "signal", "content signal: decisionsMade 3 > 2"},
		{"questions last", Candidate{Signals: Signals{RiskMentions: 3, ActionsAssigned: 5, DecisionsMade: 2, QuestionsRaised: 4}}, 0,
			"advocate", "signal", "content signal: questionsRaised 4 > 3"},
		{"conflict indicators choose nothing", Candidate{Signals: Signals{ConflictIndicators: 50}}, 0,
			"analyst", "rotation", "no suggested perspective or signal over its threshold; rotation: source 1 over analyst, critic, synthesizer"},
	}
	for _, tt := range tests {
		// Put the source at position pos among plain sources.
		srcs := sources(tt.pos + 1)
		tt.c.ID = srcs[tt.pos].ID
		srcs[tt.pos] = tt.c
		got := Assign(srcs, roles, Adaptive)[tt.pos]
		if got.Role != tt.role || got.Rule != tt.rule || got.Why != tt.why {
			t.Errorf("%s: got %s/%s %q, want %s/%s %q", tt.name, got.Role, got.Rule, got.Why, tt.role, tt.rule, tt.why)
		}
	}
}

func TestAssignAdaptiveMixed(t *testing.T) {
	// The seed file's own metadata: suggestedPerspective analyst,
	// decisionsMade 7, actionsAssigned 5.
	srcs := []Candidate{
		{ID: "seed", Suggested: "analyst", Signals: Signals{DecisionsMade: 7, ActionsAssigned: 5}},
		{ID: "risky", Signals: Signals{RiskMentions: 5}},
		{ID: "plain1"},
		{ID: "plain2"},
	}
	got := Assign(srcs, RolesFor(IntentTemporal), Adaptive)
	want := []string{"analyst", "critic", "synthesizer", "analyst"} // rotation by position: 2 → synthesizer, 3 → analyst
	if !reflect.DeepEqual(roleList(got), want) {
		t.Errorf("adaptive: %v, want %v", roleList(got), want)
	}
}

func TestParseStrategy(t *testing.T) {
	for in, want := range map[string]Strategy{
		"": Rotating, "uniform": Uniform, " ROTATING ": Rotating, "adaptive": Adaptive,
		"primary-only": PrimaryOnly, "primary_only": PrimaryOnly, "PRIMARY_ONLY": PrimaryOnly,
	} {
		if got, err := ParseStrategy(in); err != nil || got != want {
			t.Errorf("ParseStrategy(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseStrategy("random"); err == nil || !strings.Contains(err.Error(), "primary-only") {
		t.Errorf("ParseStrategy(random) error %v", err)
	}
}

func TestSkipSoT(t *testing.T) {
	tests := []struct {
		n, min int
		skip   bool
		note   string
	}{
		{0, 0, true, "society of thought skipped: 0 relevant sources, fewer than min_agents_for_sot (2); answering without perspective roles"},
		{1, 0, true, "society of thought skipped: 1 relevant source, fewer than min_agents_for_sot (2); answering without perspective roles"},
		{2, 0, false, ""},
		{2, 3, true, "society of thought skipped: 2 relevant sources, fewer than min_agents_for_sot (3); answering without perspective roles"},
		{3, 3, false, ""},
		{10, -1, false, ""},
	}
	for _, tt := range tests {
		skip, note := SkipSoT(tt.n, tt.min)
		if skip != tt.skip || note != tt.note {
			t.Errorf("SkipSoT(%d, %d) = %v, %q; want %v, %q", tt.n, tt.min, skip, note, tt.skip, tt.note)
		}
	}
}

// The roles a question's sources are read from, under each strategy, as
// ask plans them: Classify names the intent, RolesFor its roles, Assign
// gives each source one. The same five sources, in the same order, for
// three questions.
func TestQuestionSourceRoles(t *testing.T) {
	srcs := []Candidate{
		{ID: "risk-review", Signals: Signals{RiskMentions: 5}},
		{ID: "standup"}, // nothing in it picks a role
		{ID: "customer-call", Suggested: "Stakeholder"},
		{ID: "planning", Signals: Signals{DecisionsMade: 4, ActionsAssigned: 8}},
		{ID: "retro", Signals: Signals{QuestionsRaised: 6}},
	}
	// Under adaptive the sources pick their own roles, whatever the
	// question; only the standup, which picks none, takes the rotation's
	// role for position 2.
	adaptive := func(second string) []string {
		return []string{"critic", second, "stakeholder", "pragmatist", "advocate"}
	}
	adaptiveRules := []string{"signal", "rotation", "suggested", "signal", "signal"}
	tests := []struct {
		q        string
		intent   Intent
		strategy Strategy
		roles    []string // of srcs, in order
	}{
		{"What patterns emerge across the retrospectives?", IntentAnalytical, Uniform,
			[]string{"analyst", "analyst", "analyst", "analyst", "analyst"}},
		{"What patterns emerge across the retrospectives?", IntentAnalytical, Rotating,
			[]string{"analyst", "critic", "advocate", "synthesizer", "analyst"}},
		{"What patterns emerge across the retrospectives?", IntentAnalytical, Adaptive, adaptive("critic")},
		{"What patterns emerge across the retrospectives?", IntentAnalytical, PrimaryOnly,
			[]string{"analyst", "advocate", "critic", "synthesizer", "analyst"}},

		{"How has the pricing decision evolved over time?", IntentTemporal, Uniform,
			[]string{"analyst", "analyst", "analyst", "analyst", "analyst"}},
		{"How has the pricing decision evolved over time?", IntentTemporal, Rotating,
			[]string{"analyst", "historian", "synthesizer", "analyst", "historian"}},
		{"How has the pricing decision evolved over time?", IntentTemporal, Adaptive, adaptive("historian")},
		// primary-only never reads a source as the historian, even for a
		// question about history.
		{"How has the pricing decision evolved over time?", IntentTemporal, PrimaryOnly,
			[]string{"analyst", "advocate", "critic", "synthesizer", "analyst"}},

		{"What was decided about the vendor contract?", IntentFactual, Rotating,
			[]string{"analyst", "advocate", "critic", "analyst", "advocate"}},
		{"What was decided about the vendor contract?", IntentFactual, Adaptive, adaptive("advocate")},
		{"Compare the two pilot proposals.", IntentComparative, Rotating,
			[]string{"analyst", "critic", "synthesizer", "analyst", "critic"}},
		{"Compare the two pilot proposals.", IntentComparative, Adaptive, adaptive("critic")},
	}
	for _, tt := range tests {
		c := Classify(tt.q)
		if c.Intent != tt.intent {
			t.Errorf("%q: intent %s, want %s", tt.q, c.Intent, tt.intent)
			continue
		}
		got := Assign(srcs, RolesFor(c.Intent), tt.strategy)
		var pairs, want []string
		for i, a := range got {
			pairs = append(pairs, a.SourceID+"="+a.Role)
			want = append(want, srcs[i].ID+"="+tt.roles[i])
		}
		if !reflect.DeepEqual(pairs, want) {
			t.Errorf("%q (%s) under %s:\n got %v\nwant %v", tt.q, c.Intent, tt.strategy, pairs, want)
		}
		if tt.strategy == Adaptive {
			if rules := rulesOf(got); !reflect.DeepEqual(rules, adaptiveRules) {
				t.Errorf("%q under adaptive: rules %v, want %v", tt.q, rules, adaptiveRules)
			}
		}
	}
}

func rulesOf(as []Assignment) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Rule
	}
	return out
}
