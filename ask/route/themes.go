package route

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Theme is a topic that gathers sources by their topic tags: a source
// belongs to the theme that shares the most of its tags.
type Theme struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Tags        []string `json:"tags"`
}

// NormalizeTag is a topic tag as themes compare it: lowercase, words
// joined by hyphens.
func NormalizeTag(t string) string {
	return strings.Join(strings.Fields(strings.ToLower(t)), "-")
}

// TagThemes finds themes in the sources' topic tags without a model: the
// tag the most sources share (at least two) is a theme with those
// sources, then the tag the most remaining sources share, and so on. Ties
// go to the tag met first, in the order of sources and of their tags.
// Sources left over join no theme here; GroupByThemes puts them where
// they share a tag, or in a group of their own.
func TagThemes(sources []Candidate) []Theme {
	type tagCount struct {
		tag   string
		first int
	}
	left := map[string]bool{}
	for _, s := range sources {
		left[s.ID] = true
	}
	var themes []Theme
	for {
		counts := map[string]int{}
		var order []tagCount
		for _, s := range sources {
			if !left[s.ID] {
				continue
			}
			for _, t := range uniqueTags(s.Tags) {
				if counts[t] == 0 {
					order = append(order, tagCount{t, len(order)})
				}
				counts[t]++
			}
		}
		best := ""
		for _, tc := range order {
			if counts[tc.tag] >= 2 && counts[tc.tag] > counts[best] {
				best = tc.tag
			}
		}
		if best == "" {
			return themes
		}
		themes = append(themes, Theme{Name: best, Tags: []string{best}})
		for _, s := range sources {
			if left[s.ID] && slices.Contains(uniqueTags(s.Tags), best) {
				delete(left, s.ID)
			}
		}
	}
}

// GroupByThemes groups sources by theme (TagThemes when themes is empty):
// each source joins the theme sharing the most of its tags, the first such
// theme on a tie. A source that shares no tag with any theme goes in one
// last group, "other topics"; it is a custom group, so that it does not
// read as the synthesizer too. Themes without sources are left out.
func GroupByThemes(sources []Candidate, themes []Theme) []Group {
	if len(themes) == 0 {
		themes = TagThemes(sources)
	}
	groups := make([]Group, len(themes))
	tagsOf := make([][]string, len(themes))
	for i, th := range themes {
		groups[i] = Group{ID: "theme:" + strings.ToLower(strings.TrimSpace(th.Name)), Name: strings.TrimSpace(th.Name), Kind: GroupThematic, Description: th.Description}
		tagsOf[i] = uniqueTags(th.Tags)
	}
	other := Group{ID: "theme:", Name: "other topics", Kind: GroupCustom, Description: "sources that share no tag with a theme"}
	for _, s := range sources {
		best, bestN := -1, 0
		tags := uniqueTags(s.Tags)
		for i := range themes {
			n := 0
			for _, t := range tags {
				if slices.Contains(tagsOf[i], t) {
					n++
				}
			}
			if n > bestN {
				best, bestN = i, n
			}
		}
		if best < 0 {
			other.Members = append(other.Members, s.ID)
			continue
		}
		groups[best].Members = append(groups[best].Members, s.ID)
	}
	out := activeGroups(groups)
	if len(other.Members) > 0 {
		out = append(out, other)
	}
	return out
}

// CheckThemes tidies themes a model named for the given tags: tags
// normalised and kept only when they are among known (and each in one
// theme, the first that names it), names trimmed, and themes left without
// a name or a known tag dropped. It returns the themes kept and, when
// fewer than two are left, why they cannot group a corpus, with the names
// of the themes dropped quoted.
func CheckThemes(themes []Theme, known []string) ([]Theme, error) {
	knownSet := map[string]bool{}
	for _, t := range known {
		knownSet[NormalizeTag(t)] = true
	}
	taken := map[string]bool{}
	names := map[string]bool{}
	var out []Theme
	var dropped []string
	for _, th := range themes {
		th.Name = strings.Join(strings.Fields(th.Name), " ")
		th.Description = strings.Join(strings.Fields(th.Description), " ")
		var tags []string
		for _, t := range th.Tags {
			t = NormalizeTag(t)
			if knownSet[t] && !taken[t] {
				taken[t] = true
				tags = append(tags, t)
			}
		}
		key := strings.ToLower(th.Name)
		if th.Name == "" || len(tags) == 0 || names[key] {
			// Quoted: a model wrote the name, and the reason goes back to
			// it when the themes are asked for again.
			name := "(no name)"
			if th.Name != "" {
				name = strconv.Quote(th.Name)
			}
			dropped = append(dropped, name)
			continue
		}
		names[key] = true
		th.Tags = tags
		out = append(out, th)
	}
	if len(out) < 2 {
		why := fmt.Sprintf("%d theme(s) with a name and a tag from the list", len(out))
		if len(dropped) > 0 {
			why += fmt.Sprintf(" (dropped: %s)", strings.Join(dropped, ", "))
		}
		return out, fmt.Errorf("%s; a corpus needs at least 2 themes to be grouped", why)
	}
	return out, nil
}

func uniqueTags(tags []string) []string {
	var out []string
	for _, t := range tags {
		if t = NormalizeTag(t); t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}
