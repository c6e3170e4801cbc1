package route

import (
	"reflect"
	"strings"
	"testing"
)

func TestUseGroups(t *testing.T) {
	two := []Group{{Name: "Q1", Members: []string{"a", "b", "c"}}, {Name: "Q2", Members: []string{"d", "e", "f"}}}
	oneActive := []Group{two[0], {Name: "Q3"}}
	tests := []struct {
		groups []Group
		n, min int
		c      Complexity
		use    bool
		why    string
	}{
		{two, 6, 0, ComplexityAggregate, true, "by group: 2 groups over 6 sources, complexity aggregate"},
		{two, 5, 0, ComplexityAggregate, false, "by source: 5 sources, fewer than min_agents_for_group_decomposition (6)"},
		{two, 6, 0, ComplexitySimple, false, "by source: a simple question"},
		{oneActive, 9, 0, ComplexityExploratory, false, "by source: 1 group with sources, fewer than 2"},
		{nil, 9, 0, ComplexityExploratory, false, "by source: 0 groups with sources, fewer than 2"},
		{two, 4, 4, ComplexityComparative, true, "by group: 2 groups over 4 sources, complexity comparative"},
	}
	for _, tt := range tests {
		use, why := UseGroups(tt.groups, tt.n, tt.min, tt.c)
		if use != tt.use || why != tt.why {
			t.Errorf("UseGroups(%d groups, %d, %d, %s) = %v %q, want %v %q", len(tt.groups), tt.n, tt.min, tt.c, use, why, tt.use, tt.why)
		}
	}
}

func TestGroupRole(t *testing.T) {
	tests := []struct {
		g    Group
		role string
		rule string
	}{
		{Group{Kind: GroupTemporal, Name: "Q1 2026"}, RoleHistorian, "group-kind"},
		{Group{Kind: GroupThematic, Name: "Pricing"}, RoleSynthesizer, "group-kind"},
		{Group{Kind: GroupSource, Name: "transcript"}, RoleAnalyst, "group-kind"},
		{Group{Kind: GroupCustom, Name: "Open risks"}, RoleCritic, "group-name"},
		{Group{Kind: GroupCustom, Name: "Sprint", Description: "action items and owners"}, RolePragmatist, "group-name"},
		{Group{Kind: GroupCustom, Name: "Next steps"}, RolePragmatist, "group-name"},
		{Group{Kind: GroupCustom, Name: "Customer calls"}, RoleStakeholder, "group-name"},
		{Group{Kind: GroupMeetingType, Name: "Project timeline"}, RoleHistorian, "group-name"},
		{Group{Kind: GroupCustom, Name: "Risky issues"}, RoleCritic, "group-name"}, // "issues", not "risky"
		{Group{Kind: GroupCustom, Name: "Transactions"}, "", ""},                   // "action" inside a word
		{Group{Kind: GroupCustom, Name: "Steamworks"}, "", ""},                     // "team" inside a word
		{Group{Kind: GroupMeetingType, Name: "planning"}, "", ""},
	}
	for _, tt := range tests {
		role, rule, why := GroupRole(tt.g)
		if role != tt.role || rule != tt.rule || (role != "" && why == "") {
			t.Errorf("GroupRole(%+v) = %q %q %q, want %q %q", tt.g, role, rule, why, tt.role, tt.rule)
		}
	}
}

func TestAssignGroups(t *testing.T) {
	groups := []Group{
		{ID: "q1", Name: "Q1 2026", Kind: GroupTemporal, Members: []string{"a", "b"}},
		{ID: "q2", Name: "Q2 2026", Kind: GroupTemporal, Members: []string{"c"}},
		{ID: "empty", Name: "Empty", Kind: GroupCustom},
		{ID: "risk", Name: "Risk register", Kind: GroupCustom, Members: []string{"d"}},
		{ID: "src", Name: "reports", Kind: GroupSource, Members: []string{"e"}},
		{ID: "misc", Name: "Misc", Kind: GroupCustom, Members: []string{"f", "g"}},
	}
	got := AssignGroups(groups)
	var gotIDs, roles, rules []string
	for _, ga := range got {
		gotIDs = append(gotIDs, ga.Group.ID)
		roles = append(roles, ga.Role)
		rules = append(rules, ga.Rule)
	}
	// q2 cannot take the historian again; q2 and misc rotate through the
	// primary roles nobody took: advocate, synthesizer.
	if !reflect.DeepEqual(gotIDs, []string{"q1", "q2", "risk", "src", "misc"}) {
		t.Errorf("groups %v", gotIDs)
	}
	if want := []string{"historian", "advocate", "critic", "analyst", "synthesizer"}; !reflect.DeepEqual(roles, want) {
		t.Errorf("roles %v, want %v", roles, want)
	}
	if want := []string{"group-kind", "rotation", "group-name", "group-kind", "rotation"}; !reflect.DeepEqual(rules, want) {
		t.Errorf("rules %v, want %v", rules, want)
	}
	if !strings.Contains(got[1].Why, `group "Q1 2026" already reads as historian`) {
		t.Errorf("why = %q", got[1].Why)
	}

	// Every source in a group gets its group's role.
	members := MemberRoles(got)
	want := map[string]string{"a": "historian", "b": "historian", "c": "advocate", "d": "critic", "e": "analyst", "f": "synthesizer", "g": "synthesizer"}
	if len(members) != len(want) {
		t.Fatalf("MemberRoles: %d, want %d", len(members), len(want))
	}
	for _, m := range members {
		if want[m.SourceID] != m.Role || m.Rule != "group" || m.Why == "" {
			t.Errorf("member %+v, want role %s", m, want[m.SourceID])
		}
	}
}

