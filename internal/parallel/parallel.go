// Package parallel runs work beside the caller: a loop's iterations on as
// many goroutines as there are processors (For), or one piece of work on a
// goroutine of its own (Start, Go). Scenario packages prepare their
// material with it, so that they start no goroutine themselves.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls fn for 0 to n-1, on at most GOMAXPROCS goroutines, and returns
// when every call has. Each index is passed once; their order is not fixed.
func For(n int, fn func(int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}
