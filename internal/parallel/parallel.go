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
	if workers <= 1 {
		s := open()
		if close != nil {
			defer close(s)
		}
		for i := range n {
			fn(s, i)
		}
		return
	}
	// The indices are handed out a run at a time: one shared counter
	// bumped for each of 10,000 stats cost more than the loop's own work
	// on two processors. The runs are short enough that a slow index
	// (a file read where the others are known) holds up no other
	// goroutine for long.
	run := int64(min(max(n/(workers*16), 1), 64))
	var next atomic.Int64
	work := func() {
		s := open()
		if close != nil {
			defer close(s)
		}
		for {
			end := next.Add(run)
			start := end - run
			if start >= int64(n) {
				return
			}
			for i := start; i < min(end, int64(n)); i++ {
				fn(s, int(i))
			}
		}
	}
	// The caller is one of the workers: under load, a caller that only
	// waited had to be woken and scheduled again once the others were
	// done.
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}
