package parallel

import "testing"

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
