package ask

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sotlabs/sot/ask/corpus"
	"github.com/sotlabs/sot/ask/route"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/index"
)

// GroupsOf groups indexed sources as --groups would, each group with the
// role it would be read from: by quarter ("temporal", or "temporal:month"
// by month), by source type
// ("source"), by theme ("thematic": the themes sot sources group
// --thematic named, else the topic tags the sources share) or by the
// custom groups a comma-separated list names (from custom, else the
// configuration's). top is the project's top.
func GroupsOf(docs []index.Doc, by, top string, custom []config.CustomGroup) ([]route.GroupAssignment, error) {
	cands := make([]route.Candidate, 0, len(docs))
	for _, d := range docs {
		s := corpus.Source{ID: d.ID, Title: d.Title, Type: d.Type, Date: d.Date, Path: d.Path, Metadata: MetadataOf(d)}
		cands = append(cands, candidateOf(s, 0))
	}
	groups, _, err := groupCandidates(cands, by, top, custom)
	if err != nil {
		return nil, err
	}
	return route.AssignGroups(groups), nil
}

// groupCandidates groups candidates by the grouping named, and says how
// when it is worth saying (which themes were used).
func groupCandidates(cands []route.Candidate, by, top string, custom []config.CustomGroup) ([]route.Group, string, error) {
	for i := range cands {
		cands[i].Path = projectPath(top, cands[i].Path)
	}
	switch strings.ToLower(strings.TrimSpace(by)) {
	case "temporal", "temporal:quarter":
		return route.GroupBy(cands, route.FieldQuarter), "", nil
	case "temporal:month":
		return route.GroupBy(cands, route.FieldMonth), "", nil
	case "source":
		return route.GroupBy(cands, route.FieldSourceType), "", nil
	case "thematic":
		t, err := LoadThemes(top)
		if err != nil {
			return nil, "", err
		}
		if t != nil && len(t.Themes) > 0 {
			return route.GroupByThemes(cands, t.Themes), fmt.Sprintf("the themes %s named (sot sources group --thematic)", t.Model), nil
		}
		tagged := 0
		for _, c := range cands {
			if len(c.Tags) > 0 {
				tagged++
			}
		}
		note := "themes are the topic tags the sources share (sot sources group --thematic has a model name them)"
		if tagged == 0 {
			note = "no source has topic tags, so there are no themes: run sot sources analyze, or use northstar exports"
		}
		return route.GroupByThemes(cands, nil), note, nil
	}
	rules, err := customRules(config.GroupNames(by), custom)
	if err != nil {
		return nil, "", err
	}
	return route.GroupByRules(cands, rules), "", nil
}

// customRules are the custom groups names names, in its order.
func customRules(names []string, defined []config.CustomGroup) ([]route.CustomGroup, error) {
	var out []route.CustomGroup
	for _, n := range names {
		i := slices.IndexFunc(defined, func(g config.CustomGroup) bool { return strings.EqualFold(strings.TrimSpace(g.Name), n) })
		if i < 0 {
			var have []string
			for _, g := range defined {
				have = append(have, fmt.Sprintf("%q", g.Name))
			}
			known := "no custom group is defined"
			if len(have) > 0 {
				known = "the custom groups are " + strings.Join(have, ", ")
			}
			return nil, &engine.UserError{Field: "--groups", Msg: fmt.Sprintf("%q is no grouping: use temporal, source, thematic, or the names of custom groups (define one with --group \"NAME=tags:a,b\" or under ask.custom_groups); %s", n, known)}
		}
		g := defined[i]
		if err := g.Check(); err != nil {
			return nil, &engine.UserError{Field: "--group", Msg: err.Error()}
		}
		from, to, _ := g.DateRange()
		out = append(out, route.CustomGroup{Name: strings.TrimSpace(g.Name), Description: g.Description, Tags: g.Tags, Types: g.Types, From: from, To: to, Paths: g.Paths})
	}
	return out, nil
}

// projectPath is p relative to the project's top, slash-separated, as
// custom group globs match it; p as it is when it lies outside.
func projectPath(top, p string) string {
	if p == "" || top == "" {
		return filepath.ToSlash(p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(rel)
}
