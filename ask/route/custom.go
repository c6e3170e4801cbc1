package route

import (
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
)

// CustomGroup is a group a user defines by a name and a match rule. A
// source matches when it passes every part of the rule that is set: one of
// Tags among its topic tags, its type among Types, its date within From
// and To (inclusive; a source without a date fails a date rule), and its
// path matching one of the Paths globs ("**" crosses directories). A rule
// with no part set matches nothing.
type CustomGroup struct {
	Name        string
	Description string
	Tags        []string
	Types       []string
	From, To    time.Time
	Paths       []string
}

// Matches says whether the source passes the group's rule.
func (g CustomGroup) Matches(s Candidate) bool {
	set := false
	if len(g.Tags) > 0 {
		set = true
		tags := uniqueTags(s.Tags)
		if !slices.ContainsFunc(g.Tags, func(t string) bool { return slices.Contains(tags, NormalizeTag(t)) }) {
			return false
		}
	}
	if len(g.Types) > 0 {
		set = true
		typ := strings.ToLower(strings.TrimSpace(s.Fields[FieldSourceType]))
		if !slices.ContainsFunc(g.Types, func(t string) bool { return strings.ToLower(strings.TrimSpace(t)) == typ }) {
			return false
		}
	}
	if !g.From.IsZero() || !g.To.IsZero() {
		set = true
		if s.Date.IsZero() {
			return false
		}
		day := s.Date.UTC().Truncate(24 * time.Hour)
		if (!g.From.IsZero() && day.Before(g.From)) || (!g.To.IsZero() && day.After(g.To)) {
			return false
		}
	}
	if len(g.Paths) > 0 {
		set = true
		if !slices.ContainsFunc(g.Paths, func(p string) bool {
			ok, err := doublestar.Match(p, s.Path)
			return err == nil && ok
		}) {
			return false
		}
	}
	return set
}

// GroupByRules puts each source in the first custom group whose rule it
// matches, in the order of groups, so that every source is read once. A
// source no rule matches goes in one last group, "other sources", read
// like any custom group. Groups without sources are kept, empty (UseGroups
// and AssignGroups leave them out), so that a caller can say which rule
// matched nothing.
func GroupByRules(sources []Candidate, groups []CustomGroup) []Group {
	out := make([]Group, len(groups))
	for i, g := range groups {
		out[i] = Group{ID: "custom:" + strings.ToLower(g.Name), Name: g.Name, Kind: GroupCustom, Description: g.Description}
	}
	other := Group{ID: "custom:", Name: "other sources", Kind: GroupCustom, Description: "sources no custom group's rule matches"}
	for _, s := range sources {
		i := slices.IndexFunc(groups, func(g CustomGroup) bool { return g.Matches(s) })
		if i < 0 {
			other.Members = append(other.Members, s.ID)
			continue
		}
		out[i].Members = append(out[i].Members, s.ID)
	}
	if len(other.Members) > 0 {
		out = append(out, other)
	}
	return out
}
