package stack

import (
	"sync"

	"github.com/sotlabs/sot/llm"
)

// Ledger carries one command's spending from stack to stack, so that its
// budgets (--max-calls, --max-tokens, --max-cost) cap the command as a
// whole when it makes several runs, each with a stack of its own: the
// configurations of sot ask --compare, the passages of sot debate --graph.
// A stack the ledger tracks counts what the stacks tracked before it spent
// in this process as spent already; what their journals replayed cost
// nothing now and is not counted again.
type Ledger struct {
	mu     sync.Mutex
	stacks []*Stack
}

// Track counts what the stacks tracked so far have spent toward st's
// budget, then tracks st; it returns st.
func (l *Ledger) Track(st *Stack) *Stack {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.stacks {
		t := s.Meter.Totals()
		st.Meter.AddPrior(t.Calls, t.Usage, t.Cost)
	}
	l.stacks = append(l.stacks, st)
	return st
}

// Used is what the stacks tracked so far have spent in this process.
func (l *Ledger) Used() (calls int, u llm.Usage, cost float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.stacks {
		t := s.Meter.Totals()
		calls += t.Calls
		u = u.Add(t.Usage)
		cost += t.Cost
	}
	return calls, u, cost
}
