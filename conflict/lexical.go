package conflict

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultThreshold is the similarity at and above which [Detect] takes two
// answers for an agreement whatever their markers say. It is the default of
// northstar's ConflictDetector; northstar's app constructs its detector
// with 0.6.
const DefaultThreshold = 0.75

// ExcerptLength is how many characters (runes) of an answer an excerpt
// keeps at most, before the "..." that marks a cut inside a sentence.
const ExcerptLength = 150

// MaxThemes is how many conflict themes an [Analysis] names at most.
const MaxThemes = 5

// The types of a [Pair].
const (
	TypeConflict  = "conflict"
	TypeAgreement = "agreement"
)

// Response is one perspective's answer, in northstar's shape.
type Response struct {
	// Response is the answer's text.
	Response string `json:"response"`
	// AgentName names where the answer comes from (a source, an agent).
	// Empty, it is "Source N", N being the answer's place in the input
	// from 1.
	AgentName string `json:"agentName"`
	// Perspective is the role that answered (Analyst, Critic, ...).
	// Empty, it is "Default".
	Perspective string `json:"perspective"`
}

// UnmarshalJSON reads a Response whose perspective is a string, null, or
// northstar's perspective object, whose roleLabel it takes.
func (r *Response) UnmarshalJSON(b []byte) error {
	var raw struct {
		Response    string          `json:"response"`
		AgentName   string          `json:"agentName"`
		Perspective json.RawMessage `json:"perspective"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*r = Response{Response: raw.Response, AgentName: raw.AgentName}
	p := strings.TrimSpace(string(raw.Perspective))
	switch {
	case p == "" || p == "null":
	case p[0] == '"':
		return json.Unmarshal(raw.Perspective, &r.Perspective)
	case p[0] == '{':
		var obj struct {
			RoleLabel string `json:"roleLabel"`
		}
		if err := json.Unmarshal(raw.Perspective, &obj); err != nil {
			return fmt.Errorf("perspective: %w", err)
		}
		r.Perspective = obj.RoleLabel
	default:
		return fmt.Errorf("perspective is %s; want a string or an object with a roleLabel", p)
	}
	return nil
}

// Analysis is what [Detect] found, in northstar's shape, with the lists
// of pairs bounded: the counts, the themes and the summary are over every
// pair, the lists hold the strongest.
type Analysis struct {
	// HasConflicts reports whether any pair is a conflict.
	HasConflicts bool `json:"hasConflicts"`
	// Conflicts and Agreements are the strongest pairs of each type, at
	// most Options.Keep of each, in the order of the input: (1,2), (1,3),
	// ..., (2,3), ... Neutral pairs, and pairs with an empty answer, are in
	// neither.
	Conflicts  []Pair `json:"conflicts"`
	Agreements []Pair `json:"agreements"`
	// TotalConflicts and TotalAgreements count every pair of each type,
	// listed or not.
	TotalConflicts  int `json:"totalConflicts"`
	TotalAgreements int `json:"totalAgreements"`
	// Truncated reports whether a list holds fewer pairs than its total.
	Truncated bool `json:"truncated"`
	// ConflictThemes are the words that occur most often in the excerpts
	// of all the conflicts, most frequent first, at most MaxThemes.
	ConflictThemes []string `json:"conflictThemes"`
	// Summary counts the tensions and the points of agreement, such as
	// "2 tension(s) detected; 3 point(s) of agreement". A count of zero is
	// left out; with neither, Summary is empty.
	Summary string `json:"summary"`
}

// DefaultKeep is how many pairs of each type an [Analysis] lists unless
// told otherwise: enough to read, and a size that does not grow with the
// square of the answers.
const DefaultKeep = 200

// Options tune [Detect].
type Options struct {
	// Threshold is the similarity at and above which two answers agree
	// whatever their markers say (see DefaultThreshold).
	Threshold float64
	// Keep is how many pairs of each type the Analysis lists: those of the
	// highest confidence, the earlier in the input first among equals. 0
	// lists none; the totals count them all the same.
	Keep int
	// Each, when not nil, receives every conflict and agreement as it is
	// found, in the order of the input; an error it returns stops Detect.
	// [NDJSON] makes one that writes them to a file.
	Each func(Pair) error
}

// Pair is the comparison of two answers.
type Pair struct {
	// Type is TypeConflict or TypeAgreement.
	Type string `json:"type"`
	// Confidence is min(1, 0.5 + 0.1 × ConflictScore) for a conflict and
	// min(1, 0.5 + 0.1 × AgreementScore + 0.3 × Similarity) for an
	// agreement.
	Confidence float64 `json:"confidence"`
	// Source1 is the answer that comes first in the input.
	Source1 Source `json:"source1"`
	Source2 Source `json:"source2"`
	// Similarity is the Jaccard index of the two answers' sets of words:
	// lowercased, split at white space, longer than three characters,
	// punctuation included. It is 0 when either set is empty.
	Similarity float64 `json:"similarity"`
	// ConflictScore and AgreementScore are the conflict and agreement
	// markers of both answers together.
	ConflictScore  int `json:"conflictScore"`
	AgreementScore int `json:"agreementScore"`
}

// Source is one side of a [Pair].
type Source struct {
	AgentName   string `json:"agentName"`
	Perspective string `json:"perspective"`
	// Excerpt is the answer without surrounding white space, cut to
	// ExcerptLength runes: at the last period of the cut when that keeps
	// more than half of it, else with "..." appended.
	Excerpt string `json:"excerpt"`
	// Index is the answer's place in the input, from 0.
	Index int `json:"-"`
}

// The seed's markers, lowercase. A marker of several words is a phrase.
var (
	conflictMarkers = []string{
		"however", "but", "although", "despite", "contrary",
		"disagree", "conflict", "tension", "risk", "concern",
		"alternatively", "on the other hand", "versus", "vs",
		"challenge", "issue", "problem", "limitation", "obstacle",
		"whereas", "unlike", "contrast", "differ", "instead",
	}
	agreementMarkers = []string{
		"also", "similarly", "agrees", "confirms", "supports",
		"consistent", "aligns", "reinforces", "validates",
		"likewise", "as well", "in line with", "corroborates",
		"echoes", "mirrors", "matches", "concurs",
	}
)

// ConflictMarkers returns the 24 words and phrases that signal
// disagreement.
func ConflictMarkers() []string { return slices.Clone(conflictMarkers) }

// AgreementMarkers returns the 17 words and phrases that signal agreement.
func AgreementMarkers() []string { return slices.Clone(agreementMarkers) }

// stopWords are left out of the conflict themes. Those of four letters
// could never be a theme; they are kept to keep northstar's list whole.
var stopWords = map[string]bool{
	"that": true, "this": true, "with": true, "from": true, "have": true, "been": true,
	"were": true, "their": true, "would": true, "could": true, "should": true, "about": true,
	"which": true, "there": true, "these": true, "those": true, "being": true, "other": true,
	"meeting": true, "discussed": true, "mentioned": true, "noted": true, "stated": true,
	"regarding": true, "related": true, "based": true, "according": true, "following": true,
}

// Detect compares every pair of answers as northstar's ConflictDetector
// does. For each pair it adds up the conflict markers and the agreement
// markers of both answers (each marker a whole word or phrase, in any case,
// every occurrence) and measures their Similarity. The pair is a conflict
// when it has more conflict than agreement markers and its similarity is
// below the threshold; otherwise it is an agreement when it has more
// agreement than conflict markers or its similarity is at or above the
// threshold; otherwise it is neutral and left out. A pair in which either
// answer is empty or white space is left out too. With fewer than two
// answers there is no pair and the Analysis is empty.
//
// The pairs are compared one at a time and not kept: the Analysis lists
// the o.Keep strongest of each type and counts all of them, and o.Each
// sees every one, in the order of the input and on the goroutine that
// called Detect. What Detect holds grows with the answers and o.Keep,
// never with the number of pairs. Each answer is read once; the words two
// answers share are counted on every processor at once, a window of rows
// of the triangle at a time, and the pairs are then classified in order,
// so the outcome does not depend on how many processors there are. The
// error is o.Each's.
//
// The threshold is meant to lie in [0, 1]: at 0 every pair that is not
// left out is an agreement; at 1 only answers with the same set of words
// are similar enough to agree without markers. A NaN threshold makes no
// pair similar enough, nor dissimilar enough to conflict.
func Detect(rs []Response, o Options) (Analysis, error) {
	a := Analysis{Conflicts: []Pair{}, Agreements: []Pair{}, ConflictThemes: []string{}}
	if len(rs) < 2 {
		return a, nil
	}
	c := readAll(rs)
	keep := max(o.Keep, 0)
	conflicts, agreements := strongest{keep: keep}, strongest{keep: keep}
	th := newThemes(c.answers)
	err := c.eachRow(func(i int, shared []int32) error {
		x := &c.answers[i]
		for d, both := range shared {
			j := i + 1 + d
			y := &c.answers[j]
			if y.empty {
				continue
			}
			cs, as := x.conflicts+y.conflicts, x.agrees+y.agrees
			sim := jaccard(len(x.words), len(y.words), int(both))
			typ, conf, ok := classify(cs, as, sim, o.Threshold)
			if !ok {
				continue
			}
			kept := &agreements
			if typ == TypeConflict {
				a.TotalConflicts++
				kept = &conflicts
				th.add(i, j)
			} else {
				a.TotalAgreements++
			}
			if o.Each == nil && !kept.admits(conf, i, j) {
				continue
			}
			p := Pair{Type: typ, Confidence: conf, Source1: x.source, Source2: y.source,
				Similarity: sim, ConflictScore: cs, AgreementScore: as}
			kept.offer(p)
			if o.Each != nil {
				if err := o.Each(p); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return Analysis{}, err
	}
	a.Conflicts, a.Agreements = conflicts.list(), agreements.list()
	a.HasConflicts = a.TotalConflicts > 0
	a.Truncated = len(a.Conflicts) < a.TotalConflicts || len(a.Agreements) < a.TotalAgreements
	a.ConflictThemes = th.top()
	a.Summary = summary(a.TotalConflicts, a.TotalAgreements)
	return a, nil
}

// NDJSON returns an Options.Each that writes every pair to w as one line
// of JSON, a [Pair] in the shape of the Analysis's lists, byte for byte
// as encoding/json writes it with HTML left unescaped. Each answer's
// source is encoded once, the first time it is written, however many
// pairs it is in. The caller buffers w when it is a file.
func NDJSON(w io.Writer) func(Pair) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	var sources []encodedSource // by Source.Index
	var line []byte
	source := func(s Source) ([]byte, bool) {
		if s.Index < 0 || s.Index >= maxCachedSources {
			return nil, false
		}
		if s.Index >= len(sources) {
			sources = append(sources, make([]encodedSource, s.Index+1-len(sources))...)
		}
		c := &sources[s.Index]
		if c.json == nil || c.source != s {
			b, err := marshalNoHTML(s)
			if err != nil {
				return nil, false
			}
			*c = encodedSource{source: s, json: b}
		}
		return c.json, true
	}
	return func(p Pair) error {
		s1, ok1 := source(p.Source1)
		s2, ok2 := source(p.Source2)
		if !ok1 || !ok2 || (p.Type != TypeConflict && p.Type != TypeAgreement) || !finite(p.Confidence) || !finite(p.Similarity) {
			if err := enc.Encode(p); err != nil {
				return fmt.Errorf("writing a pair: %w", err)
			}
			return nil
		}
		line = append(line[:0], `{"type":"`...)
		line = append(line, p.Type...)
		line = append(line, `","confidence":`...)
		line = appendFloat(line, p.Confidence)
		line = append(line, `,"source1":`...)
		line = append(line, s1...)
		line = append(line, `,"source2":`...)
		line = append(line, s2...)
		line = append(line, `,"similarity":`...)
		line = appendFloat(line, p.Similarity)
		line = append(line, `,"conflictScore":`...)
		line = strconv.AppendInt(line, int64(p.ConflictScore), 10)
		line = append(line, `,"agreementScore":`...)
		line = strconv.AppendInt(line, int64(p.AgreementScore), 10)
		line = append(line, "}\n"...)
		if _, err := w.Write(line); err != nil {
			return fmt.Errorf("writing a pair: %w", err)
		}
		return nil
	}
}

// maxCachedSources bounds the sources NDJSON keeps encoded; a source of a
// later place in the input is encoded with its every pair.
const maxCachedSources = 1 << 16

// encodedSource is a Source and its JSON.
type encodedSource struct {
	source Source
	json   []byte
}

// marshalNoHTML encodes v as json.Encoder does with HTML left unescaped,
// without the newline.
func marshalNoHTML(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// appendFloat appends f as encoding/json writes a float64: the shortest
// decimal that reads back as f, in exponent form below 1e-6 and from 1e21
// on, with an exponent of one digit written without its leading zero.
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// strongest keeps the keep strongest pairs offered to it in a heap whose
// root is the weakest kept. Pairs are offered in the order of the input,
// so a pair no stronger than the weakest kept is later in the input and
// loses the tie.
type strongest struct {
	keep  int
	pairs []Pair
}

// weaker orders pairs by confidence, then the later in the input as the
// weaker.
func weaker(x, y *Pair) bool {
	if x.Confidence != y.Confidence {
		return x.Confidence < y.Confidence
	}
	return inputOrder(x, y) > 0
}

// inputOrder compares two pairs by their places in the input.
func inputOrder(x, y *Pair) int {
	if c := x.Source1.Index - y.Source1.Index; c != 0 {
		return c
	}
	return x.Source2.Index - y.Source2.Index
}

// admits reports whether a pair of confidence c between the answers i and
// j would be kept if it were offered now: the test before a Pair is built.
func (s *strongest) admits(c float64, i, j int) bool {
	switch {
	case s.keep == 0:
		return false
	case len(s.pairs) < s.keep:
		return true
	}
	w := &s.pairs[0]
	if w.Confidence != c {
		return w.Confidence < c
	}
	return w.Source1.Index > i || (w.Source1.Index == i && w.Source2.Index > j)
}

func (s *strongest) offer(p Pair) {
	switch {
	case s.keep == 0:
	case len(s.pairs) < s.keep:
		s.pairs = append(s.pairs, p)
		s.up(len(s.pairs) - 1)
	case weaker(&s.pairs[0], &p):
		s.pairs[0] = p
		s.down(0)
	}
}

func (s *strongest) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !weaker(&s.pairs[i], &s.pairs[parent]) {
			return
		}
		s.pairs[i], s.pairs[parent] = s.pairs[parent], s.pairs[i]
		i = parent
	}
}

