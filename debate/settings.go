package debate

import (
	"fmt"
	"math"
)

// Temperatures are the sampling temperatures of each kind of call, as seed
// 003 sets them.
type Temperatures struct {
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

// Settings are the tunable parts of a debate that are not flags. The zero
// value of a field means its default (see DefaultSettings); a front end
// fills them from configuration.
type Settings struct {
	Temperatures Temperatures `yaml:"temperatures" json:"temperatures"`
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
}

// DefaultSettings are the seed's temperatures and sot's thresholds.
func DefaultSettings() Settings {
	return Settings{
		Temperatures: Temperatures{
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
	}
}

// withDefaults fills the zero fields of s from DefaultSettings.
func (s Settings) withDefaults() Settings {
	d := DefaultSettings()
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
	return s
}

// Validate checks the settings' ranges; the error names the field.
func (s Settings) Validate() error {
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
	if s.Regenerations < 0 || s.Regenerations > 10 {
		return fmt.Errorf("debate.regenerations: %d; allow 0 to 10", s.Regenerations)
	}
	return nil
}

// The longest answer each kind of call may give, in tokens. They bound the
// plan's worst case (Plan.Bound) and keep a runaway answer from being fed
// to every later turn.
const (
	maxTurnTokens     = 1024
	maxSummaryTokens  = 64
	maxPhaseTokens    = 320
	maxObserverTokens = 1024
	maxQuestionTokens = 768
	maxSynthTokens    = 1536
	maxMergeTokens    = 1536
	maxFinalTokens    = 2048
)

// The answer lengths a typical run sees, for the dry run's estimate.
const (
	typicalTurnTokens     = 380
	typicalSummaryTokens  = 24
	typicalPhaseTokens    = 110
	typicalObserverTokens = 320
	typicalQuestionTokens = 220
	typicalSynthTokens    = 420
	typicalMergeTokens    = 380
	typicalFinalTokens    = 600
)
