package config

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
)

// CustomGroup is a group of sources a user names, with the rule that says
// which sources belong to it (ask.custom_groups, or sot ask --group). A
// source belongs when it passes every part that is set: one of Tags among
// its topic tags, its type among Types, its date from From to To
// (YYYY-MM-DD, inclusive), its path (relative to the project's top)
// matching one of the Paths globs.
type CustomGroup struct {
	Name        string   `yaml:"name" json:"name"`
	Description string   `yaml:"description,omitempty" json:"description,omitempty"`
	Tags        []string `yaml:"tags,omitempty" json:"tags,omitempty"`
	Types       []string `yaml:"types,omitempty" json:"types,omitempty"`
	From        string   `yaml:"from,omitempty" json:"from,omitempty"`
	To          string   `yaml:"to,omitempty" json:"to,omitempty"`
	Paths       []string `yaml:"paths,omitempty" json:"paths,omitempty"`
}

// GroupKinds are the groupings sot ask knows by name; any other name in
// ask.groups or --groups names custom groups.
var GroupKinds = []string{"temporal", "temporal:quarter", "temporal:month", "source", "thematic"}

// DateRange is the group's date rule, parsed (zero times for no bound).
func (g CustomGroup) DateRange() (from, to time.Time, err error) {
	parse := func(field, s string) (time.Time, error) {
		if s = strings.TrimSpace(s); s == "" {
			return time.Time{}, nil
		}
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return time.Time{}, fmt.Errorf("%s %q is not a date: write it as YYYY-MM-DD", field, s)
		}
		return t, nil
	}
	if from, err = parse("from", g.From); err != nil {
		return
	}
	if to, err = parse("to", g.To); err != nil {
		return
	}
	if !from.IsZero() && !to.IsZero() && to.Before(from) {
		err = fmt.Errorf("from %s is after to %s", g.From, g.To)
	}
	return
}

// Check reports what is wrong with the group: a name that a list of
// groups cannot hold (empty, with a comma, or a grouping's own name), no
// rule, a bad date or an invalid or escaping glob.
func (g CustomGroup) Check() error {
	name := strings.TrimSpace(g.Name)
	switch {
	case name == "":
		return errors.New("a custom group needs a name")
	case strings.ContainsAny(name, ",:"):
		return fmt.Errorf("group %q: a name cannot hold a comma or a colon (--groups takes a list of names)", name)
	case slices.Contains(GroupKinds, strings.ToLower(name)):
		return fmt.Errorf("group %q: that name is a grouping of its own (temporal, source, thematic); choose another", name)
	}
	if len(g.Tags) == 0 && len(g.Types) == 0 && g.From == "" && g.To == "" && len(g.Paths) == 0 {
		return fmt.Errorf("group %q has no rule: give it tags, types, from/to dates or paths", name)
	}
	if _, _, err := g.DateRange(); err != nil {
		return fmt.Errorf("group %q: %w", name, err)
	}
	for _, p := range g.Paths {
		if !doublestar.ValidatePattern(p) {
			return fmt.Errorf("group %q: %q is not a valid glob", name, p)
		}
		if path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
			return fmt.Errorf("group %q: the glob %q must be relative to the project's top, inside it", name, p)
		}
	}
	return nil
}

// ParseCustomGroup reads a group as --group writes it:
//
//	NAME=KEY:VALUE[,VALUE...][;KEY:VALUE...]
//
// with the keys tags, types, from, to and paths (also tag, type, path),
// for example "Launch risks=tags:security,risk;from:2026-01-01".
func ParseCustomGroup(s string) (CustomGroup, error) {
	name, rule, ok := strings.Cut(s, "=")
	g := CustomGroup{Name: strings.TrimSpace(name)}
	if !ok || strings.TrimSpace(rule) == "" {
		return g, fmt.Errorf("%q: write NAME=KEY:VALUE[;KEY:VALUE], for example \"Launch risks=tags:security,risk;from:2026-01-01\"", s)
	}
	for part := range strings.SplitSeq(rule, ";") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		key, value, ok := strings.Cut(part, ":")
		if !ok {
			return g, fmt.Errorf("%q: %q has no KEY:VALUE (keys: tags, types, from, to, paths)", s, part)
		}
		var values []string
		for v := range strings.SplitSeq(value, ",") {
			if v = strings.TrimSpace(v); v != "" {
				values = append(values, v)
			}
		}
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "tag", "tags":
			g.Tags = append(g.Tags, values...)
		case "type", "types":
			g.Types = append(g.Types, values...)
		case "path", "paths":
			g.Paths = append(g.Paths, values...)
		case "from":
			g.From = strings.TrimSpace(value)
		case "to":
			g.To = strings.TrimSpace(value)
		default:
			return g, fmt.Errorf("%q: unknown key %q (keys: tags, types, from, to, paths)", s, strings.TrimSpace(key))
		}
	}
	return g, g.Check()
}

// GroupNames splits ask.groups or --groups into its names: one grouping
// (temporal, source, thematic) or a list of custom group names.
func GroupNames(s string) []string {
	var out []string
	for n := range strings.SplitSeq(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// checkGroups validates ask.groups against the groupings and the
// configured custom groups; a custom name the configuration does not
// define may still come from --group, so only the form is checked here.
func checkGroups(a Ask) error {
	seen := map[string]bool{}
	for i, g := range a.CustomGroups {
		if err := g.Check(); err != nil {
			return fmt.Errorf("ask.custom_groups[%d]: %w", i, err)
		}
		k := strings.ToLower(strings.TrimSpace(g.Name))
		if seen[k] {
			return fmt.Errorf("ask.custom_groups[%d]: a second group named %q", i, g.Name)
		}
		seen[k] = true
	}
	names := GroupNames(a.Groups)
	if strings.TrimSpace(a.Groups) != "" && len(names) == 0 {
		return fmt.Errorf("ask.groups %q names no grouping", a.Groups)
	}
	for _, n := range names {
		if slices.Contains(GroupKinds, strings.ToLower(n)) && len(names) > 1 {
			return fmt.Errorf("ask.groups %q: %s is a grouping of its own and cannot be listed with others; use one of temporal, source, thematic, or a list of custom group names", a.Groups, n)
		}
	}
	return nil
}
