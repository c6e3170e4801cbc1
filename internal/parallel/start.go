package parallel

import "sync/atomic"

// Start calls fn on a goroutine of its own and returns at once: work that
// runs beside the caller's. wait returns once fn has; it may be called any
// number of times, from any goroutine, or never.
//
// Once fn has returned, wait reads a flag and takes no lock: ask's scan
// calls it for each of 10,000 files from two goroutines at once, and a
// receive from the closed channel took the channel's lock each time.
func Start(fn func()) (wait func()) {
	done := make(chan struct{})
	var over atomic.Bool // set after fn returns: what fn wrote is seen by whoever sees it set
	go func() {
		defer func() {
			over.Store(true)
			close(done)
		}()
		fn()
	}()
	return func() {
		if !over.Load() {
			<-done
		}
	}
}

// Go is Start for work with a result: wait returns fn's result once fn
// has returned.
func Go[T any](fn func() T) (wait func() T) {
	var v T
	w := Start(func() { v = fn() })
	return func() T {
		w()
		return v
	}
}
