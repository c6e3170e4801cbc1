package tokens

import (
	"encoding/binary"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/tiktoken-go/tokenizer"
)

// counter counts tokens as the o200k_base codec of tiktoken-go does, about
// five times faster. The codec splits text into pieces with a regular
// expression, which takes most of its time; counter splits it with the
// same pattern written out by hand (pieceAt), and counts each piece with
// the same vocabulary (read from vocabFile, not from the codec, whose
// tables take much longer to build): a piece in the vocabulary is one
// token, any other is merged byte pair by byte pair as the codec merges
// it. Text that is not valid UTF-8, and pieces of mergeLimit bytes or
// more, are left to the codec, which is loaded only for them. The tests
// compare the two on the repository's files and tricky texts, and
// FuzzCounterMatchesTheCodec on any text.
type counter struct {
	vocab *vocabulary
	// codec returns the codec, loading it on first use.
	codec func() (tokenizer.Codec, error)
}

// mergeLimit is the piece length from which the codec's own merging, which
// takes O(n log n) where mergeCount takes O(n²), is used.
const mergeLimit = 1024

// stackParts is the piece length up to which mergeCount keeps its parts
// on the stack.
const stackParts = 96

// vocabularySize bounds the ids of o200k_base's ordinary tokens.
const vocabularySize = 200_000

// newCounter returns a counter over vocab that leaves to codec what it
// does not count itself.
func newCounter(vocab *vocabulary, codec func() (tokenizer.Codec, error)) *counter {
	return &counter{vocab: vocab, codec: codec}
}

// count returns the number of tokens in s.
func (c *counter) count(s string) (int, error) {
	if !utf8.ValidString(s) {
		return c.codecCount(s)
	}
	// Text repeats its pieces (keywords, indentation, punctuation): the
	// counts of the latest ones are kept in a small table that stays in
	// the processor's cache, where the vocabulary's does not. A piece is
	// known there by its first eight bytes, read at once, and its length;
	// a longer one is compared in full as well.
	var recent [recentSize]struct {
		head  uint64
		size  int32
		n     int32
		piece string
	}
	n := 0
	for i := 0; i < len(s); {
		if s[i] == 0x7f {
			i++ // the codec's pattern matches no piece at DEL and skips it
			continue
		}
		k := pieceAt(s, i)
		piece := s[i : i+k]
		if k >= mergeLimit {
			i += k
			m, err := c.codecCount(piece)
			if err != nil {
				return 0, err
			}
			n += m
			continue
		}
		head := headOf(s, i, k)
		i += k
		r := &recent[recentSlot(head, k)]
		if r.head != head || int(r.size) != k || k > 8 && r.piece != piece {
			r.head, r.size, r.piece, r.n = head, int32(k), piece, 1
			if !c.known(piece) {
				r.n = int32(c.mergeCount(piece))
			}
		}
		n += int(r.n)
	}
	return n, nil
}

// recentSize is the number of pieces whose counts count keeps at hand.
const recentSize = 512

// headOf returns the first bytes, up to eight, of the piece s[i:i+k], in
// the low bytes of a word and the rest zero.
func headOf(s string, i, k int) uint64 {
	if i+8 <= len(s) {
		h := binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))
		if k < 8 {
			h &= 1<<(8*k) - 1
		}
		return h
	}
	var h uint64
	for j := min(k, 8) - 1; j >= 0; j-- {
		h = h<<8 | uint64(s[i+j])
	}
	return h
}

// recentSlot picks a piece's place among the recent ones, from its first
// bytes and its length.
func recentSlot(head uint64, k int) int {
	h := (head ^ uint64(k)<<59) * 0x9e3779b97f4a7c15
	return int(h >> (64 - 9))
}

// codecCount counts s with the codec.
func (c *counter) codecCount(s string) (int, error) {
	codec, err := c.codec()
	if err != nil {
		return 0, err
	}
	return codec.Count(s)
}

func (c *counter) known(piece string) bool {
	_, ok := c.vocab.rank(piece)
	return ok
}

