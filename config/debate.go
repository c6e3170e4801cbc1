package config

import (
	"fmt"
	"math"
)

// DebateTemperatures are the sampling temperatures of each kind of call, as seed
// 003 sets them.
type DebateTemperatures struct {
	// Turn is a debater's turn, in the main debate and in a branch.
	Turn float64 `yaml:"turn" json:"turn"`
	// TurnSummary is the one-line summary of a turn; PhaseSummary the
	// summary of a whole debate.
	TurnSummary  float64 `yaml:"turn_summary" json:"turn_summary"`
	PhaseSummary float64 `yaml:"phase_summary" json:"phase_summary"`
	// Generation makes an observer (generate:N): high, for divergence.
	Generation float64 `yaml:"generation" json:"generation"`
	// Question is an observer's branch question.
	Question float64 `yaml:"question" json:"question"`
	// Synthesis is a branch's synthesis; Merge its merge-back and the final
	// merge.
	Synthesis float64 `yaml:"synthesis" json:"synthesis"`
	Merge     float64 `yaml:"merge" json:"merge"`
}

// Debate configures sot debate: the parts of a debate that are not flags.
// A zero field takes its default (DefaultDebate).
type Debate struct {
	Temperatures DebateTemperatures `yaml:"temperatures" json:"temperatures"`
	// DuplicateSimilarity is the word similarity (Jaccard over the content
	// words of two branch questions) at or above which the later question
	// is merged into the earlier one.
	DuplicateSimilarity float64 `yaml:"duplicate_similarity" json:"duplicate_similarity"`
	// MinObserverDistance is the distance (Jaccard over the stemmed content
	// words of bias and focus) below which a generated observer counts as
	// too close to an earlier one and is generated again.
	MinObserverDistance float64 `yaml:"min_observer_distance" json:"min_observer_distance"`
	// Regenerations bounds how many times one generated observer is
	// generated again for being too close to an earlier one.
	Regenerations int `yaml:"regenerations" json:"regenerations"`
	// GraphBudget is the most tokens of an argument graph's context a
	// debater gets (sot debate --graph); past it, the nodes most relevant
	// to the passage. 0 takes the default (12,000).
	GraphBudget int `yaml:"graph_budget" json:"graph_budget,omitempty"`
	// TurnWords is about how many words a debater's turn has: seed 003's
	// prototype asks for two or three sentences. It also bounds the tokens
	// a turn may take (four a word, at least 256), so a runaway turn is not
	// fed to every later one. 0 takes the default (DefaultTurnWords).
	TurnWords int `yaml:"turn_words" json:"turn_words"`
}

// The length of a debater's turn, in words (Debate.TurnWords).
const (
	DefaultTurnWords = 60
	MinTurnWords     = 1
	MaxTurnWords     = 400
)

// DefaultDebate is the seed's temperatures and sot's thresholds.
func DefaultDebate() Debate {
	return Debate{
		Temperatures: DebateTemperatures{
			Turn:         0.7,
			TurnSummary:  0.3,
			PhaseSummary: 0.4,
			Generation:   0.85,
			Question:     0.55,
			Synthesis:    0.5,
			Merge:        0.6,
		},
		DuplicateSimilarity: 0.5,
		MinObserverDistance: 0.6,
		Regenerations:       2,
		TurnWords:           DefaultTurnWords,
	}
}

// WithDefaults is s with its zero fields taken from DefaultDebate.
func (s Debate) WithDefaults() Debate {
	d := DefaultDebate()
	pick := func(v *float64, def float64) {
		if *v == 0 {
			*v = def
		}
	}
	t, dt := &s.Temperatures, d.Temperatures
	pick(&t.Turn, dt.Turn)
	pick(&t.TurnSummary, dt.TurnSummary)
	pick(&t.PhaseSummary, dt.PhaseSummary)
	pick(&t.Generation, dt.Generation)
	pick(&t.Question, dt.Question)
	pick(&t.Synthesis, dt.Synthesis)
	pick(&t.Merge, dt.Merge)
	pick(&s.DuplicateSimilarity, d.DuplicateSimilarity)
	pick(&s.MinObserverDistance, d.MinObserverDistance)
	if s.Regenerations == 0 {
		s.Regenerations = d.Regenerations
	}
	if s.TurnWords == 0 {
		s.TurnWords = d.TurnWords
	}
	return s
}

// Validate checks the settings' ranges; the error names the field.
func (s Debate) Validate() error {
	t := s.Temperatures
	for _, f := range []struct {
		name string
		v    float64
	}{{"turn", t.Turn}, {"turn_summary", t.TurnSummary}, {"phase_summary", t.PhaseSummary}, {"generation", t.Generation},
		{"question", t.Question}, {"synthesis", t.Synthesis}, {"merge", t.Merge}} {
		if f.v < 0 || f.v > 2 || math.IsNaN(f.v) {
			return fmt.Errorf("debate.temperatures.%s: %g is not a temperature from 0 to 2", f.name, f.v)
		}
	}
	if s.DuplicateSimilarity < 0 || s.DuplicateSimilarity > 1 || math.IsNaN(s.DuplicateSimilarity) {
		return fmt.Errorf("debate.duplicate_similarity: %g is not a similarity from 0 to 1", s.DuplicateSimilarity)
	}
	if s.MinObserverDistance < 0 || s.MinObserverDistance > 1 || math.IsNaN(s.MinObserverDistance) {
		return fmt.Errorf("debate.min_observer_distance: %g is not a distance from 0 to 1", s.MinObserverDistance)
	}
	if s.GraphBudget < 0 {
		return fmt.Errorf("debate.graph_budget: %d; give a number of tokens, or 0 for the default", s.GraphBudget)
	}
	if s.Regenerations < 0 || s.Regenerations > 10 {
		return fmt.Errorf("debate.regenerations: %d; allow 0 to 10", s.Regenerations)
	}
	if s.TurnWords != 0 && (s.TurnWords < MinTurnWords || s.TurnWords > MaxTurnWords) {
		return fmt.Errorf("debate.turn_words: %d; give %d to %d words a turn, or 0 for the default (%d)", s.TurnWords, MinTurnWords, MaxTurnWords, DefaultTurnWords)
	}
	return nil
}