func (s *strongest) down(i int) {
	for {
		least := i
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < len(s.pairs) && weaker(&s.pairs[c], &s.pairs[least]) {
				least = c
			}
		}
		if least == i {
			return
		}
		s.pairs[i], s.pairs[least] = s.pairs[least], s.pairs[i]
		i = least
	}
}

// list returns the pairs kept, in the order of the input.
func (s *strongest) list() []Pair {
	out := append([]Pair{}, s.pairs...)
	slices.SortFunc(out, func(x, y Pair) int { return inputOrder(&x, &y) })
	return out
}

// classify applies the seed's rules to a pair with cs conflict and as
// agreement markers and similarity sim; ok is false for a neutral pair.
func classify(cs, as int, sim, threshold float64) (typ string, confidence float64, ok bool) {
	// The products are converted explicitly so that no platform fuses
	// them with the sums: the figures are northstar's to the last bit.
	switch {
	case cs > as && sim < threshold:
		return TypeConflict, math.Min(1, 0.5+float64(float64(cs)*0.1)), true
	case as > cs || sim >= threshold:
		c := 0.5 + float64(float64(as)*0.1)
		c += float64(sim * 0.3)
		return TypeAgreement, math.Min(1, c), true
	}
	return "", 0, false
}

// jaccard is |a ∩ b| / |a ∪ b| for sets of sizes a and b that share both
// members, and 0 when either set is empty.
func jaccard(a, b, both int) float64 {
	if a == 0 || b == 0 {
		return 0
	}
	return float64(both) / float64(a+b-both)
}

