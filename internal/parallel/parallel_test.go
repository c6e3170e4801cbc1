package parallel

import (
	"sync/atomic"
	"testing"
)

// Every index is visited exactly once, whatever the count.
func TestFor(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 1000, 5003} {
		seen := make([]atomic.Int32, n)
		For(n, func(i int) { seen[i].Add(1) })
		for i := range seen {
			if got := seen[i].Load(); got != 1 {
				t.Fatalf("n=%d: index %d visited %d times", n, i, got)
			}
		}
	}
}

// ForWith gives each goroutine its own value: made once before its first
// call, closed once after its last (none when there is nothing to do), and
// every index visited once.
func TestForWith(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 1000, 5003} {
		seen := make([]atomic.Int32, n)
		var opened, closed atomic.Int32
		type state struct{ calls *int }
		ForWith(n, func() state {
			opened.Add(1)
			return state{calls: new(int)}
		}, func(s state, i int) {
			*s.calls++ // one goroutine's own: -race says whether it is shared
			seen[i].Add(1)
		}, func(state) { closed.Add(1) })
		for i := range seen {
			if got := seen[i].Load(); got != 1 {
				t.Fatalf("n=%d: index %d visited %d times", n, i, got)
			}
		}
		if opened.Load() != closed.Load() || (opened.Load() < 1) != (n == 0) || int(opened.Load()) > n {
			t.Errorf("n=%d: %d opened, %d closed", n, opened.Load(), closed.Load())
		}
	}
}
