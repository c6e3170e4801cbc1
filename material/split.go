package material

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

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
// split between lines (its "@@" line repeated with "(continued)"). A line
// too large for a part by itself is cut into pieces that each fit: every
// piece keeps the line's number and marker, the first ends with "(line 12
// continues)" and the others start with "(line 12 continued)" ("removed
// line" for a removed line), and the pieces' text put together is the
// line's text, byte for byte. Every line of every file ends up in the
// chunks exactly once, whole or in pieces. A chunk exceeds the budget only
// when a file's header and notes and a piece's markers leave less than 16
// tokens for the text of a piece, which does not happen with budgets of 256
// tokens or more and paths of ordinary length. A budget of zero or less
// means no limit. Split returns nil for material without files.
func (m *Material) Split(budget int) []Chunk {
	if len(m.Files) == 0 {
		return nil
	}
	countTokens(m.Files)
	sizes := make([]int, len(m.Files))
	for i, f := range m.Files {
		sizes[i] = f.Tokens
	}
	return split(m.Files, sizes, budget, tokens.Count, 0, true)
}

// SplitBy is Split with the cost of text measured by size instead of its
// token count: a caller that will wrap every line of the material (as
// prompt.Fence does) measures what the lines cost once wrapped. size must
// be additive over lines: the size of two texts of whole lines, one after
// the other, is the sum of their sizes. Each file is measured once. A
// chunk's Tokens is the size of its Text, the blank lines between its
// files included; the files' own Tokens are left as they were.
func (m *Material) SplitBy(budget int, size func(text string) int) []Chunk {
	if len(m.Files) == 0 {
		return nil
	}
	sizes := measureAll(len(m.Files), func(i int) int { return size(m.Files[i].Text) })
	return split(m.Files, sizes, budget, size, size("\n"), false)
}

// split packs files of the given sizes into chunks of at most budget, each
// blank line between two files of a chunk costing sep. setTokens records
// the sizes of parts of files in their Tokens.
func split(all []File, sizes []int, budget int, size func(string) int, sep int, setTokens bool) []Chunk {
	order := make([]int, len(all))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(all[a].Path, all[b].Path) })
	files := make([]File, len(all))
	total := 0
	for k, i := range order {
		files[k] = all[i]
		total += sizes[i]
	}
	total += sep * (len(files) - 1)
	if budget <= 0 || total <= budget {
		return []Chunk{{Index: 1, Files: files, Tokens: total}}
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
	for _, i := range order {
		f, n := all[i], sizes[i]
		pieces, pieceSizes := []File{f}, []int{n}
		if n > budget {
			pieces, pieceSizes = splitFile(f, n, budget, size)
			if setTokens {
				for k := range pieces {
					pieces[k].Tokens = pieceSizes[k]
				}
			}
		}
		for k, p := range pieces {
			add := pieceSizes[k]
			if len(cur.Files) > 0 {
				add += sep
			}
			if len(cur.Files) > 0 && cur.Tokens+add > budget {
				flush()
				add = pieceSizes[k]
			}
			cur.Files = append(cur.Files, p)
			cur.Tokens += add
		}
	}
	flush()
	return chunks
}

// measureAll returns size(i) for i in [0, n), measured concurrently:
// tokenizing dominates the cost of reading large material.
func measureAll(n int, size func(int) int) []int {
	out := make([]int, n)
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range out {
			out[i] = size(i)
		}
		return out
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				out[i] = size(i)
			}
		}()
	}
	wg.Wait()
	return out
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
// its lines with their token counts. cont, when set, marks the lines that
// continue a line cut into pieces.
type group struct {
	at    string
	lines []string
	toks  []int
	cont  []bool
}

// minPieceTokens is the least text a piece of a cut line holds: a line is
// not cut when a part leaves less room than that beside the markers, since
// its pieces would be mostly markers.
const minPieceTokens = 16

// piece is a run of lines of one group placed in one part.
type piece struct {
	g         *group
	from, to  int // lines[from:to]
	continued bool
}

