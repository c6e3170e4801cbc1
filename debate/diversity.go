package debate

import (
	"math"
	"math/rand/v2"
	"strings"
	"unicode"

	"github.com/sotlabs/sot/lexical"
)

// Diversity measures how different an ensemble of observers is, three ways.
//
// Seed is seed 003's figure, kept for comparison with its reports: the
// Jaccard distance between the sets of words of two observers' bias and
// focus, split at white space with nothing dropped. Any two descriptions of
// that length share few words, so it sits near 0.9 whether the observers
// differ or not: it cannot tell a good ensemble from a bad one.
//
// Content is the same distance over the stemmed content words of bias and
// focus (stop words and short words dropped): two observers that share
// their key terms score low here. It is the check that makes a generated
// observer too close to an earlier one (Settings.MinObserverDistance).
//
// Questions measures what the observers did: the distance between the
// branch questions they asked, against a baseline computed on the texts
// they read (see QuestionDiversity).
type Diversity struct {
	NumPerspectives int       `json:"num_perspectives"`
	Seed            PairStats `json:"seed_jaccard"`
	Content         PairStats `json:"content_words"`
	// Pairs are the two distances of every pair of observers.
	Pairs     []ObserverPair     `json:"pairs,omitempty"`
	Questions *QuestionDiversity `json:"questions,omitempty"`
}

// PairStats summarizes the distances between every pair.
type PairStats struct {
	Avg float64 `json:"avg_pairwise_distance"`
	Min float64 `json:"min_pairwise_distance"`
	Max float64 `json:"max_pairwise_distance"`
}

// ObserverPair is the distance between two observers.
type ObserverPair struct {
	A       string  `json:"a"`
	B       string  `json:"b"`
	Seed    float64 `json:"seed_jaccard"`
	Content float64 `json:"content_words"`
}

// QuestionDiversity compares the observers' branch questions with what
// chance gives on the same texts. Observed is the mean Jaccard distance
// between the stemmed content words of every two questions. Baseline is
// the mean distance between word sets of the same sizes drawn at random
// (by frequency) from the words of the passage and the main debate: two
// questions that only echo what the debate talks about score near it,
// however high it is. Distinctness scales the gap to the room on its side
// of the baseline, from -1 to 1: above it, (Observed - Baseline) / (1 -
// Baseline), 1 for questions that share no word; below it, (Observed -
// Baseline) / Baseline, -1 for questions that are the same words; 0 for
// questions no more different than chance draws from the debate's own
// words.
type QuestionDiversity struct {
	Observed     float64        `json:"observed_distance"`
	Baseline     float64        `json:"baseline_distance"`
	Distinctness float64        `json:"distinctness"`
	Pairs        []QuestionPair `json:"pairs"`
}

// QuestionPair is the distance between two questions (numbered as in
// Result.Questions, from 1), and the baseline for sets of their sizes.
type QuestionPair struct {
	A        int     `json:"a"`
	B        int     `json:"b"`
	Distance float64 `json:"distance"`
	Baseline float64 `json:"baseline"`
}

// SeedDistance is seed 003's measure: 1 minus the Jaccard similarity of
// the words of bias and focus, run together, lower-cased and split at white
// space (the seed concatenates the two without a space).
func SeedDistance(a, b *Observer) float64 {
	wa := map[string]bool{}
	for _, w := range strings.Fields(strings.ToLower(a.Bias + a.Focus)) {
		wa[w] = true
	}
	wb := map[string]bool{}
	for _, w := range strings.Fields(strings.ToLower(b.Bias + b.Focus)) {
		wb[w] = true
	}
	return 1 - jaccard(wa, wb)
}

// ContentDistance is 1 minus the Jaccard similarity of the stemmed content
// words of two observers' bias and focus.
func ContentDistance(a, b *Observer) float64 {
	return 1 - jaccard(stems(a.Bias+" "+a.Focus), stems(b.Bias+" "+b.Focus))
}

