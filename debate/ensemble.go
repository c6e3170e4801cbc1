package debate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/project"
)

// EnsembleFile is the ensemble a run writes: seed 003's ensemble JSON with
// sot's further measures. --observers-from reads one back.
const EnsembleFile = "ensemble.json"

// Ensemble is the observers of a run and how diverse they are, in seed
// 003's shape (perspectives, diversity_analysis, generated_at) with sot's
// two further measures beside it.
type Ensemble struct {
	Perspectives      []Perspective     `json:"perspectives"`
	DiversityAnalysis DiversityAnalysis `json:"diversity_analysis"`
	// ContentDiversity is the distance over stemmed content words of bias
	// and focus, the check against too-close generated observers.
	ContentDiversity PairStats `json:"content_diversity"`
	// QuestionDiversity is the distance between the observers' branch
	// questions against the baseline of the debate's own words: the measure
	// that tells a good ensemble from a bad one.
	QuestionDiversity *QuestionDiversity `json:"question_diversity,omitempty"`
	// Measures says what each figure measures.
	Measures    map[string]string `json:"measures"`
	GeneratedAt Stamp             `json:"generated_at"`
}

// Stamp is a time in an ensemble file. It is written as RFC 3339 with its
// zone; it is read with or without one (seed 003's prototype writes
// "2025-11-15T09:25:09.123456", local time without a zone), a missing zone
// read as UTC. Text that is no time is an error that says so.
type Stamp struct{ time.Time }

// stampLayouts are the forms a Stamp is read in, zone first: RFC 3339,
// then ISO 8601 without a zone as Python's isoformat() writes it (with or
// without fractional seconds), with a space for the T as str() writes it,
// to the minute, and a date alone.
var stampLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02",
}

// StampError is a generated_at that is not a time.
type StampError struct {
	// JSON is the value as the file has it.
	JSON string
}

func (e *StampError) Error() string {
	return fmt.Sprintf("generated_at: %s is not a time; write it as \"2025-11-15T09:25:09Z\" (a missing zone is read as UTC)", e.JSON)
}

// UnmarshalJSON reads a time with or without a zone; null or "" is the
// zero time.
func (s *Stamp) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*s = Stamp{}
		return nil
	}
	var text string
	if err := json.Unmarshal(b, &text); err != nil {
		return &StampError{JSON: string(b)}
	}
	text = strings.TrimSpace(text)
	if text == "" {
		*s = Stamp{}
		return nil
	}
	for _, layout := range stampLayouts {
		if t, err := time.Parse(layout, text); err == nil {
			*s = Stamp{t.UTC()}
			return nil
		}
	}
	return &StampError{JSON: string(b)}
}

// Perspective is one observer of an ensemble.
type Perspective struct {
	Name             string   `json:"name"`
	Bias             string   `json:"bias"`
	Focus            string   `json:"focus"`
	BlindSpots       []string `json:"blind_spots"`
	ExampleQuestions []string `json:"example_questions,omitempty"`
	AntiExamples     []string `json:"anti_examples,omitempty"`
	Origin           string   `json:"origin,omitempty"`
	// Regenerated counts the attempts discarded as too close before this
	// observer was kept.
	Regenerated int `json:"regenerated,omitempty"`
}

// DiversityAnalysis is seed 003's figure: Jaccard distances over the words
// of bias and focus (see SeedDistance). DiversityScore is the average.
type DiversityAnalysis struct {
	NumPerspectives     int     `json:"num_perspectives"`
	AvgPairwiseDistance float64 `json:"avg_pairwise_distance"`
	MinPairwiseDistance float64 `json:"min_pairwise_distance"`
	MaxPairwiseDistance float64 `json:"max_pairwise_distance"`
	DiversityScore      float64 `json:"diversity_score"`
}

