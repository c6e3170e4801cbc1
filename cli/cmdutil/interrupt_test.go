//go:build unix

package cmdutil

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"
)

// The first Ctrl-C cancels the run's context; a run that does not stop
// (here one that never looks at its context) is ended by the second, with
// the interrupted code, instead of being waited for.
func TestSecondInterruptEndsARunThatDoesNotStop(t *testing.T) {
	exited := make(chan int, 1)
	old := exitNow
	exitNow = func(code int) { exited <- code; select {} } // the process would end here
	defer func() { exitNow = old }()
	cancelled, started := make(chan struct{}), make(chan struct{})
	go Interruptible(context.Background(), "the run's journal", func(ctx context.Context) error {
		go func() { <-ctx.Done(); close(cancelled) }()
		close(started)
		select {} // a read the kernel does not give up
	})
	<-started // the handler is in place
	syscall.Kill(syscall.Getpid(), syscall.SIGINT)
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the first Ctrl-C did not cancel the run's context")
	}
	select {
	case code := <-exited:
		t.Fatalf("the first Ctrl-C ended the process (code %d)", code)
	case <-time.After(200 * time.Millisecond):
	}
	syscall.Kill(syscall.Getpid(), syscall.SIGINT)
	select {
	case code := <-exited:
		if code != ExitInterrupted {
			t.Fatalf("exit code %d, want %d", code, ExitInterrupted)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second Ctrl-C did not end the process")
	}
}

// A run that stops at the first Ctrl-C returns the interrupted error and
// does not end the process.
func TestInterruptStopsARunThatStops(t *testing.T) {
	old := exitNow
	exitNow = func(code int) { t.Errorf("the process was ended (code %d)", code) }
	defer func() { exitNow = old }()
	done, started := make(chan error, 1), make(chan struct{})
	go func() {
		done <- Interruptible(context.Background(), "the run's journal", func(ctx context.Context) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		})
	}()
	<-started
	syscall.Kill(syscall.Getpid(), syscall.SIGINT)
	select {
	case err := <-done:
		var e *ExitError
		if !errors.As(err, &e) || e.Code != ExitInterrupted {
			t.Fatalf("error %v; want the interrupted exit", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not stop")
	}
}
