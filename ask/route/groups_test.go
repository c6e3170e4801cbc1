package route

import (
	"reflect"
	"strings"
	"testing"
	"time"
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
		{ID: "quarter:", Name: "undated", Kind: GroupCustom, Members: []string{"d"}},
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

// A temporal group is a period: the quarter (or month) of a source's
// parsed date; only a source without a date falls in the period its
// metadata names, and only when that parses as one; every other source is
// undated. Periods have one spelling and come in time order.
func TestGroupByPeriod(t *testing.T) {
	day := func(s string) time.Time {
		d, err := time.Parse("2006-01-02", s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	src := func(id, date, quarter string) Candidate {
		c := Candidate{ID: id, Fields: map[string]string{}}
		if date != "" {
			c.Date = day(date)
		}
		if quarter != "" {
			c.Fields[FieldQuarter] = quarter
		}
		return c
	}
	type group struct {
		name    string
		members []string
	}
	tests := []struct {
		name    string
		field   string
		sources []Candidate
		want    []group
	}{
		{"the date wins over the model's sentence", FieldQuarter, []Candidate{
			src("board", "2025-10-01", "The board meets after the migration"),
			src("plan", "2025-07-02", "Q1 2026"),
			src("retro", "2025-08-20", ""),
		}, []group{{"Q3 2025", []string{"plan", "retro"}}, {"Q4 2025", []string{"board"}}}},
		{"undated sources by the period their metadata names, in one spelling", FieldQuarter, []Candidate{
			src("a", "", "2025-Q4"),
			src("b", "", "q4/2025"),
			src("c", "", "2025 Q2"),
			src("d", "", " Q3-2025 "),
			src("e", "2025-11-30", ""),
		}, []group{{"Q2 2025", []string{"c"}}, {"Q3 2025", []string{"d"}}, {"Q4 2025", []string{"a", "b", "e"}}}},
		{"a value that is no period is undated", FieldQuarter, []Candidate{
			src("late", "", "late in the year, before the audit"),
			src("q5", "", "Q5 2025"),
			src("none", "", ""),
			src("dated", "2024-02-10", "whatever"),
		}, []group{{"Q1 2024", []string{"dated"}}, {"undated", []string{"late", "q5", "none"}}}},
		{"years order before quarters", FieldQuarter, []Candidate{
			src("x", "2026-01-05", ""),
			src("y", "2025-12-31", ""),
			src("z", "", "Q2 2024"),
		}, []group{{"Q2 2024", []string{"z"}}, {"Q4 2025", []string{"y"}}, {"Q1 2026", []string{"x"}}}},
		{"by month", FieldMonth, []Candidate{
			src("oct", "2025-10-01", "Q1 2026"),
			src("jul", "2025-07-02", ""),
			src("jul2", "2025-07-30", ""),
			src("undated", "", "Q3 2025"),
		}, []group{{"July 2025", []string{"jul", "jul2"}}, {"October 2025", []string{"oct"}}, {"undated", []string{"undated"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []group
			for _, g := range GroupBy(tt.sources, tt.field) {
				got = append(got, group{g.Name, g.Members})
				wantKind := GroupTemporal
				if g.Name == UndatedGroup {
					wantKind = GroupCustom
				}
				if g.Kind != wantKind {
					t.Errorf("group %q is %s, want %s", g.Name, g.Kind, wantKind)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("GroupBy(%s) =\n%v\nwant\n%v", tt.field, got, tt.want)
			}
		})
	}
}

func TestParseQuarter(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" when it is no quarter
	}{
		{"Q4 2025", "Q4 2025"},
		{"2025-Q4", "Q4 2025"},
		{"Q4/2025", "Q4 2025"},
		{"2025 Q4", "Q4 2025"},
		{"q1-2026", "Q1 2026"},
		{"2026/q2", "Q2 2026"},
		{"  Q3 2025\n", "Q3 2025"},
		{"Q42025", "Q4 2025"},
		{"Q5 2025", ""},
		{"Q0 2025", ""},
		{"Q4 25", ""},
		{"Q4", ""},
		{"the fourth quarter of 2025", ""},
		{"Q4 2025, after the board meeting", ""},
		{"", ""},
	}
	for _, tt := range tests {
		p, ok := ParseQuarter(tt.in)
		got := ""
		if ok {
			got = p.String()
		}
		if got != tt.want {
			t.Errorf("ParseQuarter(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for in, want := range map[string]string{"October 2025": "October 2025", "oct 2025": "October 2025", "2025-10": "October 2025", "Q4 2025": "", "autumn": ""} {
		p, ok := ParseMonth(in)
		if got := map[bool]string{true: p.String()}[ok]; got != want {
			t.Errorf("ParseMonth(%q) = %q, want %q", in, got, want)
		}
	}
}
