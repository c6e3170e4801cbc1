package route

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func tagged(id string, tags ...string) Candidate {
	return Candidate{ID: id, Tags: tags, Fields: map[string]string{}}
}

func TestTagThemes(t *testing.T) {
	srcs := []Candidate{
		tagged("a", "billing", "Vendor Contract"),
		tagged("b", "security", "billing"),
		tagged("c", "vendor-contract", "hiring"),
		tagged("d", "security"),
		tagged("e", "billing"),
		tagged("f", "hiring"),
		tagged("g", "onboarding"),
		tagged("h"),
	}
	// billing is shared by three; of the rest (c, d, f, g, h) only hiring
	// is shared by two: security's other source is billing's already.
	got := TagThemes(srcs)
	var names []string
	for _, th := range got {
		names = append(names, th.Name)
	}
	if want := []string{"billing", "hiring"}; !reflect.DeepEqual(names, want) {
		t.Errorf("TagThemes = %v, want %v", names, want)
	}

	groups := GroupByThemes(srcs, nil)
	want := []Group{
		{ID: "theme:billing", Name: "billing", Kind: GroupThematic, Members: []string{"a", "b", "e"}},
		{ID: "theme:hiring", Name: "hiring", Kind: GroupThematic, Members: []string{"c", "f"}},
		{ID: "theme:", Name: "other topics", Kind: GroupCustom, Description: "sources that share no tag with a theme", Members: []string{"d", "g", "h"}},
	}
	if !reflect.DeepEqual(groups, want) {
		t.Errorf("GroupByThemes =\n%+v\nwant\n%+v", groups, want)
	}
	// The first thematic group reads as the synthesizer; the next ones
	// rotate, and "other topics" is not taken for a theme.
	as := AssignGroups(groups)
	if as[0].Role != RoleSynthesizer || as[0].Rule != "group-kind" || len(as) != 3 || as[1].Role == RoleSynthesizer || as[2].Rule != "rotation" {
		t.Errorf("AssignGroups = %+v", as)
	}
}