// mergeCount is the number of tokens byte-pair merging makes of piece: it
// repeatedly merges the leftmost adjacent pair of parts whose union has the
// lowest rank, as the codec does, until no union is a token.
func (c *counter) mergeCount(piece string) int {
	type part struct {
		offset int
		rank   uint32
	}
	var buf [stackParts + 1]part
	parts := buf[:0]
	if len(piece) > stackParts {
		parts = make([]part, 0, len(piece)+1)
	}
	parts = parts[:len(piece)+1]
	for i := range parts {
		parts[i].offset, parts[i].rank = i, math.MaxUint32
	}
	rank := func(i, skip int) uint32 {
		if i+skip+2 < len(parts) {
			if r, ok := c.vocab.rank(piece[parts[i].offset:parts[i+skip+2].offset]); ok {
				return r
			}
		}
		return math.MaxUint32
	}
	for i := 0; i < len(parts)-2; i++ {
		parts[i].rank = rank(i, 0)
	}
	for len(parts) > 1 {
		least, at := uint32(math.MaxUint32), 0
		for i, p := range parts[:len(parts)-1] {
			if p.rank < least {
				least, at = p.rank, i
			}
		}
		if least == math.MaxUint32 {
			break
		}
		parts[at].rank = rank(at, 1)
		if at > 0 {
			parts[at-1].rank = rank(at-1, 1)
		}
		parts = append(parts[:at+1], parts[at+2:]...)
	}
	return len(parts) - 1
}

// pieceAt returns the length in bytes of the piece that starts at s[i],
// per o200k_base's pattern, whose alternatives are tried in order:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	\p{N}{1,3}
//	 ?[^\s\p{L}\p{N}]+[\r\n/]*
//	\s*[\r\n]+
//	\s+(?!\S)
//	\s+
//
// s must be valid UTF-8, and s[i] not DEL. The result is at least one
// character.
func pieceAt(s string, i int) int {
	if e := asciiPieceAt(s, i); e > 0 {
		return e - i
	}
	return runePieceAt(s, i)
}

// runePieceAt is pieceAt rune by rune, for any text.
func runePieceAt(s string, i int) int {
	r, size := utf8.DecodeRuneInString(s[i:])
	if isPrefix(r) {
		if e := upperThenLower(s, i+size); e > 0 {
			return e - i
		}
	}
	if e := upperThenLower(s, i); e > 0 {
		return e - i
	}
	if isPrefix(r) {
		if e := upperRun(s, i+size); e > 0 {
			return e - i
		}
	}
	if e := upperRun(s, i); e > 0 {
		return e - i
	}
	if isNumber(r) {
		e := i + size
		for k := 1; k < 3 && e < len(s); k++ {
			r, n := utf8.DecodeRuneInString(s[e:])
			if !isNumber(r) {
				break
			}
			e += n
		}
		return e - i
	}
	if j := i; isOther(r) || r == ' ' && j+1 < len(s) && isOther(runeAt(s, j+1)) {
		if r == ' ' {
			j++
		}
		e := scan(s, j, classOther)
		for e < len(s) && (s[e] == '\r' || s[e] == '\n' || s[e] == '/') {
			e++
		}
		return e - i
	}
	// White space. \s*[\r\n]+ takes it up to the end of the run of line
	// breaks that starts at its first line break: the codec's compiled
	// pattern, backtracking from the end of the white space, jumps to the
	// first line break, not the last, and this follows it. Without a line
	// break: all of it but its last character when something other than
	// space follows, or all of it.
	w := scan(s, i, classSpace)
	if k := strings.IndexAny(s[i:w], "\r\n"); k >= 0 {
		e := i + k
		for e < w && (s[e] == '\r' || s[e] == '\n') {
			e++
		}
		return e - i
	}
	if w == len(s) {
		return w - i
	}
	if _, n := utf8.DecodeLastRuneInString(s[i:w]); w-n > i {
		return w - n - i
	}
	return w - i
}

