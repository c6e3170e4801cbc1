package corpus

import (
	"strings"
	"unicode/utf8"

	"github.com/sotlabs/sot/internal/tokens"
)

// Split cuts text into parts of at most budget tokens (counted as package
// internal/tokens counts them) that put back together are text, byte for
// byte: nothing is left out and nothing added. It cuts before headings
// first, so that sections stay whole and small ones share a part; a
// section too large for a part is cut between paragraphs, a paragraph
// between lines, a line before white space, and a word between runes,
// never inside one. A part exceeds the budget only when a single rune
// does. Split returns nil for an empty text, and one part for a text that
// fits or a budget of zero or less.
func Split(text string, budget int) []Part {
	if text == "" {
		return nil
	}
	var pieces []string
	if budget <= 0 || tokens.Within(budget, text) {
		pieces = []string{text}
	} else {
		pieces = fit(text, budget)
	}
	parts := make([]Part, len(pieces))
	off := 0
	for i, p := range pieces {
		parts[i] = Part{Index: i, Count: len(pieces), Offset: off, Text: p, Tokens: tokens.Count(p)}
		off += len(p)
	}
	return parts
}

// The levels at which a text is cut, coarsest first.
const (
	cutHeadings = iota
	cutParagraphs
	cutLines
	cutWords
	cutRunes
)

// atom is a piece of text within the budget, and the level of the cut
// before it.
type atom struct {
	text   string
	level  int
	tokens int
}

// fit cuts text, which is over budget, into pieces within it. The text
// is cut into atoms, each within budget, as coarsely as each part of it
// allows; atoms are then packed greedily into pieces, and a piece that
// would overflow ends at its coarsest cut in its second half rather than
// at its last.
func fit(text string, budget int) []string {
	atoms := atomize(nil, text, budget, 0, 0)
	var out []string
	cur := atoms[:0:0]
	sum := 0
	emit := func(n int) {
		// The first n atoms of cur make a piece; tokens do not always add
		// up, so it gives back atoms until its count is within budget.
		for n > 1 && tokens.Count(join(cur[:n])) > budget {
			n--
		}
		out = append(out, join(cur[:n]))
		cur = append(cur[:0:0], cur[n:]...)
		sum = 0
		for _, a := range cur {
			sum += a.tokens
		}
	}
	for _, a := range atoms {
		for len(cur) > 0 && sum+a.tokens > budget {
			// The atoms' tokens may add up to more than the text they
			// make: count it before cutting.
			if n := tokens.Count(join(cur) + a.text); n <= budget {
				sum = n - a.tokens
				break
			}
			emit(bestCut(cur, sum, a.level))
		}
		cur = append(cur, a)
		sum += a.tokens
	}
	for len(cur) > 0 {
		emit(len(cur))
	}
	return out
}

// bestCut is where a full piece of atoms (sum tokens) ends: before its
// coarsest cut after the first half of it, or after all of it when no cut
// there is coarser than the one after it, at level next.
func bestCut(atoms []atom, sum, next int) int {
	best, bestLevel := len(atoms), next
	seen := atoms[0].tokens
	for i := 1; i < len(atoms); i++ {
		if 2*seen >= sum && atoms[i].level < bestLevel {
			best, bestLevel = i, atoms[i].level
		}
		seen += atoms[i].tokens
	}
	return best
}

func join(atoms []atom) string {
	var b strings.Builder
	for _, a := range atoms {
		b.WriteString(a.text)
	}
	return b.String()
}

// atomize appends to atoms the atoms of text, cut at level or finer; the
// first one's cut is at first.
func atomize(atoms []atom, text string, budget, level, first int) []atom {
	if level == cutRunes {
		for i, p := range fitRunes(text, budget) {
			l := cutRunes
			if i == 0 {
				l = first
			}
			atoms = append(atoms, atom{p, l, tokens.Count(p)})
		}
		return atoms
	}
	for i, p := range cut(text, level) {
		l := level
		if i == 0 {
			l = first
		}
		if n := tokens.Count(p); n <= budget {
			atoms = append(atoms, atom{p, l, n})
		} else {
			atoms = atomize(atoms, p, budget, level+1, l)
		}
	}
	return atoms
}

// cut cuts text into consecutive pieces at level: before each heading
// outside fenced code, after each run of blank lines, after each line
// break, or before each run of white space.
func cut(text string, level int) []string {
	var pieces []string
	start := 0
	switch level {
	case cutHeadings:
		var f fence
		pos := 0
		for pos < len(text) {
			end := strings.IndexByte(text[pos:], '\n')
			if end < 0 {
				end = len(text)
			} else {
				end += pos + 1
			}
			line := strings.TrimSuffix(text[pos:end], "\n")
			if !f.step(line) {
				if _, _, ok := heading(line); ok && pos > start {
					pieces = append(pieces, text[start:pos])
					start = pos
				}
			}
			pos = end
		}
	case cutParagraphs:
		for i := 0; i < len(text); {
			j := strings.Index(text[i:], "\n\n")
			if j < 0 {
				break
			}
			j += i + 2
			for j < len(text) && text[j] == '\n' {
				j++
			}
			if j < len(text) {
				pieces = append(pieces, text[start:j])
				start = j
			}
			i = j
		}
	case cutLines:
		for {
			i := strings.IndexByte(text[start:], '\n')
			if i < 0 || start+i+1 >= len(text) {
				break
			}
			pieces = append(pieces, text[start:start+i+1])
			start += i + 1
		}
	case cutWords:
		// Before each run of white space that follows a word, so that a
		// piece is a word with the space before it, as tokens are.
		inSpace := true
		for i, r := range text {
			space := r == ' ' || r == '\t' || r == '\n'
			if space && !inSpace && i > start {
				pieces = append(pieces, text[start:i])
				start = i
			}
			inSpace = space
		}
	}
	return append(pieces, text[start:])
}

// fitRunes cuts text into pieces within budget between runes: each the
// longest prefix of what is left that fits, and at least one rune.
func fitRunes(text string, budget int) []string {
	var out []string
	for text != "" {
		// The piece is looked for in the first budget*32 bytes, which
		// keeps a long word's cost to its length times a logarithm; a
		// piece of tokens longer than 32 bytes on average comes out
		// shorter than it could be, and no less right.
		window := budget*32 + utf8.UTFMax
		var bounds []int // rune boundaries after the first rune
		for i := range text {
			if i > window {
				break
			}
			if i > 0 {
				bounds = append(bounds, i)
			}
		}
		if len(text) <= window {
			bounds = append(bounds, len(text))
		}
		lo, hi := -1, len(bounds)-1
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if tokens.Count(text[:bounds[mid]]) <= budget {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		n := bounds[max(lo, 0)]
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}
