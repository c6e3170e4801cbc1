package synthesis

import (
	"fmt"
	"maps"
	"strings"

	"github.com/sotlabs/sot/lexical"
)

// This file holds the checks that keep the triage lead to what the
// specialists said: a merged claim must be made of its sources' words, and
// every narrative sentence must cite existing findings and be made of their
// words. The word checks themselves are package lexical's; this file says
// which texts of a finding count and how a rejection reads.

// poolOf is every word, with its polarity, of the findings' claims, grounds
// and warrants.
func poolOf(ms []*scored) lexical.Set {
	var texts []string
	for _, m := range ms {
		texts = append(texts, sourceTexts(m)...)
	}
	return lexical.Pool(texts...)
}

// sourceTexts are the texts of a finding that a claim about it may draw on.
func sourceTexts(m *scored) []string { return []string{m.Claim, m.Grounds, m.Warrant} }

// grounded reports whether a merged claim says only what its sources say:
// it contradicts none of their words' polarity, and at least
// lexical.ClaimSupport of its meaningful words come from the sources'
// claims, grounds and warrants.
func grounded(claim string, sources []*scored) bool {
	return lexical.Grounded(claim, poolOf(sources))
}

// narrativeVocabulary are the words a narrative may use about the review
// itself (who said what, how they relate, how much it matters) without a
// finding having said them. The names of the specialists and lenses that
// took part are added per run.
var narrativeVocabulary = lexical.Set{}

func init() {
	for _, w := range strings.Fields(`review reviews reviewed reviewer reviewers specialist specialists
		perspective perspectives lens lenses finding findings found raise raises raised flag flags flagged
		note notes noted point points out say says said agree agrees agreed agreement disagree disagrees
		disagreed disagreement dispute disputes disputed trade off tradeoff tradeoffs conflict conflicts
		severity must fix consider high medium low confidence issue issues problem problems concern concerns
		risk risks main most key important critical both two three several together triage lead summary overall
		security correctness performance testing architecture maintainability edge cases assumptions release manager
		baseline red team premortem retrospective`) {
		narrativeVocabulary[lexical.Stem(w)] = true
	}
}

// checkNarrative keeps the narrative sentences that stand on the findings
// and drops the rest, saying why. A sentence stays only if it cites at
// least one finding id in square brackets, every id it cites is a finding a
// specialist made, and what it says comes from the cited findings: it
// contradicts none of their polarity, and once the narrative vocabulary is
// set aside, at least lexical.SentenceSupport of its meaningful words
// appear in their claims, grounds and warrants.
func checkNarrative(text string, known map[string]*scored) (string, []string) {
	n := lexical.Narrative{Cite: lexical.Brackets, Sources: map[string][]string{}, Vocabulary: maps.Clone(narrativeVocabulary)}
	for id, m := range known {
		n.Sources[id] = sourceTexts(m)
		for w := range lexical.PolarWords(m.Specialist + " " + m.Lens) {
			n.Vocabulary[strings.TrimPrefix(w, lexical.Negated)] = true
		}
	}
	var kept, rejected []string
	for _, s := range lexical.Sentences(flat(text)) {
		if v := n.Check(s); v.Flaw != lexical.NoFlaw {
			rejected = append(rejected, fmt.Sprintf("narrative sentence dropped: %s: %q", narrativeProblem(v), s))
			continue
		}
		kept = append(kept, s)
	}
	return strings.Join(kept, " "), rejected
}

// narrativeProblem says what is wrong with a narrative sentence.
func narrativeProblem(v lexical.Verdict) string {
	list := strings.Join(v.Cited, ", ")
	switch v.Flaw {
	case lexical.Uncited:
		return "it cites no finding"
	case lexical.UnknownID:
		return fmt.Sprintf("it cites %s, which no specialist reported", v.Unknown)
	case lexical.Contradicts:
		return fmt.Sprintf("it contradicts the findings it cites (%s), reversing the negation of %s", list, strings.Join(v.Contradicted, ", "))
	}
	return fmt.Sprintf("it says what the findings it cites (%s) do not say: %.0f%% of its words are theirs, at least %.0f%% must be",
		list, v.Share*100, lexical.SentenceSupport*100)
}