// asciiPieceAt is pieceAt for the common case of a piece of ASCII
// characters and the few punctuation marks and symbols symbolWidth knows
// (the fence's gutter starts every line of material): it returns where the
// piece at s[i] ends, byte by byte through asciiClass, or 0 when a
// character it would have to classify is another one (a letter, mark,
// number or space could continue the run there), which pieceAt then
// decides rune by rune. Both read the pattern the same way: a prefix
// character before a letter starts a word, a word is its upper-case run
// then its lower-case run (no ASCII character is both) and a
// contraction, a number is at most three digits, punctuation runs to its
// line breaks and slashes, and white space is split as pieceAt's last
// step says.
func asciiPieceAt(s string, i int) int {
	at := func(k int) uint8 {
		if k >= len(s) {
			return 0
		}
		if c := asciiClass[s[k]]; c != aHigh || symbolWidth(s, k) == 0 {
			return c
		}
		return aOther | aPrefix
	}
	// width is the size of the character at s[k], of a class at knows.
	width := func(k int) int {
		if s[k] < utf8.RuneSelf {
			return 1
		}
		return symbolWidth(s, k)
	}
	c := at(i)
	if c == aHigh {
		return 0
	}
	j := i
	if c&aPrefix != 0 {
		switch next := at(i + width(i)); {
		case next == aHigh:
			return 0
		case next&(aUpper|aLower) != 0:
			j = i + width(i)
		}
	}
	switch cj := at(j); {
	case cj&(aUpper|aLower) != 0:
		// No character symbolWidth knows is a letter, digit or space, so
		// the runs of those are read from the table alone.
		u := j
		for u < len(s) && asciiClass[s[u]]&aUpper != 0 {
			u++
		}
		l := u
		for l < len(s) && asciiClass[s[l]]&aLower != 0 {
			l++
		}
		if at(l) == aHigh {
			return 0
		}
		return contraction(s, l)
	case c&aNumber != 0:
		e := i + 1
		for k := 1; k < 3 && e < len(s) && asciiClass[s[e]]&aNumber != 0; k++ {
			e++
		}
		if e-i < 3 && at(e) == aHigh {
			return 0
		}
		return e
	}
	if o := i + btoi(s[i] == ' '); at(o)&aOther != 0 {
		e := o
		for at(e)&aOther != 0 {
			e += width(e)
		}
		if at(e) == aHigh {
			return 0
		}
		for e < len(s) && (s[e] == '\r' || s[e] == '\n' || s[e] == '/') {
			e++
		}
		return e
	}
	if c&aSpace == 0 {
		return 0
	}
	w, br := i, -1 // br: the first line break of the run
	for w < len(s) && asciiClass[s[w]]&aSpace != 0 {
		if br < 0 && (s[w] == '\r' || s[w] == '\n') {
			br = w
		}
		w++
	}
	if at(w) == aHigh {
		return 0
	}
	if br >= 0 {
		e := br
		for e < w && (s[e] == '\r' || s[e] == '\n') {
			e++
		}
		return e
	}
	if w == len(s) || w-1 == i {
		return w
	}
	return w - 1
}