func TestAssignGroupsNoSharedPerspective(t *testing.T) {
	// Kinds and names take analyst, synthesizer and critic. The groups
	// left over take the one free primary role, then the other roles
	// nobody took; only an eighth group shares a perspective, because by
	// then all seven are in use.
	groups := []Group{
		{Name: "a", Kind: GroupSource, Members: []string{"1"}},
		{Name: "b", Kind: GroupThematic, Members: []string{"2"}},
		{Name: "c risks", Kind: GroupCustom, Members: []string{"3"}},
		{Name: "d", Kind: GroupCustom, Members: []string{"4"}},
		{Name: "e", Kind: GroupCustom, Members: []string{"5"}},
		{Name: "f", Kind: GroupCustom, Members: []string{"6"}},
		{Name: "g", Kind: GroupCustom, Members: []string{"7"}},
		{Name: "h", Kind: GroupCustom, Members: []string{"8"}},
	}
	got := AssignGroups(groups)
	var roles []string
	for _, ga := range got {
		roles = append(roles, ga.Role)
	}
	want := []string{RoleAnalyst, RoleSynthesizer, RoleCritic, RoleAdvocate, RoleHistorian, RoleStakeholder, RolePragmatist, RoleAnalyst}
	if !reflect.DeepEqual(roles, want) {
		t.Errorf("roles %v, want %v", roles, want)
	}
	if !strings.Contains(got[3].Why, "primary ones first (advocate, historian, stakeholder, pragmatist)") {
		t.Errorf("why = %q", got[3].Why)
	}
}

func TestGroupBy(t *testing.T) {
	srcs := []Candidate{
		cand("a", 9, "transcript", "planning", "Q1 2026"),
		cand("b", 8, "report", "review", "Q2 2026"),
		cand("c", 7, "transcript", "review", " q1 2026 "),
		cand("d", 6, "report", "", ""),
		cand("e", 5, "", "", "Q3 2026"),
	}
	got := GroupBy(srcs, FieldQuarter)
	want := []Group{
		{ID: "quarter:q1 2026", Name: "Q1 2026", Kind: GroupTemporal, Members: []string{"a", "c"}},
		{ID: "quarter:q2 2026", Name: "Q2 2026", Kind: GroupTemporal, Members: []string{"b"}},
		{ID: "quarter:q3 2026", Name: "Q3 2026", Kind: GroupTemporal, Members: []string{"e"}},
		{ID: "quarter:", Name: "unspecified quarter", Kind: GroupCustom, Members: []string{"d"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GroupBy quarter =\n%+v\nwant\n%+v", got, want)
	}
	if g := GroupBy(srcs, FieldSourceType); len(g) != 3 || g[0].Kind != GroupSource || g[2].Name != "unspecified source_type" {
		t.Errorf("GroupBy source type = %+v", g)
	}
	if g := GroupBy(srcs, FieldMeetingType); g[0].Kind != GroupMeetingType {
		t.Errorf("GroupBy meeting type = %+v", g)
	}
	if g := GroupBy(srcs, "team"); g[len(g)-1].Members == nil || g[0].Kind != GroupCustom {
		t.Errorf("GroupBy other = %+v", g)
	}

	// Every source of the partition gets exactly one role.
	roles := map[string]string{}
	for _, a := range MemberRoles(AssignGroups(got)) {
		if _, dup := roles[a.SourceID]; dup || a.Role == "" {
			t.Errorf("source %s: %+v", a.SourceID, a)
		}
		roles[a.SourceID] = a.Role
	}
	if len(roles) != len(srcs) {
		t.Errorf("roles for %d of %d sources", len(roles), len(srcs))
	}
}