// isWordRune reports whether r belongs to a word: a letter, a combining
// mark, a digit or an underscore. Markers match whole words only, so "but"
// is not found in "button", "but_x" or "butée", nor "risk" in "risks";
// anything else (white space, punctuation, a hyphen, an apostrophe) ends a
// word, so "risk-free" and "but," hold a marker.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r)
}

// nextWord returns the byte offsets of the first word of s that starts at
// or after from: a maximal run of word runes. start is -1 when there is
// none.
func nextWord(s string, from int) (start, end int) {
	start = -1
	for i, r := range s[from:] {
		switch w := isWordRune(r); {
		case w && start < 0:
			start = from + i
		case !w && start >= 0:
			return start, from + i
		}
	}
	if start < 0 {
		return -1, -1
	}
	return start, len(s)
}

// marker is one of the seed's markers, split into its words.
type marker struct {
	id       int // its place among all the markers
	parts    []string
	conflict bool
}

// markerStarts holds every marker under its first word, so that a text's
// words are read once however many markers there are.
var markerStarts = func() map[string][]marker {
	m := map[string][]marker{}
	id := 0
	add := func(list []string, conflict bool) {
		for _, s := range list {
			parts := strings.Fields(s)
			m[parts[0]] = append(m[parts[0]], marker{id: id, parts: parts, conflict: conflict})
			id++
		}
	}
	add(conflictMarkers, true)
	add(agreementMarkers, false)
	return m
}()

