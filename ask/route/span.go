package route

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// CrossSourceRoles read across sources rather than one source at a time:
// the historian traces a matter through time, the synthesizer links the
// themes of a corpus. Given one source alone (an undated file, say), each
// has nothing to do its work on; read by source, each reads a span
// instead (Spans). Read by group, each already reads many sources: the
// historian a temporal group, in date order (DateOrder), the synthesizer a
// thematic one, as the seed pairs them.
var CrossSourceRoles = []string{RoleHistorian, RoleSynthesizer}

// IsCrossSource reports whether a role reads across sources.
func IsCrossSource(role string) bool { return contains(CrossSourceRoles, role) }

// InDateOrder is what a reading of sources in date order tells its model:
// a historian's span, or a group the historian reads.
const InDateOrder = "in date order (undated ones last), so that you can read across time"

// SpanSize is the most sources a span holds, unless the strategy gave
// its role more sources than that: they are all read, and nothing is
// added.
const SpanSize = 5

// Span is one cross-source reading: a role, and the sources it reads
// together in one reading.
type Span struct {
	Role string `json:"role"`
	// Members are the sources read, in reading order: the historian's in
	// date order (undated ones last), the synthesizer's in the order of
	// the sources.
	Members []string `json:"members"`
	// Own are the members the strategy gave the role; the others were
	// added to span time or themes, and are also read by their own role
	// (which is why the ask package shows only an excerpt of each).
	Own []string `json:"own"`
	// Rule is "span-time" (the historian) or "span-themes" (the
	// synthesizer).
	Rule string `json:"rule"`
	// Across is what the added members reach across: "time", "themes",
	// or "sources" when there are no themes to span; "" when nothing was
	// added.
	Across string `json:"across,omitempty"`
	// Why says how the members were chosen, to print.
	Why string `json:"why"`
	// Order says, for the prompt, how the members are ordered and why
	// they were put together.
	Order string `json:"order"`
}

// Spans gives each cross-source role that reads by source one span
// instead of one reading per source: the sources the strategy gave the
// role (its own), plus sources that reach across what its own do not
// cover, at most SpanSize in all (the most relevant first) and never
// fewer than its own:
//
//   - the historian adds the most relevant source of each period its own
//     do not cover: quarters, or months when every dated source falls in
//     one quarter, or days when in one month. Only dated sources are
//     added; the span is read in date order, undated sources last.
//   - the synthesizer adds the most relevant source of each theme its own
//     do not cover (themes as GroupByThemes finds them: themes, else the
//     topic tags the sources share). When the sources fall in fewer than
//     two themes, there are none to span, and it adds the most relevant
//     other sources instead.
//
// sources and as are in the same order (as Assign returns them). A role
// left with a single source to read has no span: it reads that source as
// before, and the assignment's Why says why. The assignments returned are
// as, with the Why of each source in a span saying so.
func Spans(sources []Candidate, as []Assignment, themes []Theme) ([]Span, []Assignment) {
	out := slices.Clone(as)
	var spans []Span
	for _, role := range CrossSourceRoles {
		var own []int // indices into sources
		for i := range sources {
			if i < len(as) && as[i].Role == role {
				own = append(own, i)
			}
		}
		if len(own) == 0 {
			continue
		}
		var sp Span
		var note string
		switch role {
		case RoleHistorian:
			sp, note = timeSpan(sources, own)
		default:
			sp, note = themeSpan(sources, own, themes)
		}
		if len(sp.Members) < 2 {
			for _, i := range own {
				out[i].Why += "; " + note
			}
			continue
		}
		n := len(sp.Members) - 1
		with := fmt.Sprintf("; read in one reading with %d other %s", n, plural(n, "source", "sources"))
		if sp.Across != "" {
			with += ", across " + sp.Across
		}
		for _, i := range own {
			out[i].Why += with
		}
		spans = append(spans, sp)
	}
	return spans, out
}

// timeSpan is the historian's span over the sources at own, and the note
// to give when it holds one source only.
func timeSpan(sources []Candidate, own []int) (Span, string) {
	// The periods: the first field that splits the dated sources in two
	// or more.
	unit := ""
	var period func(Candidate) (string, bool)
	for _, f := range []struct{ field, unit string }{{FieldQuarter, "quarter"}, {FieldMonth, "month"}, {"", "day"}} {
		p := func(c Candidate) (string, bool) {
			if f.field == "" {
				if c.Date.IsZero() {
					return "", false
				}
				return c.Date.Format("2006-01-02"), true
			}
			pp, ok := PeriodOf(c, f.field)
			return pp.String(), ok
		}
		seen := map[string]bool{}
		for _, c := range sources {
			if v, ok := p(c); ok {
				seen[v] = true
			}
		}
		unit, period = f.unit, p
		if len(seen) >= 2 {
			break
		}
	}
	covered := map[string]bool{}
	for _, i := range own {
		if v, ok := period(sources[i]); ok {
			covered[v] = true
		}
	}
	var add []int
	var added []string
	for i, c := range sources {
		v, ok := period(c)
		if !ok || covered[v] || slices.Contains(own, i) {
			continue
		}
		covered[v] = true
		add = append(add, i)
		added = append(added, v)
	}
	add, added = capAdds(add, added, len(own))
	members := append(slices.Clone(own), add...)
	ids := make([]string, len(members))
	for k, i := range members {
		ids[k] = sources[i].ID
	}
	sp := Span{Role: RoleHistorian, Members: DateOrder(ids, sources), Own: idsAt(sources, own), Rule: "span-time",
		Order: InDateOrder}
	dated := 0
	for _, i := range members {
		if _, ok := period(sources[i]); ok {
			dated++
		}
	}
	switch {
	case len(add) > 0:
		sp.Across = "time"
		sp.Why = fmt.Sprintf("the historian reads across time: its own %s and the most relevant source of each other %s (%s), in date order",
			plural(len(own), "source", "sources"), unit, strings.Join(added, ", "))
	case dated == 0:
		sp.Why = "the historian reads its own sources together; none is dated, so there is no other period to add"
	default:
		sp.Why = fmt.Sprintf("the historian reads its own sources together, in date order; no other %s to add", unit)
	}
	note := "no other dated source to read it with, so the historian reads it alone"
	if dated == 0 {
		note = "no source is dated, so the historian has no time to read across and reads it alone"
	}
	return sp, note
}

