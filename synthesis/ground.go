package synthesis

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// This file holds the checks that keep the triage lead to what the
// specialists said: a merged claim must be made of its sources' words, and
// every narrative sentence must cite existing findings and be made of their
// words. Both compare words with their polarity: a negation attaches to the
// next meaningful word, so "not validated" and "validated" differ.

// Thresholds of the word checks: the share of a text's meaningful words
// that must appear in the findings it rests on.
const (
	// mergedSupport is for a merged claim, which restates its sources.
	mergedSupport = 0.7
	// narrativeSupport is for a narrative sentence once its narrative
	// vocabulary is removed: at least half of what remains must come from
	// the findings it cites. A sentence left with no words (it only says
	// who agreed) passes.
	narrativeSupport = 0.5
)

// negators make the next meaningful word negative. Words ending in "n't"
// (isn't, doesn't, can't) are negators too, and so is the prefix "non"
// (non-constant); "no" joined by a hyphen (no-op) is not, and "not only"
// negates nothing.
var negators = map[string]bool{"not": true, "no": true, "never": true, "without": true, "cannot": true, "non": true}

// groundWords returns the meaningful words of s for the grounding checks:
// lower-cased, stop words and words of two letters or fewer dropped, crudely
// stemmed so inflections match, and a word following a negation (before the
// next punctuation) marked "not_". Unlike words, it keeps polarity; it is not
// used for clustering.
func groundWords(s string) map[string]bool {
	out := map[string]bool{}
	negated := false
	var tok strings.Builder
	flush := func(sep rune) {
		t := strings.Trim(tok.String(), "'")
		tok.Reset()
		if t == "" {
			return
		}
		if (negators[t] && !(t == "no" && sep == '-')) || strings.HasSuffix(t, "n't") {
			negated = true
			return
		}
		if t == "only" {
			negated = false
			return
		}
		if i := strings.IndexByte(t, '\''); i >= 0 {
			t = t[:i] // the token's -> token
		}
		if len(t) <= 2 || stop[t] {
			return
		}
		w := stem(t)
		if negated {
			w, negated = "not_"+w, false
		}
		out[w] = true
	}
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			tok.WriteRune(r)
		case r == '\'' || r == '’':
			tok.WriteByte('\'')
		case strings.ContainsRune(".,;:!?()", r):
			flush(r)
			negated = false // a negation does not reach past punctuation
		default:
			flush(r)
		}
	}
	flush(0)
	return out
}

// stem strips one common English suffix so that "validates", "validated"
// and "validate" compare equal. It is deliberately crude: it only has to
// make the same word in two inflections match.
func stem(w string) string {
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

// poolOf is every word, with its polarity, of the findings' claims, grounds
// and warrants.
func poolOf(ms []*scored) map[string]bool {
	pool := map[string]bool{}
	for _, m := range ms {
		for _, text := range []string{m.Claim, m.Grounds, m.Warrant} {
			for w := range groundWords(text) {
				pool[w] = true
			}
		}
	}
	return pool
}

// support measures ws against pool: the share of ws found in pool, and the
// words whose polarity contradicts it (the text asserts w where the pool
// only negates it, or negates w where the pool only asserts it).
func support(ws, pool map[string]bool) (share float64, contradicted []string) {
	if len(ws) == 0 {
		return 0, nil
	}
	in := 0
	for w := range ws {
		if pool[w] {
			in++
			continue
		}
		if base, ok := strings.CutPrefix(w, "not_"); ok {
			if pool[base] {
				contradicted = append(contradicted, w)
			}
		} else if pool["not_"+w] {
			contradicted = append(contradicted, w)
		}
	}
	sort.Strings(contradicted)
	return float64(in) / float64(len(ws)), contradicted
}

// grounded reports whether a merged claim says only what its sources say:
// it contradicts none of their words' polarity, and at least mergedSupport
// of its meaningful words come from the sources' claims, grounds and
// warrants.
func grounded(claim string, sources []*scored) bool {
	cw := groundWords(claim)
	if len(cw) == 0 {
		return false
	}
	share, contra := support(cw, poolOf(sources))
	return len(contra) == 0 && share >= mergedSupport
}

// narrativeVocabulary are the words a narrative may use about the review
// itself (who said what, how they relate, how much it matters) without a
// finding having said them. The names of the specialists and lenses that
// took part are added per run.
var narrativeVocabulary = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`review reviews reviewed reviewer reviewers specialist specialists
		perspective perspectives lens lenses finding findings found raise raises raised flag flags flagged
		note notes noted point points out say says said agree agrees agreed agreement disagree disagrees
		disagreed disagreement dispute disputes disputed trade off tradeoff tradeoffs conflict conflicts
		severity must fix consider high medium low confidence issue issues problem problems concern concerns
		risk risks main most key important critical both two three several together triage lead summary overall
		security correctness performance testing architecture maintainability edge cases assumptions release manager
		baseline red team premortem retrospective`) {
		narrativeVocabulary[stem(w)] = true
	}
}

