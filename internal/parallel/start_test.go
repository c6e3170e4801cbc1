package parallel

import (
	"sync"
	"testing"
)

// Work started runs beside its caller: here it cannot finish until the
// caller lets it, after Start has returned. Every wait then returns, with
// the result for Go.
func TestStartRunsBesideTheCaller(t *testing.T) {
	release := make(chan struct{})
	ran := false
	wait := Start(func() {
		<-release
		ran = true
	})
	result := Go(func() int {
		<-release
		return 42
	})
	close(release)
	wait()
	wait()
	if !ran {
		t.Error("Start's wait returned before its work did")
	}
	if got := result(); got != 42 || result() != 42 {
		t.Errorf("Go's wait gave %d, want 42", got)
	}
}

// Wait called from many goroutines, some before the work is over and some
// after (the first by the channel, the others by the flag), sees what the
// work wrote every time; the race detector checks that each way orders
// the reads after the writes.
func TestWaitFromManyGoroutines(t *testing.T) {
	release := make(chan struct{})
	var seen []int
	wait := Start(func() {
		<-release
		seen = []int{1, 2, 3}
	})
	errs := make(chan string, 16)
	var wg sync.WaitGroup
	for i := range 16 {
		if i == 8 {
			close(release)
			wait()
		}
		wg.Go(func() {
			for range 100 {
				wait()
				if len(seen) != 3 || seen[2] != 3 {
					errs <- "wait returned before the work's writes could be seen"
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}
