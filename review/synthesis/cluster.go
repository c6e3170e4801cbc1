package synthesis

import (
	"sort"

	"github.com/sotlabs/sot/lexical"
	"github.com/sotlabs/sot/review/finding"
)

// Anchor answers questions about the material under review; material.Material
// implements it.
type Anchor interface {
	// IsChanged reports whether a line of a file was added or modified.
	IsChanged(path string, line int) bool
	// IsShown reports whether a line of a file is in the material.
	IsShown(path string, line int) bool
	// HasFile reports whether the material includes the file.
	HasFile(path string) bool
}

// Tier decides a finding's grounding. For a diff: Direct when it cites a
// changed line; Inferential when it cites lines the diff shows (context
// lines) but no changed line, or names a changed file without lines;
// Contextual otherwise, including lines of a changed file that the diff
// neither changes nor shows. For documents and freeform text, which have
// no changed lines: Direct when it cites a line or section of the material;
// Inferential when it names a reviewed file only, or a section without a
// file; Contextual otherwise, including lines past a document's end and,
// when the anchor knows the sections (SectionAnchor), sections the
// documents do not have.
func Tier(f *finding.Finding, a Anchor, reviewType string) Grounding {
	loc := f.Location
	sections, _ := a.(SectionAnchor)
	sectionExists := func(path string) bool { return sections == nil || sections.HasSection(path, loc.Section) }
	if loc.File == "" {
		if reviewType != "diff" && loc.Section != "" && sectionExists("") {
			return Inferential
		}
		return Contextual
	}
	if !a.HasFile(loc.File) {
		return Contextual
	}
	if loc.StartLine == 0 {
		if reviewType != "diff" && loc.Section != "" {
			if !sectionExists(loc.File) {
				return Contextual // a section the document does not have
			}
			return Direct
		}
		return Inferential
	}
	end := max(loc.EndLine, loc.StartLine)
	if end-loc.StartLine > 500 {
		end = loc.StartLine + 500 // a claim about a whole file is not line-precise
	}
	if reviewType == "diff" {
		shown := false
		for l := loc.StartLine; l <= end; l++ {
			if a.IsChanged(loc.File, l) {
				return Direct
			}
			shown = shown || a.IsShown(loc.File, l)
		}
		if shown {
			return Inferential
		}
		return Contextual
	}
	for l := loc.StartLine; l <= end; l++ {
		if a.IsShown(loc.File, l) {
			return Direct
		}
	}
	return Contextual // lines the document does not have
}

// SectionAnchor is an Anchor that knows the sections of the documents in
// the material. When the Anchor given to Tier implements it, a finding that
// cites a section no document has is Contextual.
type SectionAnchor interface {
	// HasSection reports whether the document at path (any document when
	// path is "") has the section.
	HasSection(path, section string) bool
}

// tierWeight is how much evidence quality counts in a score.
func tierWeight(g Grounding) float64 {
	switch g {
	case Direct:
		return 1
	case Inferential:
		return 0.7
	}
	return 0.4
}

// scored is a finding with its grounding and score.
type scored struct {
	finding.Finding
	tier  Grounding
	score float64
	words lexical.Set
}

// cluster is a group of findings about the same thing.
type cluster struct {
	id      string
	members []*scored
}

// otherLens reports whether two findings are by one specialist under
// different lenses.
func otherLens(a, b *scored) bool {
	return a.Specialist != "" && a.Specialist == b.Specialist && a.Lens != b.Lens
}

// textThreshold is the claim similarity above which two findings are taken
// to be about the same thing even without overlapping locations.
const textThreshold = 0.5

// clusterFindings groups findings: first by file and overlapping line
// ranges (with claims sharing some words, unless the two are lenses of one
// specialist), then by the similarity of their claims. The result is
// deterministic.
func clusterFindings(fs []*scored) []*cluster {
	parent := make([]int, len(fs))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(i, j int) {
		if a, b := find(i), find(j); a != b {
			if a < b {
				parent[b] = a
			} else {
				parent[a] = b
			}
		}
	}
	for i := range fs {
		for j := i + 1; j < len(fs); j++ {
			a, b := fs[i], fs[j]
			sameLines := a.Location.File != "" && a.Location.StartLine > 0 && a.Location.Overlaps(b.Location)
			// Overlapping lines make a candidate; the claims must still share
			// some meaning, or two unrelated problems in one function merge.
			// Two lenses of one specialist on the same lines are the same
			// method applied to the same code, so they are put side by side
			// however they word it; the triage lead may still call them
			// distinct.
			if sameLines && (lexical.Jaccard(a.words, b.words) >= 0.15 || otherLens(a, b)) {
				union(i, j)
				continue
			}
			sameFile := a.Location.File == b.Location.File
			if lexical.Jaccard(a.words, b.words) >= textThreshold && (sameFile || a.Location.File == "" || b.Location.File == "") {
				union(i, j)
			}
		}
	}
	groups := map[int]*cluster{}
	var order []int
	for i, f := range fs {
		r := find(i)
		c, ok := groups[r]
		if !ok {
			c = &cluster{}
			groups[r] = c
			order = append(order, r)
		}
		c.members = append(c.members, f)
	}
	sort.Ints(order)
	out := make([]*cluster, len(order))
	for i, r := range order {
		out[i] = groups[r]
		sort.SliceStable(out[i].members, func(a, b int) bool { return out[i].members[a].ID < out[i].members[b].ID })
	}
	return out
}

// best is the member with the highest score; ties go to the more severe,
// then to the lower ID, so the choice does not depend on the members' order.
func (c *cluster) best() *scored {
	b := c.members[0]
	for _, m := range c.members[1:] {
		if outranks(m, b) {
			b = m
		}
	}
	return b
}

// outranks orders findings by evidence: higher score first, then the more
// severe, then the lower ID.
func outranks(a, b *scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if ra, rb := a.Severity.Rank(), b.Severity.Rank(); ra != rb {
		return ra > rb
	}
	return a.ID < b.ID
}