// splitFile splits a file of the given size, larger than budget, into
// parts that fit it, and returns the parts with their sizes.
func splitFile(f File, total, budget int, size func(string) int) ([]File, []int) {
	lines := splitLines(f.Text)
	header := "## " + headerName(f.Path)
	if len(lines) > 0 && strings.HasPrefix(lines[0], "## ") {
		header, lines = lines[0], lines[1:]
	}
	suffix := strings.TrimPrefix(header, "## "+headerName(f.Path))
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
		notesTokens += size(n + "\n")
	}
	// A line is cut into pieces when it does not fit in a part beside the
	// part's header, the longest "@@" line and the notes.
	headerTokens := size("## "+headerName(partName(f.Path, 99, 99))+suffix+"\n") + 1
	atTokens := 0
	for _, g := range groups {
		if g.at != "" {
			atTokens = max(atTokens, size(g.at+" (continued)\n"))
		}
	}
	const estimatedTries, exactTries = 3, 5
	limit, exact := budget, false
	var parts []File
	var sizes []int
	for attempt := 1; ; attempt++ {
		lineCap := limit - headerTokens - atTokens - notesTokens
		parts = renderParts(f, suffix, notes, packParts(cutLongLines(groups, lineCap, size), headerTokens, notesTokens, limit, size))
		sizes = measureAll(len(parts), func(i int) int { return size(parts[i].Text) })
		// A part over the budget can shrink if it has several lines, or
		// if its one line can still be cut into smaller pieces: a piece
		// needs room for its text and for its markers, which take about
		// as many tokens again.
		over := 0
		for i, p := range parts {
			if sizes[i] > budget && (lineCap > 2*minPieceTokens || countContent(p.Text) > 1) {
				over = max(over, sizes[i]-budget)
			}
		}
		switch {
		case over == 0:
			return parts, sizes
		case !exact && (attempt >= estimatedTries || limit <= 1):
			for _, g := range groups {
				copy(g.toks, measureAll(len(g.lines), func(i int) int { return size(g.lines[i] + "\n") }))
			}
			limit, exact = budget, true
		case exact && (attempt >= estimatedTries+exactTries || limit <= 1):
			return parts, sizes
		default:
			limit = max(1, limit-over-limit/50)
		}
	}
}

// cutLongLines returns the groups with every line estimated at more than
// lineCap tokens cut into pieces (see cutLine). Groups without such a line
// are shared; groups is returned as it is when nothing is cut.
func cutLongLines(groups []*group, lineCap int, size func(string) int) []*group {
	var out []*group
	for gi, g := range groups {
		if !slices.ContainsFunc(g.toks, func(t int) bool { return t > lineCap }) {
			if out != nil {
				out = append(out, g)
			}
			continue
		}
		if out == nil {
			out = append(make([]*group, 0, len(groups)), groups[:gi]...)
		}
		ng := &group{at: g.at}
		for i, l := range g.lines {
			if g.toks[i] <= lineCap {
				ng.lines = append(ng.lines, l)
				ng.toks = append(ng.toks, g.toks[i])
				ng.cont = append(ng.cont, false)
				continue
			}
			pieces, toks := cutLine(l, lineCap, size)
			for k := range pieces {
				ng.lines = append(ng.lines, pieces[k])
				ng.toks = append(ng.toks, toks[k])
				ng.cont = append(ng.cont, k > 0)
			}
		}
		out = append(out, ng)
	}
	if out == nil {
		return groups
	}
	return out
}

