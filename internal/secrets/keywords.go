package secrets

// keywordIndex finds which of a set of lower-case ASCII keywords occur in a
// text, ignoring ASCII case, in one pass over the text (an Aho-Corasick
// automaton turned into a table: one lookup per byte). Bytes that occur in
// no keyword share one column of the table.
type keywordIndex struct {
	class  [256]uint8 // byte -> column; 0 for bytes in no keyword
	cols   int
	next   []int32 // state*cols + column -> state
	output [][]int // state -> keywords that end there
	n      int     // number of keywords
}

func newKeywordIndex(words []string) *keywordIndex {
	x := &keywordIndex{n: len(words)}
	for _, w := range words {
		for i := 0; i < len(w); i++ {
			c := w[i]
			if x.class[c] == 0 {
				x.cols++
				x.class[c] = uint8(x.cols)
			}
		}
	}
	x.cols++ // column 0
	// The trie: goto edges, -1 where there is none.
	edges := [][]int32{x.newState()}
	x.output = [][]int{nil}
	for id, w := range words {
		s := 0
		for i := 0; i < len(w); i++ {
			c := x.class[w[i]]
			if edges[s][c] < 0 {
				edges[s][c] = int32(len(edges))
				edges = append(edges, x.newState())
				x.output = append(x.output, nil)
			}
			s = int(edges[s][c])
		}
		x.output[s] = append(x.output[s], id)
	}
	// Breadth first, each state's missing edges become those of its
	// failure state, and it inherits its failure state's outputs.
	x.next = make([]int32, len(edges)*x.cols)
	fail := make([]int32, len(edges))
	queue := []int32{}
	for c := 0; c < x.cols; c++ {
		if t := edges[0][c]; t > 0 {
			x.next[c] = t
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		f := fail[s]
		x.output[s] = append(x.output[s], x.output[f]...)
		for c := 0; c < x.cols; c++ {
			t := edges[s][c]
			if t < 0 {
				x.next[int(s)*x.cols+c] = x.next[int(f)*x.cols+c]
				continue
			}
			x.next[int(s)*x.cols+c] = t
			fail[t] = x.next[int(f)*x.cols+c]
			queue = append(queue, t)
		}
	}
	return x
}

func (x *keywordIndex) newState() []int32 {
	s := make([]int32, x.cols)
	for i := range s {
		s[i] = -1
	}
	return s
}

// keywordHits holds, by keyword id, the offsets just past each occurrence
// of the keyword in a text; nil when none occurs.
type keywordHits [][]int

// of is the offsets of keyword id's occurrences.
func (h keywordHits) of(id int) []int {
	if h == nil {
		return nil
	}
	return h[id]
}

// scan returns, by keyword id, the offsets in text just past each
// occurrence of the keyword (nil for a keyword that does not occur), or
// nil when no keyword occurs: most strings masked (a title, a name, a
// line of a prompt) hold none, and a slot for each of the 258 keywords
// was most of what masking them cost.
func (x *keywordIndex) scan(text string) keywordHits {
	var found keywordHits
	s := int32(0)
	for i := 0; i < len(text); i++ {
		c := text[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		s = x.next[int(s)*x.cols+int(x.class[c])]
		if s != 0 && len(x.output[s]) > 0 {
			if found == nil {
				found = make([][]int, x.n)
			}
			for _, id := range x.output[s] {
				found[id] = append(found[id], i+1)
			}
		}
	}
	return found
}