// stems are the stemmed content words of s.
func stems(s string) map[string]bool {
	out := map[string]bool{}
	for w := range lexical.Words(s) {
		out[lexical.Stem(w)] = true
	}
	return out
}

// stemList is the stemmed content words of s in order, repeats kept.
func stemList(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		// A word counts as lexical.Words counts it: long enough and not a
		// stop word.
		if len(lexical.Words(w)) == 1 {
			out = append(out, lexical.Stem(w))
		}
	}
	return out
}

func jaccard(a, b map[string]bool) float64 {
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

// ensembleDiversity measures the observers' descriptions.
func ensembleDiversity(obs []*Observer) *Diversity {
	d := &Diversity{NumPerspectives: len(obs)}
	var seed, content []float64
	for i := range obs {
		for j := i + 1; j < len(obs); j++ {
			p := ObserverPair{A: obs[i].Name, B: obs[j].Name, Seed: round3(SeedDistance(obs[i], obs[j])), Content: round3(ContentDistance(obs[i], obs[j]))}
			d.Pairs = append(d.Pairs, p)
			seed, content = append(seed, p.Seed), append(content, p.Content)
		}
	}
	d.Seed, d.Content = stats(seed), stats(content)
	return d
}

func stats(v []float64) PairStats {
	if len(v) == 0 {
		return PairStats{}
	}
	s := PairStats{Min: math.Inf(1), Max: math.Inf(-1)}
	sum := 0.0
	for _, x := range v {
		sum += x
		s.Min, s.Max = min(s.Min, x), max(s.Max, x)
	}
	s.Avg = round3(sum / float64(len(v)))
	return s
}

// baselineDraws is how many random pairs the baseline of each question
// pair averages.
const baselineDraws = 400

// questionDiversity measures the questions against the baseline drawn
// from corpus (the passage and the main debate), with a generator seeded
// by seed, so that a run's figures are the same every time it is
// rendered. It is nil with fewer than two questions.
func questionDiversity(questions []string, corpus string, seed int64) *QuestionDiversity {
	if len(questions) < 2 {
		return nil
	}
	pool := stemList(corpus)
	sets := make([]map[string]bool, len(questions))
	for i, q := range questions {
		sets[i] = stems(q)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x64697665))
	qd := &QuestionDiversity{}
	var obs, base []float64
	for i := range sets {
		for j := i + 1; j < len(sets); j++ {
			p := QuestionPair{A: i + 1, B: j + 1, Distance: round3(1 - jaccard(sets[i], sets[j])), Baseline: round3(baseline(rng, pool, len(sets[i]), len(sets[j])))}
			qd.Pairs = append(qd.Pairs, p)
			obs, base = append(obs, p.Distance), append(base, p.Baseline)
		}
	}
	qd.Observed, qd.Baseline = stats(obs).Avg, stats(base).Avg
	switch {
	case qd.Observed >= qd.Baseline && qd.Baseline < 1:
		qd.Distinctness = round3((qd.Observed - qd.Baseline) / (1 - qd.Baseline))
	case qd.Observed < qd.Baseline:
		qd.Distinctness = round3((qd.Observed - qd.Baseline) / qd.Baseline)
	}
	return qd
}

// baseline is the mean distance between two sets of n and m distinct
// words drawn from pool by frequency.
func baseline(rng *rand.Rand, pool []string, n, m int) float64 {
	distinct := map[string]bool{}
	for _, w := range pool {
		distinct[w] = true
	}
	n, m = min(n, len(distinct)), min(m, len(distinct))
	if n == 0 || m == 0 {
		return 1
	}
	draw := func(k int) map[string]bool {
		s := map[string]bool{}
		for tries := 0; len(s) < k && tries < 50*k; tries++ {
			s[pool[rng.IntN(len(pool))]] = true
		}
		return s
	}
	sum := 0.0
	for range baselineDraws {
		sum += 1 - jaccard(draw(n), draw(m))
	}
	return sum / baselineDraws
}