// cutLine cuts one rendered line into pieces of at most lineCap tokens
// each, with their token counts. Every piece starts with the line's prefix
// (its number and marker, "  12 +| "); the first piece ends with
// " (line 12 continues)", the last starts with "(line 12 continued) " and
// the ones between have both. Removing these markers and the prefixes and
// joining the pieces gives the line's text back exactly. The line is
// returned whole when lineCap leaves less than minPieceTokens beside the
// markers for the text of a piece.
func cutLine(l string, lineCap int, size func(string) int) ([]string, []int) {
	mark, num, text := parseLine(l)
	name := "line"
	switch {
	case mark == 0:
		text = l
	case mark == markRemoved:
		name = "removed line"
	default:
		name = "line " + strconv.Itoa(num)
	}
	prefix := l[:len(l)-len(text)]
	head, tail := "("+name+" continued) ", " ("+name+" continues)"
	// The markers are counted with a margin for the tokens that a cut
	// may add where a piece meets them.
	overhead := size(prefix+head+tail+"\n") + 2
	if lineCap-overhead < minPieceTokens {
		return []string{l}, []int{size(l + "\n")}
	}
	texts, counts := cutText(text, lineCap-overhead)
	if len(texts) == 1 {
		return []string{l}, []int{size(l + "\n")}
	}
	pieces := make([]string, len(texts))
	toks := make([]int, len(texts))
	for k, t := range texts {
		var b strings.Builder
		b.Grow(len(prefix) + len(head) + len(t) + len(tail))
		b.WriteString(prefix)
		if k > 0 {
			b.WriteString(head)
		}
		b.WriteString(t)
		if k < len(texts)-1 {
			b.WriteString(tail)
		}
		pieces[k] = b.String()
		toks[k] = counts[k] + overhead
	}
	return pieces, toks
}

// cutText cuts text into pieces of at most limit tokens each, with their
// token counts, at the text's own ratio of bytes to tokens. A piece is
// never empty and never ends inside a UTF-8 sequence; where it can, it ends
// after a space, comma or semicolon near its end, so that words and values
// stay whole.
func cutText(text string, limit int) ([]string, []int) {
	total := tokens.Count(text)
	if total <= limit {
		return []string{text}, []int{total}
	}
	perToken := float64(len(text)) / float64(total)
	var texts []string
	var counts []int
	for text != "" {
		size := int(0.9 * float64(limit) * perToken)
		var end, n int
		for {
			end = cutPoint(text, size)
			n = tokens.Count(text[:end])
			if n <= limit || end <= utf8RuneLen(text) {
				break
			}
			size = min(end-1, int(0.9*float64(end)*float64(limit)/float64(n)))
		}
		texts = append(texts, text[:end])
		counts = append(counts, n)
		text = text[end:]
	}
	return texts, counts
}

// cutPoint returns where to end a piece of text of about size bytes: at
// most size bytes (but at least one character), at a character boundary,
// after a space, comma or semicolon if one is in the last eighth.
func cutPoint(text string, size int) int {
	if size >= len(text) {
		return len(text)
	}
	if size < 1 {
		size = 1
	}
	for size > 0 && !utf8.RuneStart(text[size]) {
		size--
	}
	if size == 0 {
		return utf8RuneLen(text)
	}
	for i := size; i > size-size/8 && i > 1; i-- {
		if c := text[i-1]; c == ' ' || c == ',' || c == ';' {
			return i
		}
	}
	return size
}

// utf8RuneLen returns the length in bytes of the first character of s.
func utf8RuneLen(s string) int {
	_, n := utf8.DecodeRuneInString(s)
	return n
}

// packParts assigns the groups' lines to parts of at most limit tokens.
// headerTokens is the size of a part's header line.
func packParts(groups []*group, headerTokens, notesTokens, limit int, size func(string) int) [][]piece {
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
			atTokens = size(g.at + " (continued)\n")
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
		b.WriteString(headerName(pf.Path))
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
			for i, l := range pc.g.lines[pc.from:pc.to] {
				b.WriteString(l)
				b.WriteByte('\n')
				mark, n, _ := parseLine(l)
				if pc.g.cont != nil && pc.g.cont[pc.from+i] {
					// A later piece of a cut line: the line is counted
					// with its first piece.
					switch mark {
					case markAdded:
						changed.add(n)
						shown.add(n)
					case markContext, markPlain:
						shown.add(n)
					}
					continue
				}
				switch mark {
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
