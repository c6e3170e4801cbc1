// Package keywords finds which of a set of ASCII keywords occur in a text,
// ignoring ASCII case, in one pass over it: an Aho-Corasick automaton
// turned into a table. The secret rules find their keywords with it
// (internal/secrets), and so do the line rules that choose a review's
// lenses (material).
package keywords

// Index finds which of a set of lower-case ASCII keywords occur in a
// text, ignoring ASCII case, in one pass over the text (an Aho-Corasick
// automaton turned into a table: one lookup per byte). Bytes that occur in
// no keyword share one column of the table.
type Index struct {
	class [256]uint8 // byte -> column, an upper-case letter's that of its lower case; 0 for bytes in no keyword
	cols  int
	// next is the table: row + column -> the next state's row, where a
	// state's row is state*cols, negated when keywords end at the state.
	next   []int32
	output [][]int // state -> keywords that end there
	n      int     // number of keywords
}

// New returns the index of words, lower-case ASCII (a byte of another
// case is never matched).
func New(words []string) *Index {
	x := &Index{n: len(words)}
	states := 1 // at most: the root, and a state for each keyword byte
	for _, w := range words {
		states += len(w)
		for i := 0; i < len(w); i++ {
			c := w[i]
			if x.class[c] == 0 {
				x.cols++
				x.class[c] = uint8(x.cols)
			}
		}
	}
	x.cols++ // column 0
	for c := 'A'; c <= 'Z'; c++ {
		x.class[c] = x.class[c+'a'-'A']
	}
	cols := x.cols
	// The trie, its goto edges in one table, a row a state: 0 where there
	// is none, since no edge goes back to the root.
	next := make([]int32, cols, states*cols)
	// Written once through before it is read: a page of fresh memory read
	// first is the system's shared page of zeros, and the write that
	// follows copies it and takes the old mapping off every processor the
	// process runs on, which in a virtual machine costs more than the
	// rest of building the table.
	clear(next[:cap(next)])
	x.output = make([][]int, 1, states)
	for id, w := range words {
		s := 0
		for i := 0; i < len(w); i++ {
			e := s*cols + int(x.class[w[i]])
			if next[e] == 0 {
				next[e] = int32(len(x.output))
				next = next[:len(next)+cols] // a new row, zero: the slice has room
				x.output = append(x.output, nil)
			}
			s = int(next[e])
		}
		x.output[s] = append(x.output[s], id)
	}
	// Breadth first, each state's missing edges become those of its
	// failure state, and it inherits its failure state's outputs. The
	// table is rewritten in place: a state's row is read as its goto
	// edges just before it is rewritten, and the rows of the failure
	// states it reads, nearer the root, are rewritten already.
	fail := make([]int32, len(x.output))
	queue := make([]int32, 0, len(x.output))
	for c := 0; c < cols; c++ {
		if t := next[c]; t > 0 {
			queue = append(queue, t)
		}
	}
	for q := 0; q < len(queue); q++ {
		s := int(queue[q])
		f := int(fail[s])
		if len(x.output[f]) > 0 {
			x.output[s] = append(x.output[s], x.output[f]...)
		}
		row, frow := next[s*cols:(s+1)*cols], next[f*cols:(f+1)*cols]
		for c, t := range row {
			if t == 0 {
				row[c] = frow[c]
				continue
			}
			fail[t] = frow[c]
			queue = append(queue, t)
		}
	}
	// From states to rows, flagged where keywords end.
	for i, t := range next {
		next[i] = t * int32(cols)
		if len(x.output[t]) > 0 {
			next[i] = -next[i]
		}
	}
	x.next = next
	return x
}

// Hits holds, by keyword id, the offsets just past each occurrence
// of the keyword in a text; nil when none occurs.
type Hits [][]int

// Of is the offsets of keyword id's occurrences.
func (h Hits) Of(id int) []int {
	if h == nil {
		return nil
	}
	return h[id]
}

// Scan returns, by keyword id, the offsets in text just past each
// occurrence of the keyword (nil for a keyword that does not occur), or
// nil when no keyword occurs: most strings masked (a title, a name, a
// line of a prompt) hold none, and a slot for each of the secret rules'
// 258 keywords was most of what masking them cost.
func (x *Index) Scan(text string) Hits {
	var found Hits
	next, class := x.next, &x.class
	row := int32(0)
	for i := 0; i < len(text); i++ {
		row = next[int(row)+int(class[text[i]])]
		if row < 0 { // keywords end here
			row = -row
			if found == nil {
				found = make([][]int, x.n)
			}
			for _, id := range x.output[int(row)/x.cols] {
				found[id] = append(found[id], i+1)
			}
		}
	}
	return found
}

// Bits returns the union of bits[id] over the keywords that occur in
// text, and allocates nothing.
func (x *Index) Bits(text string, bits []uint32) uint32 {
	var u uint32
	next, class := x.next, &x.class
	row := int32(0)
	for i := 0; i < len(text); i++ {
		row = next[int(row)+int(class[text[i]])]
		if row < 0 { // keywords end here
			row = -row
			for _, id := range x.output[int(row)/x.cols] {
				u |= bits[id]
			}
		}
	}
	return u
}
