// Package parallel runs work beside the caller: a loop's iterations on as
// many goroutines as there are processors (For, ForWith), or one piece of
// work on a goroutine of its own (Start, Go). Scenario packages prepare their
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
	ForWith(n, func() struct{} { return struct{}{} }, func(_ struct{}, i int) { fn(i) }, nil)
}

// ForWith is For with a value of each goroutine's own: open makes it on
// that goroutine before its first call of fn, and close (unless nil) is
// given it after its last. A handle that serialises its users, such as an
// os.Root, is opened once for each goroutine this way instead of being
// fought over.
func ForWith[S any](n int, open func() S, fn func(s S, i int), close func(S)) {
	if n <= 0 {
		return
	}
	workers := min(runtime.GOMAXPROCS(0), n)
	work := func(next func() int) {
		s := open()
		if close != nil {
			defer close(s)
		}
		for i := next(); i < n; i = next() {
			fn(s, i)
		}
	}
	if workers <= 1 {
		i := -1
		work(func() int { i++; return i })
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { work(func() int { return int(next.Add(1)) - 1 }) })
	}
	wg.Wait()
}