// countMarkers counts every occurrence of every conflict and every
// agreement marker among the words of the lowercase text s. The words of a
// phrase must follow each other with only white space between them. Two
// occurrences of the same marker do not overlap: the search for it goes
// on after the end of the last one found.
func countMarkers(s string) (conflicts, agrees int) {
	var next []int // next[id]: the word at which the marker id may next start
	for i, start, end := 0, 0, 0; ; i++ {
		if start, end = nextWord(s, end); start < 0 {
			return conflicts, agrees
		}
		for _, m := range markerStarts[s[start:end]] {
			if next == nil {
				next = make([]int, len(conflictMarkers)+len(agreementMarkers))
			}
			if i < next[m.id] || !phraseAt(s, end, m.parts[1:]) {
				continue
			}
			next[m.id] = i + len(m.parts)
			if m.conflict {
				conflicts++
			} else {
				agrees++
			}
		}
	}
}

// phraseAt reports whether the words of s after the byte offset from are
// parts, each separated from the one before by white space only.
func phraseAt(s string, from int, parts []string) bool {
	for _, p := range parts {
		start, end := nextWord(s, from)
		if start < 0 || s[start:end] != p || strings.TrimFunc(s[from:start], unicode.IsSpace) != "" {
			return false
		}
		from = end
	}
	return true
}

