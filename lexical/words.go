// Package lexical compares texts by their words. It knows nothing of who
// wrote a text or why: a scenario hands it plain strings (claims, the
// sources they rest on, a narrative) and gets back word sets, similarities
// and the verdicts of its grounding checks.
//
// Two kinds of word set are made. Words gives the plain meaningful words
// of a text, for measuring how alike two texts are (Jaccard). PolarWords
// gives stemmed words that keep their polarity, for checking that a text
// says only what its sources say (Support, Grounded, Narrative).
package lexical

import (
	"strings"
	"unicode"
)

// Set is a set of words.
type Set map[string]bool

// stop words carry no meaning for a comparison.
var stop = Set{}

func init() {
	for _, w := range strings.Fields("a an the and or but of to in on at for with without from by is are was were be been it its this that these those as not no can may might will would should could than then there their they which who when where what how if into out over under via per so such only also any all each both") {
		stop[w] = true
	}
}

// Words returns the meaningful words of s: lower-cased, split at every
// character that is neither a letter nor a digit, with stop words and
// words of two letters or fewer dropped. Words are not stemmed and keep no
// polarity.
func Words(s string) Set {
	out := Set{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) > 2 && !stop[w] {
			out[w] = true
		}
	}
	return out
}

// Jaccard is the Jaccard similarity of two word sets: the size of their
// intersection over the size of their union, from 0 (nothing shared, or
// either set empty) to 1 (the same words).
func Jaccard(a, b Set) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter := 0
	for w := range a {
		if b[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
