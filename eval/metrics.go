package eval

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
)

// Outcome is what one mode's review of one case came to.
type Outcome struct {
	Case    string  `json:"case"`
	Clean   bool    `json:"clean"`
	Defects int     `json:"defects"`
	Found   int     `json:"found"`    // defects found
	True    int     `json:"true"`     // findings that found a defect
	False   int     `json:"false"`    // findings that found none
	CostUSD float64 `json:"cost_usd"` // what the review spent
	Tokens  int     `json:"tokens"`
	WallMS  int64   `json:"wall_ms"`
	// Partial says the review did not complete; Error why it failed.
	Partial bool   `json:"partial,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Interval is a figure and its 95% confidence interval by bootstrap over
// the cases; NaN where the cases leave it undefined.
type Interval struct {
	Value float64 `json:"value"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
}

// Figures are one mode's figures over the cases.
type Figures struct {
	Cases              int      `json:"cases"`
	Defects            int      `json:"defects"`
	Found              int      `json:"found"`
	Findings           int      `json:"findings"`
	Recall             Interval `json:"recall"`
	Precision          Interval `json:"precision"`
	F1                 Interval `json:"f1"`
	FalsePerCleanCase  Interval `json:"false_findings_per_clean_case"`
	CostUSD            float64  `json:"cost_usd"`
	CostPerTrueFinding float64  `json:"cost_per_true_finding_usd"`
	WallMS             int64    `json:"wall_ms"`
	Failed             int      `json:"failed_cases"`
}

// point computes the figures of a set of outcomes (no intervals).
func point(os []Outcome) (recall, precision, f1, falseClean float64) {
	var defects, found, tru, fal, clean, cleanFalse int
	for _, o := range os {
		defects += o.Defects
		found += o.Found
		tru += o.True
		fal += o.False
		if o.Clean {
			clean++
			cleanFalse += o.False
		}
	}
	recall, precision, falseClean = ratio(found, defects), ratio(tru, tru+fal), ratio(cleanFalse, clean)
	f1 = math.NaN()
	if !math.IsNaN(recall) && !math.IsNaN(precision) && recall+precision > 0 {
		f1 = 2 * recall * precision / (recall + precision)
	} else if recall == 0 || precision == 0 {
		f1 = 0
	}
	return
}

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// Bootstraps is how many times the cases are resampled for an interval.
const Bootstraps = 2000

// Summarize computes a mode's figures, each with its 95% interval from
// resampling the cases with replacement (seeded, so the same outcomes
// give the same intervals).
func Summarize(os []Outcome, seed uint64) Figures {
	f := Figures{Cases: len(os)}
	for _, o := range os {
		f.Defects += o.Defects
		f.Found += o.Found
		f.Findings += o.True + o.False
		f.CostUSD += o.CostUSD
		f.WallMS += o.WallMS
		if o.Error != "" {
			f.Failed++
		}
	}
	r, p, f1, fc := point(os)
	if tru := f.Findings - sumFalse(os); tru > 0 {
		f.CostPerTrueFinding = f.CostUSD / float64(tru)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	var rs, ps, f1s, fcs []float64
	sample := make([]Outcome, len(os))
	for range Bootstraps {
		for i := range sample {
			sample[i] = os[rng.IntN(len(os))]
		}
		a, b, c, d := point(sample)
		rs, ps, f1s, fcs = appendNum(rs, a), appendNum(ps, b), appendNum(f1s, c), appendNum(fcs, d)
	}
	f.Recall, f.Precision, f.F1, f.FalsePerCleanCase = interval(r, rs), interval(p, ps), interval(f1, f1s), interval(fc, fcs)
	return f
}

func sumFalse(os []Outcome) int {
	n := 0
	for _, o := range os {
		n += o.False
	}
	return n
}

func appendNum(xs []float64, x float64) []float64 {
	if math.IsNaN(x) {
		return xs
	}
	return append(xs, x)
}

// interval is v with the 2.5th and 97.5th percentiles of its resamples.
func interval(v float64, samples []float64) Interval {
	if math.IsNaN(v) || len(samples) == 0 {
		return Interval{Value: v, Low: math.NaN(), High: math.NaN()}
	}
	sort.Float64s(samples)
	at := func(q float64) float64 { return samples[min(len(samples)-1, int(q*float64(len(samples))))] }
	return Interval{Value: v, Low: at(0.025), High: at(0.975)}
}

// MarshalJSON writes an undefined figure (no defect to find, no finding
// made) as null.
func (iv Interval) MarshalJSON() ([]byte, error) {
	num := func(x float64) string {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "null"
		}
		return strconv.FormatFloat(x, 'f', 4, 64)
	}
	return []byte(`{"value":` + num(iv.Value) + `,"low":` + num(iv.Low) + `,"high":` + num(iv.High) + `}`), nil
}
