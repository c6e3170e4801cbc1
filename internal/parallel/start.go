package parallel

// Start calls fn on a goroutine of its own and returns at once: work that
// runs beside the caller's. wait returns once fn has; it may be called any
// number of times, from any goroutine, or never.
func Start(fn func()) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	return func() { <-done }
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