// measures describe each figure of an ensemble, in its file and report.
var measures = map[string]string{
	"diversity_analysis": "seed 003's measure: Jaccard distance between the word sets of two observers' bias and focus (split at white space, nothing dropped); diversity_score is its average. Short descriptions share few words, so it sits near 0.9 for any ensemble and cannot tell a good one from a bad one.",
	"content_diversity":  "Jaccard distance between the stemmed content words (stop words dropped) of two observers' bias and focus: observers sharing their key terms score low. A generated observer closer than the floor to an earlier one is generated again.",
	"question_diversity": "Jaccard distance between the stemmed content words of the observers' branch questions (observed), against the distance between word sets of the same sizes drawn at random from the passage and the main debate (baseline). distinctness runs from -1 (the questions are the same words) through 0 (they differ no more than chance draws from the debate's own words) to 1 (they share no word): (observed - baseline) / (1 - baseline) above the baseline, (observed - baseline) / baseline below it.",
}

// ensembleOf is the ensemble of observers with their diversity.
func ensembleOf(obs []*Observer, d *Diversity, at time.Time) *Ensemble {
	e := &Ensemble{GeneratedAt: Stamp{at.UTC()}, Measures: measures}
	for _, o := range obs {
		e.Perspectives = append(e.Perspectives, Perspective{Name: o.Name, Bias: o.Bias, Focus: o.Focus, BlindSpots: o.BlindSpots,
			ExampleQuestions: o.ExampleQuestions, AntiExamples: o.AntiExamples, Origin: o.Origin, Regenerated: len(o.Rejected)})
	}
	if d != nil {
		e.DiversityAnalysis = DiversityAnalysis{NumPerspectives: d.NumPerspectives, AvgPairwiseDistance: d.Seed.Avg,
			MinPairwiseDistance: d.Seed.Min, MaxPairwiseDistance: d.Seed.Max, DiversityScore: d.Seed.Avg}
		e.ContentDiversity = d.Content
		e.QuestionDiversity = d.Questions
	} else {
		e.DiversityAnalysis.NumPerspectives = len(obs)
	}
	return e
}

// maxEnsembleBytes bounds an ensemble file.
const maxEnsembleBytes = 1 << 20

// ReadEnsemble reads the observers of an ensemble file (one a run wrote,
// or one of seed 003's). A path that leads through a symbolic link out of
// its project is refused unless follow is set. Problems are
// *engine.UserError.
func ReadEnsemble(path string, follow bool) ([]*Observer, error) {
	bad := func(format string, args ...any) error {
		return &engine.UserError{Field: "--observers-from", Msg: path + ": " + fmt.Sprintf(format, args...)}
	}
	f, err := project.OpenInput(path, follow)
	if err != nil {
		return nil, &engine.UserError{Field: "--observers-from", Msg: err.Error()}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxEnsembleBytes+1))
	if err != nil {
		return nil, bad("%v", err)
	}
	if len(b) > maxEnsembleBytes {
		return nil, bad("larger than %d KiB; is it an ensemble file?", maxEnsembleBytes>>10)
	}
	var e Ensemble
	if err := json.Unmarshal(b, &e); err != nil {
		var se *StampError
		if errors.As(err, &se) {
			return nil, bad("%v", se)
		}
		return nil, bad("not an ensemble file (%v); give the ensemble.json a debate wrote", err)
	}
	if len(e.Perspectives) == 0 {
		return nil, bad("has no perspectives")
	}
	if len(e.Perspectives) > MaxObservers {
		return nil, bad("has %d perspectives; a debate takes at most %d", len(e.Perspectives), MaxObservers)
	}
	var out []*Observer
	for i, p := range e.Perspectives {
		if strings.TrimSpace(p.Name) == "" || strings.TrimSpace(p.Bias) == "" || strings.TrimSpace(p.Focus) == "" {
			return nil, bad("perspective %d lacks a name, a bias or a focus", i+1)
		}
		out = append(out, &Observer{ID: slug(p.Name), Name: oneLine(p.Name), Bias: oneLine(p.Bias), Focus: oneLine(p.Focus), BlindSpots: lines(p.BlindSpots),
			ExampleQuestions: lines(p.ExampleQuestions), AntiExamples: lines(p.AntiExamples), Origin: "ensemble " + path})
	}
	uniqueIDs(out)
	return out, nil
}
