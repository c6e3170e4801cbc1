package conflict

import (
	"encoding/json"
	"fmt"
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

// Analysis is what [Detect] found, in northstar's shape.
type Analysis struct {
	// HasConflicts reports whether Conflicts has a pair.
	HasConflicts bool `json:"hasConflicts"`
	// Conflicts and Agreements are the pairs of each type, in the order of
	// the input: (1,2), (1,3), ..., (2,3), ... Neutral pairs, and pairs
	// with an empty answer, are in neither.
	Conflicts  []Pair `json:"conflicts"`
	Agreements []Pair `json:"agreements"`
	// ConflictThemes are the words that occur most often in the excerpts
	// of the conflicts, most frequent first, at most MaxThemes.
	ConflictThemes []string `json:"conflictThemes"`
	// Summary counts the tensions and the points of agreement, such as
	// "2 tension(s) detected; 3 point(s) of agreement". A count of zero is
	// left out; with neither, Summary is empty.
	Summary string `json:"summary"`
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
// below threshold; otherwise it is an agreement when it has more agreement
// than conflict markers or its similarity is at or above threshold;
// otherwise it is neutral and left out. A pair in which either answer is
// empty or white space is left out too. With fewer than two answers there
// is no pair and the Analysis is empty.
//
// threshold is meant to lie in [0, 1]: at 0 every pair that is not left out
// is an agreement; at 1 only answers with the same set of words are
// similar enough to agree without markers. A NaN threshold makes no pair
// similar enough, nor dissimilar enough to conflict.
func Detect(rs []Response, threshold float64) Analysis {
	a := Analysis{Conflicts: []Pair{}, Agreements: []Pair{}, ConflictThemes: []string{}}
	if len(rs) < 2 {
		return a
	}
	as := make([]answer, len(rs))
	for i, r := range rs {
		as[i] = read(i, r)
	}
	for i := range as {
		for j := i + 1; j < len(as); j++ {
			p, ok := compare(&as[i], &as[j], threshold)
			switch {
			case !ok:
			case p.Type == TypeConflict:
				a.Conflicts = append(a.Conflicts, p)
			default:
				a.Agreements = append(a.Agreements, p)
			}
		}
	}
	a.HasConflicts = len(a.Conflicts) > 0
	a.ConflictThemes = themes(a.Conflicts)
	a.Summary = summary(len(a.Conflicts), len(a.Agreements))
	return a
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

// themes are the most frequent words of the conflicts' excerpts: words of
// more than four characters, lowercased, kept to their letters, still
// longer than four letters and not stop words. Ties keep the order in which
// the words first appear.
func themes(conflicts []Pair) []string {
	out := []string{}
	if len(conflicts) == 0 {
		return out
	}
	var texts []string
	for _, c := range conflicts {
		texts = append(texts, c.Source1.Excerpt+" "+c.Source2.Excerpt)
	}
	freq := map[string]int{}
	var order []string
	for _, w := range strings.Fields(strings.ToLower(strings.Join(texts, " "))) {
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
		if freq[w] == 0 {
			order = append(order, w)
		}
		freq[w]++
	}
	slices.SortStableFunc(order, func(a, b string) int { return freq[b] - freq[a] })
	return append(out, order[:min(len(order), MaxThemes)]...)
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