// themeSpan is the synthesizer's span over the sources at own, and the
// note to give when it holds one source only.
func themeSpan(sources []Candidate, own []int, themes []Theme) (Span, string) {
	index := map[string]int{}
	for i, c := range sources {
		index[c.ID] = i
	}
	var thematic []Group
	for _, g := range GroupByThemes(sources, themes) {
		if g.Kind == GroupThematic {
			thematic = append(thematic, g)
		}
	}
	var add []int
	var added []string
	how := ""
	if len(thematic) >= 2 {
		for _, g := range thematic {
			first, covered := -1, false
			for _, id := range g.Members {
				i := index[id]
				if slices.Contains(own, i) {
					covered = true
					break
				}
				if first < 0 || i < first {
					first = i
				}
			}
			if covered || first < 0 || slices.Contains(add, first) {
				continue
			}
			add = append(add, first)
			added = append(added, g.Name)
		}
		// The themes' sources in the order of the sources, the most
		// relevant first.
		order := make([]int, len(add))
		for k := range order {
			order[k] = k
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(add[a], add[b]) })
		a2, n2 := make([]int, len(add)), make([]string, len(add))
		for k, o := range order {
			a2[k], n2[k] = add[o], added[o]
		}
		add, added = a2, n2
		how = "themes"
	} else {
		for i := range sources {
			if !slices.Contains(own, i) {
				add = append(add, i)
				added = append(added, sources[i].ID)
			}
		}
	}
	add, added = capAdds(add, added, len(own))
	members := append(slices.Clone(own), add...)
	slices.Sort(members)
	sp := Span{Role: RoleSynthesizer, Members: idsAt(sources, members), Own: idsAt(sources, own), Rule: "span-themes"}
	switch {
	case how == "themes" && len(add) > 0:
		sp.Across = "themes"
		sp.Why = fmt.Sprintf("the synthesizer reads across themes: its own %s and the most relevant source of each other theme (%s)",
			plural(len(own), "source", "sources"), strings.Join(added, ", "))
		sp.Order = "one or more from each theme of the corpus, so that you can link them"
	case how == "themes":
		sp.Why = "the synthesizer reads its own sources together; they cover every theme"
		sp.Order = "covering the themes of the corpus, so that you can link them"
	case len(add) > 0:
		sp.Across = "sources"
		sp.Why = fmt.Sprintf("the synthesizer reads across sources: the sources fall in fewer than two themes, so it reads its own %s with the %d most relevant other %s",
			plural(len(own), "source", "sources"), len(add), plural(len(add), "source", "sources"))
		sp.Order = "from across the corpus, so that you can link them"
	default:
		sp.Why = "the synthesizer reads its own sources together"
		sp.Order = "from across the corpus, so that you can link them"
	}
	return sp, "no other source to read it with, so the synthesizer reads it alone"
}

// capAdds keeps the first of the sources added to a span, so that the
// span holds at most SpanSize sources, or only its own when they are as
// many or more.
func capAdds(add []int, names []string, own int) ([]int, []string) {
	n := max(0, SpanSize-own)
	if len(add) > n {
		return add[:n], names[:n]
	}
	return add, names
}

func idsAt(sources []Candidate, at []int) []string {
	out := make([]string, len(at))
	for k, i := range at {
		out[k] = sources[i].ID
	}
	return out
}

// DateOrder returns ids in date order, oldest first: by the source's date,
// else by the start of the quarter its metadata names (PeriodOf); the
// sources with neither come last. Ties keep the order of ids. An id that
// is not among sources counts as undated.
func DateOrder(ids []string, sources []Candidate) []string {
	byID := map[string]Candidate{}
	for _, c := range sources {
		byID[c.ID] = c
	}
	// key: months since year 0 (and the day within), or -1 for undated.
	key := func(id string) (int, int, bool) {
		c, ok := byID[id]
		if !ok {
			return 0, 0, false
		}
		if !c.Date.IsZero() {
			return c.Date.Year()*12 + int(c.Date.Month()) - 1, c.Date.Day(), true
		}
		if p, ok := PeriodOf(c, FieldQuarter); ok {
			return p.first(), 0, true
		}
		return 0, 0, false
	}
	out := slices.Clone(ids)
	slices.SortStableFunc(out, func(a, b string) int {
		am, ad, aok := key(a)
		bm, bd, bok := key(b)
		switch {
		case aok != bok:
			if aok {
				return -1
			}
			return 1
		case !aok:
			return 0
		}
		return cmp.Or(cmp.Compare(am, bm), cmp.Compare(ad, bd))
	})
	return out
}