// symbolWidth returns the size in bytes of the character at s[k] when it
// is one of the punctuation marks and symbols common in sot's prompts
// that the pattern reads like ASCII punctuation (neither letter, mark,
// number nor space): the fence's gutter │ (U+2502), the dashes, quotes,
// bullets and ellipsis of U+2010 to U+2027, and the arrows U+2190 to
// U+21FF. Otherwise it returns 0.
func symbolWidth(s string, k int) int {
	if k+2 >= len(s) || s[k] != 0xe2 {
		return 0
	}
	switch b, c := s[k+1], s[k+2]; {
	case b == 0x94 && c == 0x82: // U+2502
		return 3
	case b == 0x80 && 0x90 <= c && c <= 0xa7: // U+2010 to U+2027
		return 3
	case b == 0x86 && 0x90 <= c && c <= 0xbf, b == 0x87 && 0x80 <= c && c <= 0xbf: // U+2190 to U+21FF
		return 3
	}
	return 0
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The classes of asciiPieceAt, by byte: those of pieceAt's functions for
// each ASCII character, aHigh alone for every byte of a longer one. DEL,
// in no class, is 0.
const (
	aUpper  = 1 << iota // isUpper
	aLower              // isLower
	aNumber             // isNumber
	aSpace              // unicode.IsSpace
	aOther              // isOther
	aPrefix             // isPrefix
	aHigh               // not ASCII
)

var asciiClass = func() (t [256]uint8) {
	for c := range t {
		if c >= utf8.RuneSelf {
			t[c] = aHigh
			continue
		}
		r := rune(c)
		for _, k := range []struct {
			in  func(rune) bool
			bit uint8
		}{{isUpper, aUpper}, {isLower, aLower}, {isNumber, aNumber}, {unicode.IsSpace, aSpace}, {isOther, aOther}, {isPrefix, aPrefix}} {
			if k.in(r) {
				t[c] |= k.bit
			}
		}
	}
	return t
}()

// upperThenLower matches [U]*[L]+ and a contraction at s[j:], where U is
// Lu, Lt, Lm, Lo or M and L is Ll, Lm, Lo or M, and returns where the match
// ends, or 0. Like the pattern, it takes as many U as it can, then gives
// them back one by one until an L follows.
func upperThenLower(s string, j int) int {
	u := scan(s, j, classUpper)
	for k := u; ; {
		if k < len(s) {
			if r, _ := utf8.DecodeRuneInString(s[k:]); isLower(r) {
				return contraction(s, scan(s, k, classLower))
			}
		}
		if k == j {
			return 0
		}
		_, n := utf8.DecodeLastRuneInString(s[j:k])
		k -= n
	}
}

// upperRun matches [U]+[L]* and a contraction at s[j:], or returns 0.
func upperRun(s string, j int) int {
	u := scan(s, j, classUpper)
	if u == j {
		return 0
	}
	return contraction(s, scan(s, u, classLower))
}

// contraction returns the end of (?i:'s|'t|'re|'ve|'m|'ll|'d) at s[e:], or e.
func contraction(s string, e int) int {
	if e+1 >= len(s) || s[e] != '\'' {
		return e
	}
	lower := func(k int) byte {
		if k < len(s) {
			return s[k] | 0x20
		}
		return 0
	}
	switch lower(e + 1) {
	case 's', 't', 'm', 'd':
		return e + 2
	case 'r', 'v':
		if lower(e+2) == 'e' {
			return e + 3
		}
	case 'l':
		if lower(e+2) == 'l' {
			return e + 3
		}
	}
	// The long s, ſ, is an s to case-insensitive matching.
	if r, n := utf8.DecodeRuneInString(s[e+1:]); r == 'ſ' {
		return e + 1 + n
	}
	return e
}

// scan returns the end of the run of characters in class from s[j:].
// ASCII characters are looked up in a table, others tested by the class's
// function.
func scan(s string, j int, class charClass) int {
	in := &asciiIn[class]
	for j < len(s) {
		if c := s[j]; c < utf8.RuneSelf {
			if !in[c] {
				break
			}
			j++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[j:])
		if !classes[class](r) {
			break
		}
		j += n
	}
	return j
}

// charClass names one of the classes that scan runs over.
type charClass uint8

const (
	classUpper charClass = iota // isUpper
	classLower                  // isLower
	classOther                  // isOther
	classSpace                  // unicode.IsSpace
)

var classes = [...]func(rune) bool{classUpper: isUpper, classLower: isLower, classOther: isOther, classSpace: unicode.IsSpace}

// asciiIn tells, for each class, which ASCII characters are in it.
var asciiIn = func() (t [len(classes)][utf8.RuneSelf]bool) {
	for k, in := range classes {
		for r := range rune(utf8.RuneSelf) {
			t[k][r] = in(r)
		}
	}
	return t
}()

func runeAt(s string, i int) rune {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r
}

// Character classes, with the ASCII range decided by table.
const (
	cLetterUpper = 1 << iota // Lu
	cLetterLower             // Ll
	cNumber                  // N
	cSpace                   // unicode.IsSpace
	// cNone marks DEL, which the codec's compiled pattern leaves out of
	// [^\r\n\p{L}\p{N}] and [^\s\p{L}\p{N}] (its ASCII bitmaps stop at
	// 126): no piece holds it.
	cNone
)

var ascii = func() (t [128]uint8) {
	for r := range rune(128) {
		switch {
		case unicode.IsUpper(r):
			t[r] = cLetterUpper
		case unicode.IsLower(r):
			t[r] = cLetterLower
		case unicode.IsNumber(r):
			t[r] = cNumber
		case unicode.IsSpace(r):
			t[r] = cSpace
		case r == 0x7f:
			t[r] = cNone
		}
	}
	return t
}()

// isPrefix: [^\r\n\p{L}\p{N}].
func isPrefix(r rune) bool {
	if r < 128 {
		return r != '\r' && r != '\n' && ascii[r]&(cLetterUpper|cLetterLower|cNumber|cNone) == 0
	}
	return !unicode.IsLetter(r) && !unicode.IsNumber(r)
}

// isUpper: [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}].
func isUpper(r rune) bool {
	if r < 128 {
		return ascii[r]&cLetterUpper != 0
	}
	return unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M)
}

// isLower: [\p{Ll}\p{Lm}\p{Lo}\p{M}].
func isLower(r rune) bool {
	if r < 128 {
		return ascii[r]&cLetterLower != 0
	}
	return unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M)
}

// isNumber: \p{N}.
func isNumber(r rune) bool {
	if r < 128 {
		return ascii[r]&cNumber != 0
	}
	return unicode.IsNumber(r)
}

// isOther: [^\s\p{L}\p{N}].
func isOther(r rune) bool {
	if r < 128 {
		return ascii[r] == 0
	}
	return !unicode.IsSpace(r) && !unicode.IsLetter(r) && !unicode.IsNumber(r)
}
