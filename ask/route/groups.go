package route

import (
	"fmt"
	"slices"
	"strings"
)

// GroupKind is how a group of sources was formed; it decides the group's
// perspective.
type GroupKind string

// The group kinds of the seed (northstar's group criteria types).
const (
	// GroupTemporal groups sources by period; it reads as the historian.
	GroupTemporal GroupKind = "temporal"
	// GroupThematic groups sources by topic; it reads as the synthesizer.
	GroupThematic GroupKind = "thematic"
	// GroupSource groups sources by their type; it reads as the analyst.
	GroupSource GroupKind = "source"
	// GroupMeetingType groups sources by meeting type; its perspective is
	// inferred from its name, as for custom groups.
	GroupMeetingType GroupKind = "meeting-type"
	// GroupCustom is any other group; its perspective is inferred from its
	// name and description.
	GroupCustom GroupKind = "custom"
)

// DefaultMinSourcesForGroups is the seed's minAgentsForGroupDecomposition.
const DefaultMinSourcesForGroups = 6

// Group is a set of sources that group-level decomposition asks as one,
// from one perspective.
type Group struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Kind        GroupKind `json:"kind"`
	Description string    `json:"description,omitempty"`
	// Members are the IDs of the group's sources.
	Members []string `json:"members"`
}

// GroupAssignment is the role one group is read from, and why.
type GroupAssignment struct {
	Group Group  `json:"group"`
	Role  string `json:"role"`
	// Rule is "group-kind", "group-name" or "rotation".
	Rule string `json:"rule"`
	Why  string `json:"why"`
}

// UseGroups says whether to decompose the question by groups instead of by
// source, and why: the seed's conditions are at least two groups with
// sources, at least minSources sources (0 or less means
// DefaultMinSourcesForGroups), and a complexity other than simple.
func UseGroups(groups []Group, nSources, minSources int, c Complexity) (bool, string) {
	if minSources <= 0 {
		minSources = DefaultMinSourcesForGroups
	}
	active := len(activeGroups(groups))
	switch {
	case active < 2:
		return false, fmt.Sprintf("by source: %d %s with sources, fewer than 2", active, plural(active, "group", "groups"))
	case nSources < minSources:
		return false, fmt.Sprintf("by source: %d %s, fewer than min_agents_for_group_decomposition (%d)",
			nSources, plural(nSources, "source", "sources"), minSources)
	case c == ComplexitySimple:
		return false, "by source: a simple question"
	}
	return true, fmt.Sprintf("by group: %d groups over %d sources, complexity %s", active, nSources, c)
}

// groupNameRules infer a custom group's perspective from whole words of its
// name and description, tried in this order.
var groupNameRules = []struct {
	role    string
	name    string
	phrases []string
}{
	{RoleCritic, "risk words", []string{"risk", "risks", "issue", "issues", "problem", "problems", "blocker", "blockers", "concern", "concerns"}},
	{RolePragmatist, "action words", []string{"action", "actions", "task", "tasks", "todo", "todos", "to do", "next step", "next steps", "implement", "implementation"}},
	{RoleStakeholder, "stakeholder words", []string{"stakeholder", "stakeholders", "team", "teams", "customer", "customers", "impact"}},
	{RoleHistorian, "timeline words", []string{"timeline", "history", "evolution", "progress"}},
}

// GroupRole is the perspective a group calls for by itself, with the rule
// and the reason: temporal → historian, thematic → synthesizer, source →
// analyst; any other kind by words of its name and description (risk,
// issue, problem, blocker, concern → critic; action, task, todo, next step,
// implement → pragmatist; stakeholder, team, customer, impact →
// stakeholder; timeline, history, evolution, progress → historian). It
// returns "" when nothing fits.
func GroupRole(g Group) (role, rule, why string) {
	switch g.Kind {
	case GroupTemporal:
		return RoleHistorian, "group-kind", "a temporal group reads as the historian"
	case GroupThematic:
		return RoleSynthesizer, "group-kind", "a thematic group reads as the synthesizer"
	case GroupSource:
		return RoleAnalyst, "group-kind", "a source group reads as the analyst"
	}
	words := tokenize(g.Name + " " + g.Description)
	for _, r := range groupNameRules {
		if m := findPhrase(words, r.phrases); m != "" {
			return r.role, "group-name", fmt.Sprintf("the group's name or description says %q (%s)", m, r.name)
		}
	}
	return "", "", ""
}

