package material

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sotlabs/sot/internal/tokens"
)

// Chunk is a part of the material that fits a token budget.
type Chunk struct {
	Index  int    // 1-based
	Files  []File // whole files, or parts of one file named "path (part 2 of 3)"
	Tokens int    // sum of the files' tokens
}

// Text returns the text of the chunk's files, separated by blank lines.
func (c Chunk) Text() string { return joinFiles(c.Files) }

// Paths returns the paths of the chunk's files, without part suffixes.
func (c Chunk) Paths() []string {
	out := make([]string, 0, len(c.Files))
	for _, f := range c.Files {
		p := f.Path
		if base, _, _, ok := splitPartName(p); ok {
			p = base
		}
		if len(out) == 0 || out[len(out)-1] != p {
			out = append(out, p)
		}
	}
	return out
}

// Split packs the material into chunks of at most budget tokens each, so
// that nothing is truncated. Files are sorted by path, so that a
// directory's files stay together, and packed greedily in that order;
// everything fits in one chunk when it can. A file larger than the budget is
// split at its hunks ("@@" lines) into parts named "path (part 2 of 3)",
// each repeating the file's header, and a hunk larger than the budget is
// split between lines (its "@@" line repeated with "(continued)"). Every
// line of every file ends up in exactly one chunk. A chunk exceeds the
// budget only when one line with its headers does. A budget of zero or less
// means no limit. Split returns nil for material without files.
func (m *Material) Split(budget int) []Chunk {
	if len(m.Files) == 0 {
		return nil
	}
	countTokens(m.Files)
	files := slices.Clone(m.Files)
	slices.SortStableFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	if budget <= 0 || sumTokens(files) <= budget {
		return []Chunk{{Index: 1, Files: files, Tokens: sumTokens(files)}}
	}
	var chunks []Chunk
	var cur Chunk
	flush := func() {
		if len(cur.Files) > 0 {
			cur.Index = len(chunks) + 1
			chunks = append(chunks, cur)
			cur = Chunk{}
		}
	}
	for _, f := range files {
		pieces := []File{f}
		if f.Tokens > budget {
			pieces = splitFile(f, budget)
		}
		for _, p := range pieces {
			if len(cur.Files) > 0 && cur.Tokens+p.Tokens > budget {
				flush()
			}
			cur.Files = append(cur.Files, p)
			cur.Tokens += p.Tokens
		}
	}
	flush()
	return chunks
}

// partName names part i of n of a file.
func partName(p string, i, n int) string { return fmt.Sprintf("%s (part %d of %d)", p, i, n) }

// splitPartName undoes partName.
func splitPartName(s string) (base string, i, n int, ok bool) {
	if !strings.HasSuffix(s, ")") {
		return s, 0, 0, false
	}
	k := strings.LastIndex(s, " (part ")
	if k < 0 {
		return s, 0, 0, false
	}
	a, b, found := strings.Cut(s[k+len(" (part "):len(s)-1], " of ")
	if !found {
		return s, 0, 0, false
	}
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || i < 1 || i > n {
		return s, 0, 0, false
	}
	return s[:k], i, n, true
}

// group is a hunk of a file's text: its "@@" line (empty for artifacts) and
// its lines with their token counts.
type group struct {
	at    string
	lines []string
	toks  []int
}

// piece is a run of lines of one group placed in one part.
type piece struct {
	g         *group
	from, to  int // lines[from:to]
	continued bool
}

