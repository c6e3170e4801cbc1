package lexical

import (
	"slices"
	"strings"
	"unicode"
)

// The grounding checks compare words with their polarity: a negation
// attaches to the next meaningful word, so "not validated" and "validated"
// differ.

// Negated prefixes a word of PolarWords that follows a negation.
const Negated = "not_"

// Thresholds of the grounding checks: the share of a text's meaningful
// words that must appear in the sources it rests on.
const (
	// ClaimSupport is for a claim that restates its sources (Grounded).
	ClaimSupport = 0.7
	// SentenceSupport is for a narrative sentence once its narrative
	// vocabulary is set aside (Narrative.Check).
	SentenceSupport = 0.5
)

// negators make the next meaningful word negative. Words ending in "n't"
// (isn't, doesn't, can't) are negators too, and so is the prefix "non"
// (non-constant); "no" joined by a hyphen (no-op) is not, and "not only"
// negates nothing.
var negators = Set{"not": true, "no": true, "never": true, "without": true, "cannot": true, "non": true}

// PolarWords returns the meaningful words of s for the grounding checks:
// lower-cased, stop words and words of two letters or fewer dropped,
// stemmed (Stem) so inflections match, and a word following a negation
// (before the next punctuation) prefixed with Negated. Unlike Words, it
// keeps polarity.
func PolarWords(s string) Set {
	out := make(Set, sizeHint(len(s)))
	addPolarWords(out, s)
	return out
}

// sizeHint is a room for the distinct words of n bytes of text to start
// a set with, so that the set is not grown again and again: most of the
// time a check of an answer took went on growing sets.
func sizeHint(n int) int { return min(n/16, 4096) }

// addPolarWords adds the PolarWords of s to out.
func addPolarWords(out Set, s string) {
	p := polarReader{out: out}
	// A token is a run of letters, digits and apostrophes of the
	// lower-cased text, read where it lies rather than copied out.
	low := strings.ToLower(s)
	if strings.ContainsRune(low, '’') {
		low = strings.ReplaceAll(low, "’", "'")
	}
	start := -1 // where the token being read starts; -1 between tokens
	flush := func(end int, sep rune) {
		if start >= 0 {
			p.token(low[start:end], sep)
			start = -1
		}
	}
	for i, r := range low {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'':
			if start < 0 {
				start = i
			}
		case strings.ContainsRune(".,;:!?()", r):
			flush(i, r)
			p.negated = false // a negation does not reach past punctuation
		default:
			flush(i, r)
		}
	}
	flush(len(low), 0)
}

// polarReader adds a text's tokens, lower-cased, in order, to out as
// PolarWords; negated says a negation waits for the next word.
type polarReader struct {
	out     Set
	negated bool
}

// token takes the token t, which the rune sep ended (0 at the end).
func (p *polarReader) token(t string, sep rune) {
	t = strings.Trim(t, "'")
	if t == "" {
		return
	}
	if (negators[t] && !(t == "no" && sep == '-')) || strings.HasSuffix(t, "n't") {
		p.negated = true
		return
	}
	if t == "only" {
		p.negated = false
		return
	}
	if i := strings.IndexByte(t, '\''); i >= 0 {
		t = t[:i] // the token's -> token
	}
	if len(t) <= 2 || stop[t] {
		return
	}
	w := Stem(t)
	if p.negated {
		w, p.negated = Negated+w, false
	}
	p.out[w] = true
}

// Stem strips one common English suffix so that "validates", "validated"
// and "validate" compare equal. It is deliberately crude: it only has to
// make the same word in two inflections match.
func Stem(w string) string {
	for _, suf := range []string{"ing", "ed", "es", "e"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 4 {
			return w[:len(w)-len(suf)]
		}
	}
	if strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && len(w) > 3 {
		return w[:len(w)-1]
	}
	return w
}

// Pool is every word, with its polarity, of the texts: the union of their
// PolarWords. A text is checked against the pool of its sources.
func Pool(texts ...string) Set {
	n := 0
	for _, t := range texts {
		n += len(t)
	}
	pool := make(Set, sizeHint(n))
	for _, t := range texts {
		addPolarWords(pool, t)
	}
	return pool
}

// Support measures a claim against a pool: the share of the claim's
// PolarWords found in pool (0 when it has none), and the words whose
// polarity contradicts it, sorted (the claim asserts w where the pool only
// negates it, or negates w where the pool only asserts it).
func Support(claim string, pool Set) (share float64, contradicted []string) {
	return support(PolarWords(claim), pool.has)
}

// SupportAny is Support against the Pool of every text of pools, without
// making it: a caller that checks many claims against sources in turn
// pools each source once.
func SupportAny(claim string, pools ...Set) (share float64, contradicted []string) {
	return support(PolarWords(claim), func(w string) bool {
		return slices.ContainsFunc(pools, func(p Set) bool { return p[w] })
	})
}

func (s Set) has(w string) bool { return s[w] }

// support is Support for a claim's words, with has saying which words the
// pool holds.
func support(ws Set, has func(string) bool) (share float64, contradicted []string) {
	if len(ws) == 0 {
		return 0, nil
	}
	in := 0
	for w := range ws {
		if has(w) {
			in++
			continue
		}
		if base, ok := strings.CutPrefix(w, Negated); ok {
			if has(base) {
				contradicted = append(contradicted, w)
			}
		} else if has(Negated + w) {
			contradicted = append(contradicted, w)
		}
	}
	slices.Sort(contradicted)
	return float64(in) / float64(len(ws)), contradicted
}

// Grounded reports whether a claim says only what its sources say: it
// contradicts none of the polarity of pool (the Pool of the sources'
// texts), and at least ClaimSupport of its meaningful words are in pool.
// A claim without meaningful words is not grounded.
func Grounded(claim string, pool Set) bool {
	share, contra := Support(claim, pool)
	return len(contra) == 0 && share >= ClaimSupport
}