// excerpt trims s and cuts it to ExcerptLength runes, at the last period
// when that keeps more than half of them. Only the runes it keeps are
// decoded; a byte that is not UTF-8 among them becomes U+FFFD.
func excerpt(s string) string {
	t := strings.TrimSpace(s)
	var head [ExcerptLength]rune
	n := 0
	for _, r := range t {
		if n == ExcerptLength {
			for i := n - 1; i > ExcerptLength/2; i-- {
				if head[i] == '.' {
					return string(head[:i+1])
				}
			}
			return string(head[:]) + "..."
		}
		head[n] = r
		n++
	}
	return t
}

// themes finds the most frequent words of the conflicts' excerpts without
// keeping the conflicts: words of more than four characters, lowercased,
// kept to their letters, still longer than four letters and not stop
// words. Ties keep the order in which the words first appear when the
// conflicts' excerpts are read in the order of the input, each pair's
// first answer before its second. As an answer's excerpt is the same in
// every pair, it is enough to know its words, how many conflicts it is in,
// and when it first appears in one.
type themes struct {
	words [][]string // each answer's theme words, in order, repeated
	in    []int      // the conflicts each answer is in
	order []string   // the words in the order they first appear
	seen  map[string]bool
}

func newThemes(as []answer) *themes {
	t := &themes{words: make([][]string, len(as)), in: make([]int, len(as)), seen: map[string]bool{}}
	for i := range as {
		t.words[i] = as[i].themes
	}
	return t
}

// add counts the conflict between the answers i and j.
func (t *themes) add(i, j int) {
	for _, k := range []int{i, j} {
		if t.in[k] == 0 {
			for _, w := range t.words[k] {
				if !t.seen[w] {
					t.seen[w] = true
					t.order = append(t.order, w)
				}
			}
		}
		t.in[k]++
	}
}

// top returns the MaxThemes most frequent words, most frequent first.
func (t *themes) top() []string {
	freq := map[string]int{}
	for k, ws := range t.words {
		for _, w := range ws {
			freq[w] += t.in[k]
		}
	}
	order := slices.Clone(t.order)
	slices.SortStableFunc(order, func(a, b string) int { return freq[b] - freq[a] })
	return append([]string{}, order[:min(len(order), MaxThemes)]...)
}

// themeWords are the words of an excerpt that may be themes, in order,
// each as often as it occurs.
func themeWords(excerpt string) []string {
	var out []string
	for _, w := range strings.Fields(strings.ToLower(excerpt)) {
		if utf8.RuneCountInString(w) <= 4 {
			continue
		}
		w = strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsMark(r) {
				return r
			}
			return -1
		}, w)
		if utf8.RuneCountInString(w) <= 4 || stopWords[w] {
			continue
		}
		out = append(out, w)
	}
	return out
}

// summary counts the tensions and the points of agreement, leaving out a
// count of zero.
func summary(conflicts, agreements int) string {
	var parts []string
	if conflicts > 0 {
		parts = append(parts, fmt.Sprintf("%d tension(s) detected", conflicts))
	}
	if agreements > 0 {
		parts = append(parts, fmt.Sprintf("%d point(s) of agreement", agreements))
	}
	return strings.Join(parts, "; ")
}
