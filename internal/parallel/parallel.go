// Package parallel runs a loop's iterations on as many goroutines as there
// are processors.
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
