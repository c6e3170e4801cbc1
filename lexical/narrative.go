package lexical

import (
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/sotlabs/sot/internal/lazyre"
)

// Sentences splits text into sentences: a sentence ends at ".", "!" or
// "?" followed by a space or the end of the text, and is trimmed of
// surrounding spaces. Text after the last such end is a sentence of its
// own. Line breaks do not end a sentence: a caller flattens text to one
// line first when it should not keep them.
func Sentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		if (text[i] == '.' || text[i] == '!' || text[i] == '?') && (i+1 == len(text) || text[i+1] == ' ') {
			out = append(out, strings.TrimSpace(text[start:i+1]))
			start = i + 1
		}
	}
	if rest := strings.TrimSpace(text[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// citation is a bracketed group: "[security.1]", "[security.red-team.1,
// correctness.2]".
var citation = lazyre.New(`\[([^\[\]]*)\]`)

// Brackets reads the citations of a sentence written in square brackets
// ("[a.1]", "[a.1, b.2]", "[a.1; b.2 and c.3]"): the ids, in order, and
// the sentence with every bracketed group replaced by a space. Within a
// group, ids are separated by commas, semicolons or spaces, may be quoted
// in backticks or quotes, and may be joined by "and" or "&". It is the
// Cite of a Narrative whose ids are cited that way.
func Brackets(sentence string) (ids []string, rest string) {
	for _, m := range citation.Re().FindAllStringSubmatch(sentence, -1) {
		for _, id := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ',' || r == ';' || unicode.IsSpace(r) }) {
			id = strings.Trim(id, "`'\"")
			if id == "" || strings.EqualFold(id, "and") || id == "&" {
				continue
			}
			ids = append(ids, id)
		}
	}
	return ids, citation.Re().ReplaceAllString(sentence, " ")
}

// Narrative checks the sentences of a narrative written about sources (the
// findings of a review, the claims of a debate): a sentence stands when it
// cites at least one source, every id it cites is a source, and what it
// says comes from the sources it cites.
type Narrative struct {
	// Cite reads a sentence's citations: the ids it cites, in order, and
	// the sentence without them. Brackets reads ids in square brackets.
	Cite func(sentence string) (ids []string, rest string)
	// Sources holds the texts of every id a sentence may cite.
	Sources map[string][]string
	// Vocabulary holds the words a sentence may use without its sources
	// saying them: words about the narrative itself (who said what, how it
	// matters). They are compared as PolarWords gives them, without the
	// Negated prefix.
	Vocabulary Set
}

// Flaw is what keeps a sentence of a narrative from standing on its
// sources.
type Flaw int

// Flaws of a narrative sentence, in the order Narrative.Check looks for
// them.
const (
	// NoFlaw: the sentence stands.
	NoFlaw Flaw = iota
	// Uncited: the sentence cites no id.
	Uncited
	// UnknownID: the sentence cites an id that is not a source.
	UnknownID
	// Contradicts: the sentence reverses the polarity of a word of the
	// sources it cites.
	Contradicts
	// Unsupported: fewer than SentenceSupport of its words, the
	// vocabulary set aside, come from the sources it cites.
	Unsupported
)

// Verdict is the outcome of checking one sentence of a narrative.
type Verdict struct {
	Flaw Flaw
	// Unknown is the first cited id that is not a source (UnknownID).
	Unknown string
	// Cited lists the distinct ids the sentence cites, sorted, once they
	// are all known.
	Cited []string
	// Share is the share of the sentence's words, the vocabulary set
	// aside, found in the sources it cites; Contradicted lists those words
	// whose polarity the sources reverse, sorted.
	Share        float64
	Contradicted []string
}

// Check checks one sentence: it must cite at least one id, every id it
// cites must be a source, and once the Vocabulary is set aside its words
// must contradict none of the polarity of the sources it cites, and at
// least SentenceSupport of them must come from those sources' texts. A
// sentence left with no words once the vocabulary is set aside (it only
// says who agreed) stands.
func (n Narrative) Check(sentence string) Verdict {
	ids, rest := n.Cite(sentence)
	if len(ids) == 0 {
		return Verdict{Flaw: Uncited}
	}
	var texts []string
	seen := Set{}
	for _, id := range ids {
		t, ok := n.Sources[id]
		if !ok {
			return Verdict{Flaw: UnknownID, Unknown: id}
		}
		if !seen[id] {
			seen[id] = true
			texts = append(texts, t...)
		}
	}
	v := Verdict{Cited: slices.Sorted(maps.Keys(seen))}
	ws := Set{}
	for w := range PolarWords(rest) {
		if !n.Vocabulary[strings.TrimPrefix(w, Negated)] {
			ws[w] = true
		}
	}
	if len(ws) == 0 {
		return v
	}
	v.Share, v.Contradicted = support(ws, Pool(texts...).has)
	switch {
	case len(v.Contradicted) > 0:
		v.Flaw = Contradicts
	case v.Share < SentenceSupport:
		v.Flaw = Unsupported
	}
	return v
}
