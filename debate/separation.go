package debate

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/sotlabs/sot/persona"
)

// This file checks the diversity measures themselves (sot eval debate):
// whether each tells a real ensemble from one that only looks diverse (its
// words shuffled among its members) and from one that is not (its members
// repeating one another).

// Separation is how one diversity measure scores a real ensemble (or a
// debate's real branch questions) against a shuffled and a duplicated
// variant of it. A measure separates a variant when it scores the real one
// higher by at least SeparationMargin.
type Separation struct {
	Measure             string  `json:"measure"`
	Subject             string  `json:"subject"`
	Real                float64 `json:"real"`
	Shuffled            float64 `json:"shuffled"`
	Duplicated          float64 `json:"duplicated"`
	SeparatesShuffled   bool    `json:"separates_shuffled"`
	SeparatesDuplicated bool    `json:"separates_duplicated"`
}

// SeparationMargin is how much higher a measure must score the real
// ensemble than a variant to tell them apart.
const SeparationMargin = 0.1

func separation(measure, subject string, real, shuffled, duplicated float64) Separation {
	return Separation{Measure: measure, Subject: subject, Real: real, Shuffled: shuffled, Duplicated: duplicated,
		SeparatesShuffled: real-shuffled >= SeparationMargin, SeparatesDuplicated: real-duplicated >= SeparationMargin}
}

// shuffleWords pools the words of texts, shuffles them with rng, and deals
// them back out, each text keeping its number of words.
func shuffleWords(rng *rand.Rand, texts []string) []string {
	var pool []string
	sizes := make([]int, len(texts))
	for i, t := range texts {
		w := strings.Fields(t)
		sizes[i] = len(w)
		pool = append(pool, w...)
	}
	rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	out := make([]string, len(texts))
	at := 0
	for i, n := range sizes {
		out[i] = strings.Join(pool[at:at+n], " ")
		at += n
	}
	return out
}

// duplicate makes every text a copy of the first, its words in another
// order (so no two are the same bytes).
func duplicate(rng *rand.Rand, texts []string) []string {
	out := make([]string, len(texts))
	w := strings.Fields(texts[0])
	for i := range texts {
		c := slices.Clone(w)
		rng.Shuffle(len(c), func(a, b int) { c[a], c[b] = c[b], c[a] })
		out[i] = strings.Join(c, " ")
	}
	return out
}

// CheckEnsemble scores an ensemble of observers (two or more) and its
// shuffled and duplicated variants by each measure of its descriptions.
func CheckEnsemble(obs []*Observer, seed uint64) ([]Separation, error) {
	if len(obs) < 2 {
		return nil, fmt.Errorf("an ensemble of %d observer(s): the measures compare pairs, so give two or more", len(obs))
	}
	rng := rand.New(rand.NewPCG(seed, 0x656e73))
	texts := make([]string, len(obs))
	for i, o := range obs {
		texts[i] = o.Bias + " " + o.Focus
	}
	as := func(ts []string) []*Observer {
		out := make([]*Observer, len(ts))
		for i, t := range ts {
			out[i] = &Observer{Name: fmt.Sprintf("o%d", i+1), Bias: t}
		}
		return out
	}
	real, shuffled, duplicated := ensembleDiversity(obs), ensembleDiversity(as(shuffleWords(rng, texts))), ensembleDiversity(as(duplicate(rng, texts)))
	subject := fmt.Sprintf("the ensemble of %d observers", len(obs))
	return []Separation{
		separation("seed_jaccard", subject, real.Seed.Avg, shuffled.Seed.Avg, duplicated.Seed.Avg),
		separation("content_words", subject, real.Content.Avg, shuffled.Content.Avg, duplicated.Content.Avg),
	}, nil
}

// CheckQuestions scores a finished debate's branch questions (its
// debate.json), and their shuffled and duplicated variants, by their
// distinctness against the baseline drawn from the debate's own words.
func CheckQuestions(debateJSON []byte, seed uint64) (Separation, error) {
	var res Result
	if err := json.Unmarshal(debateJSON, &res); err != nil {
		return Separation{}, fmt.Errorf("debate.json: %w", err)
	}
	var asked []string
	for _, q := range res.Questions {
		if q.Observer != "" {
			asked = append(asked, q.Question)
		}
	}
	if len(asked) < 2 {
		return Separation{}, fmt.Errorf("debate %s asked %d branch question(s): the measure compares pairs", res.RunID, len(asked))
	}
	corpus := []string{res.Passage.Text}
	for _, t := range res.Main.Turns {
		corpus = append(corpus, t.Text)
	}
	text := strings.Join(corpus, "\n")
	rng := rand.New(rand.NewPCG(seed, 0x717565))
	d := func(qs []string) float64 { return questionDiversity(qs, text, int64(seed)).Distinctness }
	return separation("question_distinctness", "the questions of debate "+res.RunID, d(asked), d(shuffleWords(rng, asked)), d(duplicate(rng, asked))), nil
}

// BuiltinEnsemble is the observers sot ships, from the persona library.
func BuiltinEnsemble(lib *persona.Library) []*Observer {
	var out []*Observer
	for _, p := range lib.Builtins(persona.Observer) {
		out = append(out, observerOf(p))
	}
	return out
}
