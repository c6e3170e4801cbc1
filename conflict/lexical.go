package conflict

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
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
// sees every one. What Detect holds grows with the answers and o.Keep,
// never with the number of pairs. The error is o.Each's.
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
	as := make([]answer, len(rs))
	for i, r := range rs {
		as[i] = read(i, r)
	}
	keep := max(o.Keep, 0)
	conflicts, agreements := strongest{keep: keep}, strongest{keep: keep}
	th := newThemes(as)
	for i := range as {
		for j := i + 1; j < len(as); j++ {
			p, ok := compare(&as[i], &as[j], o.Threshold)
			if !ok {
				continue
			}
			if p.Type == TypeConflict {
				a.TotalConflicts++
				conflicts.offer(p)
				th.add(i, j)
			} else {
				a.TotalAgreements++
				agreements.offer(p)
			}
			if o.Each != nil {
				if err := o.Each(p); err != nil {
					return Analysis{}, err
				}
			}
		}
	}
	a.Conflicts, a.Agreements = conflicts.list(), agreements.list()
	a.HasConflicts = a.TotalConflicts > 0
	a.Truncated = len(a.Conflicts) < a.TotalConflicts || len(a.Agreements) < a.TotalAgreements
	a.ConflictThemes = th.top()
	a.Summary = summary(a.TotalConflicts, a.TotalAgreements)
	return a, nil
}

// NDJSON returns an Options.Each that writes every pair to w as one line
// of JSON, a [Pair] in the shape of the Analysis's lists. The caller
// buffers w when it is a file.
func NDJSON(w io.Writer) func(Pair) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return func(p Pair) error {
		if err := enc.Encode(p); err != nil {
			return fmt.Errorf("writing a pair: %w", err)
		}
		return nil
	}
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

// answer is what a comparison needs of one answer, read once.
type answer struct {
	source    Source
	empty     bool
	conflicts int
	agrees    int
	words     map[string]bool
}

func read(i int, r Response) answer {
	lower := strings.ToLower(r.Response)
	a := answer{
		source: Source{AgentName: r.AgentName, Perspective: r.Perspective, Excerpt: excerpt(r.Response), Index: i},
		empty:  strings.TrimSpace(lower) == "",
		words:  map[string]bool{},
	}
	if a.source.AgentName == "" {
		a.source.AgentName = fmt.Sprintf("Source %d", i+1)
	}
	if a.source.Perspective == "" {
		a.source.Perspective = "Default"
	}
	ws := words(lower)
	a.conflicts = countMarkers(lower, ws, conflictMarkers)
	a.agrees = countMarkers(lower, ws, agreementMarkers)
	for _, w := range strings.Fields(lower) {
		if utf8.RuneCountInString(w) > 3 {
			a.words[w] = true
		}
	}
	return a
}

// compare classifies a pair; ok is false for a neutral pair or one with an
// empty answer.
func compare(x, y *answer, threshold float64) (p Pair, ok bool) {
	if x.empty || y.empty {
		return Pair{}, false
	}
	p = Pair{
		Source1:        x.source,
		Source2:        y.source,
		Similarity:     jaccard(x.words, y.words),
		ConflictScore:  x.conflicts + y.conflicts,
		AgreementScore: x.agrees + y.agrees,
	}
	// The products are converted explicitly so that no platform fuses
	// them with the sums: the figures are northstar's to the last bit.
	switch {
	case p.ConflictScore > p.AgreementScore && p.Similarity < threshold:
		p.Type = TypeConflict
		p.Confidence = math.Min(1, 0.5+float64(float64(p.ConflictScore)*0.1))
	case p.AgreementScore > p.ConflictScore || p.Similarity >= threshold:
		p.Type = TypeAgreement
		c := 0.5 + float64(float64(p.AgreementScore)*0.1)
		c += float64(p.Similarity * 0.3)
		p.Confidence = math.Min(1, c)
	default:
		return Pair{}, false
	}
	return p, true
}

// jaccard is |a ∩ b| / |a ∪ b|, and 0 when either set is empty.
func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	both := 0
	for w := range a {
		if b[w] {
			both++
		}
	}
	return float64(both) / float64(len(a)+len(b)-both)
}

// word is a maximal run of word characters in a text, with its byte
// offsets.
type word struct {
	text       string
	start, end int
}

// isWordRune reports whether r belongs to a word: a letter, a combining
// mark, a digit or an underscore. Markers match whole words only, so "but"
// is not found in "button", "but_x" or "butée", nor "risk" in "risks";
// anything else (white space, punctuation, a hyphen, an apostrophe) ends a
// word, so "risk-free" and "but," hold a marker.
func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r)
}

func words(s string) []word {
	var ws []word
	start := -1
	for i, r := range s {
		switch {
		case isWordRune(r) && start < 0:
			start = i
		case !isWordRune(r) && start >= 0:
			ws = append(ws, word{s[start:i], start, i})
			start = -1
		}
	}
	if start >= 0 {
		ws = append(ws, word{s[start:], start, len(s)})
	}
	return ws
}

// countMarkers counts every occurrence of every marker among the words ws
// of the lowercase text s. The words of a phrase must follow each other
// with only white space between them.
func countMarkers(s string, ws []word, markers []string) int {
	n := 0
	for _, m := range markers {
		parts := strings.Fields(m)
		for i := 0; i+len(parts) <= len(ws); i++ {
			if phraseAt(s, ws[i:i+len(parts)], parts) {
				n++
				i += len(parts) - 1
			}
		}
	}
	return n
}

func phraseAt(s string, ws []word, parts []string) bool {
	for k, p := range parts {
		if ws[k].text != p {
			return false
		}
		if k > 0 && strings.TrimFunc(s[ws[k-1].end:ws[k].start], unicode.IsSpace) != "" {
			return false
		}
	}
	return true
}

// excerpt trims s and cuts it to ExcerptLength runes, at the last period
// when that keeps more than half of them.
func excerpt(s string) string {
	t := strings.TrimSpace(s)
	if utf8.RuneCountInString(t) <= ExcerptLength {
		return t
	}
	head := []rune(t)[:ExcerptLength]
	for i := len(head) - 1; i > ExcerptLength/2; i-- {
		if head[i] == '.' {
			return string(head[:i+1])
		}
	}
	return string(head) + "..."
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
		t.words[i] = themeWords(as[i].source.Excerpt)
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
