package conflict

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/sotlabs/sot/internal/parallel"
)

// answer is what a comparison needs of one answer, read once.
type answer struct {
	source    Source
	empty     bool
	conflicts int
	agrees    int
	// words are the ids of the answer's distinct words (see Pair's
	// Similarity) in the order they first occur, and pos[k] is the
	// answer's place in the postings of words[k].
	words []int32
	pos   []int32
	// themes are the words of its excerpt that may be conflict themes.
	themes []string
}

// corpus is the answers read, with an inverted index of their words:
// postings[w] lists the answers that hold the word w, in the order of the
// input.
type corpus struct {
	answers  []answer
	postings [][]int32
}

// read reads one answer, the i-th, and returns the words its similarity
// is measured on, each as often as it occurs.
func read(i int, r Response) (answer, []string) {
	lower := strings.ToLower(r.Response)
	x := answer{
		source: Source{AgentName: r.AgentName, Perspective: r.Perspective, Excerpt: excerpt(r.Response), Index: i},
		empty:  strings.TrimSpace(lower) == "",
	}
	if x.source.AgentName == "" {
		x.source.AgentName = fmt.Sprintf("Source %d", i+1)
	}
	if x.source.Perspective == "" {
		x.source.Perspective = "Default"
	}
	x.conflicts, x.agrees = countMarkers(lower)
	x.themes = themeWords(x.source.Excerpt)
	var tokens []string
	for w := range strings.FieldsSeq(lower) {
		if utf8.RuneCountInString(w) > 3 {
			tokens = append(tokens, w)
		}
	}
	return x, tokens
}

// readAll reads every answer, on every processor, then gives each distinct
// word an id and builds the postings, in the order of the input.
func readAll(rs []Response) *corpus {
	c := &corpus{answers: make([]answer, len(rs))}
	tokens := make([][]string, len(rs))
	parallel.For(len(rs), func(i int) { c.answers[i], tokens[i] = read(i, rs[i]) })
	ids := map[string]int32{}
	var last []int32 // last[w]: 1 + the last answer found to hold w
	var df []int32   // df[w]: how many answers hold w
	for i := range c.answers {
		x := &c.answers[i]
		for _, t := range tokens[i] {
			w, ok := ids[t]
			if !ok {
				w = int32(len(df))
				ids[t] = w
				df, last = append(df, 0), append(last, 0)
			}
			if last[w] == int32(i+1) {
				continue
			}
			last[w] = int32(i + 1)
			df[w]++
			x.words = append(x.words, w)
		}
	}
	// Every posting list is a slice of one array.
	total := 0
	for _, n := range df {
		total += int(n)
	}
	all := make([]int32, total)
	c.postings = make([][]int32, len(df))
	off := 0
	for w, n := range df {
		c.postings[w] = all[off : off : off+int(n)]
		off += int(n)
	}
	for i := range c.answers {
		x := &c.answers[i]
		x.pos = make([]int32, len(x.words))
		for k, w := range x.words {
			x.pos[k] = int32(len(c.postings[w]))
			c.postings[w] = append(c.postings[w], int32(i))
		}
	}
	return c
}

// windowPairs is about how many pairs a window of rows holds: the counts
// of a window are computed at once, on every processor, before its rows
// are handed on. It is a variable so that the tests can try small windows.
var windowPairs = 1 << 16

// eachRow calls fn for every answer i that is not empty, in the order of
// the input, with shared[d] the number of words the answers i and i+1+d
// share. shared is only valid during the call. An error of fn stops
// eachRow and is its error.
func (c *corpus) eachRow(fn func(i int, shared []int32) error) error {
	n := len(c.answers)
	var buf []int32
	var rows, offs []int
	for start := 0; start < n-1; {
		rows, offs = rows[:0], offs[:0]
		size, end := 0, start
		for ; end < n-1 && (size == 0 || size+n-end-1 <= windowPairs); end++ {
			if !c.answers[end].empty {
				rows, offs = append(rows, end), append(offs, size)
				size += n - end - 1
			}
		}
		if cap(buf) < size {
			buf = make([]int32, size)
		}
		buf = buf[:size]
		row := func(r int) []int32 { return buf[offs[r] : offs[r]+n-rows[r]-1] }
		parallel.For(len(rows), func(r int) { c.share(rows[r], row(r)) })
		for r, i := range rows {
			if err := fn(i, row(r)); err != nil {
				return err
			}
		}
		start = end
	}
	return nil
}

// share counts, for every later answer j, the words the answer i shares
// with it into shared[j-i-1], by walking the postings of i's words past i.
func (c *corpus) share(i int, shared []int32) {
	clear(shared)
	x := &c.answers[i]
	base := int32(i + 1)
	for k, w := range x.words {
		for _, j := range c.postings[w][x.pos[k]+1:] {
			shared[j-base]++
		}
	}
}