// AssignGroups gives every group that has sources exactly one role, as the
// seed's group decomposition does: first each group takes the role
// GroupRole gives it unless an earlier group already took that role; then
// the groups left over rotate, in order, through the roles no group took,
// the primary ones first, so that no two groups share a perspective while
// one of the seven is unused. Groups without members are left out.
func AssignGroups(groups []Group) []GroupAssignment {
	active := activeGroups(groups)
	out := make([]GroupAssignment, len(active))
	used := map[string]string{} // role → the group that took it
	for i, g := range active {
		out[i].Group = g
		role, rule, why := GroupRole(g)
		switch {
		case role == "":
			out[i].Why = "no kind or name rule fits; "
		case used[role] != "":
			out[i].Why = fmt.Sprintf("%s, but group %q already reads as %s; ", why, used[role], role)
		default:
			out[i].Role, out[i].Rule, out[i].Why = role, rule, why
			used[role] = g.Name
		}
	}
	// The groups left over take the primary roles no group took, then the
	// other roles no group took, so that no two groups share a perspective
	// while one is unused; once all seven are taken the rotation starts over
	// from the first role.
	var free []string
	for _, r := range AllRoles {
		if used[r] == "" {
			free = append(free, r)
		}
	}
	k := 0
	for i := range out {
		if out[i].Role != "" {
			continue
		}
		out[i].Rule = "rotation"
		if k < len(free) {
			out[i].Role = free[k]
			out[i].Why += fmt.Sprintf("rotation: group %d over the roles no group took, primary ones first (%s)", k+1, strings.Join(free, ", "))
		} else {
			out[i].Role = AllRoles[(k-len(free))%len(AllRoles)]
			out[i].Why += "rotation: every one of the seven roles is taken, so the rotation starts over"
		}
		k++
	}
	return out
}

// MemberRoles turns group assignments into one Assignment per member
// source, so that every source in group mode also has its role; a source in
// several groups appears once for each.
func MemberRoles(gas []GroupAssignment) []Assignment {
	var out []Assignment
	for _, ga := range gas {
		for _, id := range ga.Group.Members {
			out = append(out, Assignment{
				SourceID: id,
				Role:     ga.Role,
				Rule:     "group",
				Why:      fmt.Sprintf("group %q reads as %s: %s", ga.Group.Name, ga.Role, ga.Why),
			})
		}
	}
	return out
}

// UndatedGroup names the temporal group of the sources that fall in no
// period.
const UndatedGroup = "undated"

// GroupBy partitions sources into groups by the value of one field, in the
// order each value first appears; sources without a value form one last
// group named "unspecified <field>". The kind follows the field: quarter or
// month → temporal, source type → source, meeting type → meeting-type, any other
// → custom. Values are compared as Select compares them (case and
// surrounding space aside); a group is named after its first source's value.
//
// Temporal groups (FieldQuarter, FieldMonth) are periods instead: a source
// falls in the quarter or month of its parsed date, and only a source
// without a date in the period its field names, when that parses as one
// (see PeriodOf); every period has one spelling ("Q4 2025", "October
// 2025"), the groups come in time order, and the sources that fall in no
// period form one last group, "undated".
func GroupBy(sources []Candidate, field string) []Group {
	kind := GroupCustom
	switch field {
	case FieldQuarter, FieldMonth:
		return groupByPeriod(sources, field)
	case FieldSourceType:
		kind = GroupSource
	case FieldMeetingType:
		kind = GroupMeetingType
	}
	var out []Group
	index := map[string]int{}
	var none *Group
	for _, s := range sources {
		v := fieldValue(s, field)
		if v == "" {
			if none == nil {
				none = &Group{ID: field + ":", Name: "unspecified " + field, Kind: GroupCustom}
			}
			none.Members = append(none.Members, s.ID)
			continue
		}
		i, ok := index[v]
		if !ok {
			i = len(out)
			index[v] = i
			out = append(out, Group{ID: field + ":" + v, Name: strings.TrimSpace(s.Fields[field]), Kind: kind})
		}
		out[i].Members = append(out[i].Members, s.ID)
	}
	if none != nil {
		out = append(out, *none)
	}
	return out
}

// groupByPeriod is GroupBy for a temporal field: a group a period, in
// time order, then the undated sources.
func groupByPeriod(sources []Candidate, field string) []Group {
	var out []Group
	var periods []Period
	index := map[Period]int{}
	var none *Group
	for _, s := range sources {
		p, ok := PeriodOf(s, field)
		if !ok {
			if none == nil {
				none = &Group{ID: field + ":", Name: UndatedGroup, Kind: GroupCustom}
			}
			none.Members = append(none.Members, s.ID)
			continue
		}
		i, ok := index[p]
		if !ok {
			i = len(out)
			index[p] = i
			out = append(out, Group{ID: field + ":" + strings.ToLower(p.String()), Name: p.String(), Kind: GroupTemporal})
			periods = append(periods, p)
		}
		out[i].Members = append(out[i].Members, s.ID)
	}
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return periods[a].Compare(periods[b]) })
	sorted := make([]Group, 0, len(out)+1)
	for _, i := range order {
		sorted = append(sorted, out[i])
	}
	if none != nil {
		sorted = append(sorted, *none)
	}
	return sorted
}

func activeGroups(groups []Group) []Group {
	var out []Group
	for _, g := range groups {
		if len(g.Members) > 0 {
			out = append(out, g)
		}
	}
	return out
}