// splitFile splits a file larger than budget into parts that fit it.
func splitFile(f File, budget int) []File {
	lines := splitLines(f.Text)
	header := "## " + f.Path
	if len(lines) > 0 && strings.HasPrefix(lines[0], "## ") {
		header, lines = lines[0], lines[1:]
	}
	suffix := strings.TrimPrefix(header, "## "+f.Path)
	if suffix == header {
		suffix = ""
	}
	// Notes: the lines between the header and the first hunk or line.
	var notes []string
	for len(lines) > 0 && !strings.HasPrefix(lines[0], "@@") && !isContentLine(lines[0]) {
		notes, lines = append(notes, lines[0]), lines[1:]
	}
	// Lines are first weighed by their bytes at the file's own ratio of
	// tokens to bytes, with a margin; the parts are then counted exactly.
	// If a part is over the budget, the limit is tightened, and after a few
	// tries the lines are counted one by one (the count of a text is
	// nearly always at most the sum of its lines' counts).
	total := f.Tokens
	if total == 0 {
		total = tokens.Count(f.Text)
	}
	ratio := 1.1 * float64(total) / float64(len(f.Text)+1)
	var groups []*group
	for _, l := range lines {
		if strings.HasPrefix(l, "@@") || len(groups) == 0 {
			g := &group{}
			groups = append(groups, g)
			if strings.HasPrefix(l, "@@") {
				g.at = l
				continue
			}
		}
		g := groups[len(groups)-1]
		g.lines = append(g.lines, l)
		g.toks = append(g.toks, int(math.Ceil(float64(len(l)+1)*ratio)))
	}
	notesTokens := 0
	for _, n := range notes {
		notesTokens += tokens.Count(n + "\n")
	}
	const estimatedTries, exactTries = 3, 5
	limit, exact := budget, false
	var parts []File
	for attempt := 1; ; attempt++ {
		parts = renderParts(f, suffix, notes, packParts(f.Path, suffix, groups, notesTokens, limit))
		over := 0
		for _, p := range parts {
			if p.Tokens > budget && countContent(p.Text) > 1 {
				over = max(over, p.Tokens-budget)
			}
		}
		switch {
		case over == 0:
			return parts
		case !exact && (attempt >= estimatedTries || limit <= 1):
			for _, g := range groups {
				copy(g.toks, countAll(len(g.lines), func(i int) string { return g.lines[i] + "\n" }))
			}
			limit, exact = budget, true
		case exact && (attempt >= estimatedTries+exactTries || limit <= 1):
			return parts
		default:
			limit = max(1, limit-over-limit/50)
		}
	}
}

// packParts assigns the groups' lines to parts of at most limit tokens.
func packParts(p, suffix string, groups []*group, notesTokens, limit int) [][]piece {
	headerTokens := tokens.Count("## "+partName(p, 99, 99)+suffix+"\n") + 1
	var parts [][]piece
	var cur []piece
	used := 0
	newPart := func() {
		if len(cur) > 0 {
			parts = append(parts, cur)
		}
		cur = nil
		used = headerTokens
	}
	newPart()
	used += notesTokens
	for _, g := range groups {
		atTokens := 0
		if g.at != "" {
			atTokens = tokens.Count(g.at + " (continued)\n")
		}
		total := atTokens
		for _, t := range g.toks {
			total += t
		}
		if used+total <= limit || len(g.lines) == 0 {
			cur = append(cur, piece{g: g, from: 0, to: len(g.lines)})
			used += total
			continue
		}
		if len(cur) > 0 && headerTokens+total <= limit {
			newPart()
			cur = append(cur, piece{g: g, from: 0, to: len(g.lines)})
			used += total
			continue
		}
		// The group does not fit in one part: split it between lines.
		from := 0
		first := true
		for from < len(g.lines) {
			if len(cur) > 0 && used+atTokens+g.toks[from] > limit {
				newPart()
			}
			used += atTokens
			to := from
			for to < len(g.lines) && (to == from || used+g.toks[to] <= limit) {
				used += g.toks[to]
				to++
			}
			cur = append(cur, piece{g: g, from: from, to: to, continued: !first})
			first = false
			from = to
			if from < len(g.lines) {
				newPart()
			}
		}
	}
	if len(cur) > 0 {
		parts = append(parts, cur)
	}
	return parts
}

// renderParts renders the parts of a file.
func renderParts(f File, suffix string, notes []string, parts [][]piece) []File {
	out := make([]File, 0, len(parts))
	for i, pieces := range parts {
		pf := File{
			Path:     partName(f.Path, i+1, len(parts)),
			OldPath:  f.OldPath,
			Status:   f.Status,
			Language: f.Language,
		}
		var b strings.Builder
		b.WriteString("## ")
		b.WriteString(pf.Path)
		b.WriteString(suffix)
		b.WriteByte('\n')
		if i == 0 {
			for _, n := range notes {
				b.WriteString(n)
				b.WriteByte('\n')
			}
		}
		var changed, shown rangeList
		for _, pc := range pieces {
			if pc.g.at != "" {
				b.WriteString(pc.g.at)
				if pc.continued {
					b.WriteString(" (continued)")
				}
				b.WriteByte('\n')
			}
			for _, l := range pc.g.lines[pc.from:pc.to] {
				b.WriteString(l)
				b.WriteByte('\n')
				switch mark, n, _ := parseLine(l); mark {
				case markAdded:
					pf.Additions++
					changed.add(n)
					shown.add(n)
				case markRemoved:
					pf.Deletions++
				case markContext, markPlain:
					shown.add(n)
				}
			}
		}
		pf.Changed, pf.Shown = changed, shown
		pf.Text = b.String()
		out = append(out, pf)
	}
	countTokens(out)
	return out
}

// countContent counts the numbered and removed lines of a rendered text.
func countContent(text string) int {
	n := 0
	for _, l := range splitLines(text) {
		if isContentLine(l) {
			n++
		}
	}
	return n
}