func TestGroupByNamedThemes(t *testing.T) {
	srcs := []Candidate{
		tagged("a", "pricing", "churn"),
		tagged("b", "churn", "support-tickets"),
		tagged("c", "launch"),
		tagged("d", "pricing"),
	}
	themes := []Theme{
		{Name: "Revenue", Description: "what customers pay", Tags: []string{"pricing"}},
		{Name: "Retention", Tags: []string{"churn", "Support Tickets"}},
		{Name: "Unused", Tags: []string{"nothing"}},
	}
	got := GroupByThemes(srcs, themes)
	// a ties between Revenue and Retention and takes the first; b shares
	// two tags with Retention.
	want := []Group{
		{ID: "theme:revenue", Name: "Revenue", Kind: GroupThematic, Description: "what customers pay", Members: []string{"a", "d"}},
		{ID: "theme:retention", Name: "Retention", Kind: GroupThematic, Members: []string{"b"}},
		{ID: "theme:", Name: "other topics", Kind: GroupCustom, Description: "sources that share no tag with a theme", Members: []string{"c"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GroupByThemes =\n%+v\nwant\n%+v", got, want)
	}
}

func TestCheckThemes(t *testing.T) {
	known := []string{"pricing", "churn", "support-tickets", "launch"}
	got, err := CheckThemes([]Theme{
		{Name: "  Revenue ", Tags: []string{"Pricing", "made-up"}},
		{Name: "Retention", Tags: []string{"churn", "pricing"}}, // pricing is Revenue's already
		{Name: "", Tags: []string{"launch"}},
		{Name: "Nothing known", Tags: []string{"made-up"}},
		{Name: "revenue", Tags: []string{"launch"}}, // a second Revenue
	}, known)
	if err != nil {
		t.Fatal(err)
	}
	want := []Theme{{Name: "Revenue", Tags: []string{"pricing"}}, {Name: "Retention", Tags: []string{"churn"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CheckThemes = %+v, want %+v", got, want)
	}
	_, err = CheckThemes([]Theme{{Name: "One", Tags: []string{"churn"}}, {Name: "Two", Tags: []string{"gone"}}}, known)
	if err == nil || !strings.Contains(err.Error(), "1 theme(s)") || !strings.Contains(err.Error(), `dropped: "Two"`) {
		t.Errorf("CheckThemes with one theme left: %v", err)
	}
}

func TestCustomGroupMatches(t *testing.T) {
	day := func(s string) time.Time {
		d, err := time.Parse("2006-01-02", s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	src := Candidate{ID: "x", Tags: []string{"security", "vendor-contract"}, Path: "notes/risk/2026-01-10.md",
		Date: day("2026-01-10").Add(15 * time.Hour), Fields: map[string]string{FieldSourceType: "Transcript"}}
	tests := []struct {
		name string
		g    CustomGroup
		want bool
	}{
		{"no rule", CustomGroup{Name: "empty"}, false},
		{"a tag", CustomGroup{Tags: []string{"Vendor Contract", "hiring"}}, true},
		{"no tag", CustomGroup{Tags: []string{"hiring"}}, false},
		{"a type", CustomGroup{Types: []string{"report", "transcript"}}, true},
		{"no type", CustomGroup{Types: []string{"report"}}, false},
		{"in the range", CustomGroup{From: day("2026-01-01"), To: day("2026-01-10")}, true},
		{"on the first day", CustomGroup{From: day("2026-01-10")}, true},
		{"after the range", CustomGroup{To: day("2026-01-09")}, false},
		{"a glob across directories", CustomGroup{Paths: []string{"notes/**/*.md"}}, true},
		{"a glob in one directory", CustomGroup{Paths: []string{"notes/*.md"}}, false},
		{"every part", CustomGroup{Tags: []string{"security"}, Types: []string{"transcript"}, From: day("2026-01-01"), Paths: []string{"notes/**"}}, true},
		{"one part fails", CustomGroup{Tags: []string{"security"}, Types: []string{"report"}}, false},
	}
	for _, tt := range tests {
		if got := tt.g.Matches(src); got != tt.want {
			t.Errorf("%s: Matches = %v, want %v", tt.name, got, tt.want)
		}
	}
	undated := src
	undated.Date = time.Time{}
	if (CustomGroup{From: day("2020-01-01")}).Matches(undated) {
		t.Error("a source without a date matched a date rule")
	}
}

func TestGroupByRules(t *testing.T) {
	srcs := []Candidate{
		tagged("a", "security"),
		tagged("b", "action-items"),
		tagged("c", "security", "action-items"),
		tagged("d", "hiring"),
	}
	groups := []CustomGroup{
		{Name: "Open risks", Tags: []string{"security"}},
		{Name: "Next steps", Tags: []string{"action-items"}},
		{Name: "Transactions", Tags: []string{"payments"}},
	}
	got := GroupByRules(srcs, groups)
	// c matches both rules and is read in the first.
	if len(got) != 4 || !reflect.DeepEqual(got[0].Members, []string{"a", "c"}) || !reflect.DeepEqual(got[1].Members, []string{"b"}) ||
		len(got[2].Members) != 0 || got[3].Name != "other sources" || !reflect.DeepEqual(got[3].Members, []string{"d"}) {
		t.Fatalf("GroupByRules = %+v", got)
	}
	// Perspectives from whole words of the names; the empty group is out.
	as := AssignGroups(got)
	var roles []string
	for _, a := range as {
		roles = append(roles, a.Group.Name+"="+a.Role)
	}
	if want := []string{"Open risks=critic", "Next steps=pragmatist", "other sources=analyst"}; !reflect.DeepEqual(roles, want) {
		t.Errorf("roles %v, want %v", roles, want)
	}
}
