package stack

import (
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/middleware"
)

// Resume puts a run's journal in front of the stack (see UseJournal) and
// counts what its recorded calls cost toward the budget, so that a resumed
// run's limits cover what it spent before.
func (s *Stack) Resume(j *middleware.Journal) {
	s.UseJournal(j)
	if calls, byModel := j.LoadedUsage(); calls > 0 {
		u, cost := s.priced(byModel)
		s.Meter.AddPrior(calls, u, cost)
	}
}

// Spent is what a run cost: the calls it made now, and the calls its
// journal replayed, at what they cost when they were made.
type Spent struct {
	// Calls and Cost cover the whole run; NewCalls and NewCost only the
	// calls made now.
	Calls, NewCalls int
	Cost, NewCost   float64
	Usage           llm.Usage
	// Replayed calls came from the journal, CacheHits from the response
	// cache.
	Replayed, CacheHits int
	// Unpriced lists the models whose calls count no cost.
	Unpriced []string
}

// Spent reports what the run has cost so far.
func (s *Stack) Spent() Spent {
	t := s.Meter.Totals()
	out := Spent{Calls: t.Calls, NewCalls: t.Calls, Cost: t.Cost, NewCost: t.Cost, Usage: t.Usage, Unpriced: t.Unpriced}
	if s.Cache != nil {
		out.CacheHits = s.Cache.Hits()
	}
	if s.Journal != nil {
		_, _, out.Replayed = s.Journal.Stats()
		calls, byModel := s.Journal.ReplayedUsage()
		before, cost := s.priced(byModel)
		out.Calls += calls
		out.Cost += cost
		out.Usage = out.Usage.Add(before)
	}
	return out
}

// priced sums usage recorded per model, with its cost at the meter's
// prices (a model without a price costs nothing, as the meter counts it).
func (s *Stack) priced(byModel map[string]llm.Usage) (llm.Usage, float64) {
	var u llm.Usage
	var cost float64
	for model, mu := range byModel {
		u = u.Add(mu)
		c, _ := s.Meter.Cost(model, mu)
		cost += c
	}
	return u, cost
}