// citation is a bracketed group in a narrative: "[security.1]",
// "[security.red-team.1, correctness.2]".
var citation = regexp.MustCompile(`\[([^\[\]]*)\]`)

// citedIDs lists the ids in a sentence's brackets, in order. Ids may be
// separated by commas, semicolons or spaces, and joined by "and".
func citedIDs(sentence string) []string {
	var ids []string
	for _, m := range citation.FindAllStringSubmatch(sentence, -1) {
		for _, id := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ',' || r == ';' || unicode.IsSpace(r) }) {
			id = strings.Trim(id, "`'\"")
			if id == "" || strings.EqualFold(id, "and") || id == "&" {
				continue
			}
			ids = append(ids, id)
		}
	}
	return ids
}

// checkNarrative keeps the narrative sentences that stand on the findings
// and drops the rest, saying why. A sentence stays only if it cites at
// least one finding id in square brackets, every id it cites is a finding a
// specialist made, and what it says comes from the cited findings: it
// contradicts none of their polarity, and once the narrative vocabulary is
// set aside, at least narrativeSupport of its meaningful words appear in
// their claims, grounds and warrants.
func checkNarrative(text string, known map[string]*scored) (string, []string) {
	vocab := map[string]bool{}
	for w := range narrativeVocabulary {
		vocab[w] = true
	}
	for _, m := range known {
		for w := range groundWords(m.Specialist + " " + m.Lens) {
			vocab[strings.TrimPrefix(w, "not_")] = true
		}
	}
	var kept, rejected []string
	for _, s := range splitSentences(text) {
		if why := narrativeProblem(s, known, vocab); why != "" {
			rejected = append(rejected, fmt.Sprintf("narrative sentence dropped: %s: %q", why, s))
			continue
		}
		kept = append(kept, s)
	}
	return strings.Join(kept, " "), rejected
}

// narrativeProblem says what is wrong with one narrative sentence, or "".
func narrativeProblem(s string, known map[string]*scored, vocab map[string]bool) string {
	ids := citedIDs(s)
	if len(ids) == 0 {
		return "it cites no finding"
	}
	var cited []*scored
	seen := map[string]bool{}
	for _, id := range ids {
		m, ok := known[id]
		if !ok {
			return fmt.Sprintf("it cites %s, which no specialist reported", id)
		}
		if !seen[id] {
			seen[id] = true
			cited = append(cited, m)
		}
	}
	ws := map[string]bool{}
	for w := range groundWords(citation.ReplaceAllString(s, " ")) {
		if !vocab[strings.TrimPrefix(w, "not_")] {
			ws[w] = true
		}
	}
	if len(ws) == 0 {
		return ""
	}
	share, contra := support(ws, poolOf(cited))
	list := strings.Join(slices.Sorted(maps.Keys(seen)), ", ")
	if len(contra) > 0 {
		return fmt.Sprintf("it contradicts the findings it cites (%s), reversing the negation of %s", list, strings.Join(contra, ", "))
	}
	if share < narrativeSupport {
		return fmt.Sprintf("it says what the findings it cites (%s) do not say: %.0f%% of its words are theirs, at least %.0f%% must be",
			list, share*100, narrativeSupport*100)
	}
	return ""
}
