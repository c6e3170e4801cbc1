//go:build unix

package run

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/sotlabs/sot/engine"
)

// While one process holds a run directory, another is refused with a user
// error naming the holder; once it lets go, the next proceeds, and the
// lock file alone does not make the directory foreign.
func TestLock(t *testing.T) {
	dir := t.TempDir()
	d := openTest(t, dir)
	unlock, err := d.Lock("an answer")
	if err != nil {
		t.Fatal(err)
	}
	if !Running(dir) {
		t.Error("Running does not see the lock")
	}
	_, err = d.Lock("an answer")
	if !errors.Is(err, ErrRunInProgress) || !engine.IsUserError(err) || !strings.Contains(err.Error(), fmt.Sprintf("process %d is running an answer into", os.Getpid())) {
		t.Fatalf("second lock: %v; want ErrRunInProgress naming this process", err)
	}
	unlock()
	if Running(dir) {
		t.Error("Running still sees a lock")
	}
	again, err := d.Lock("an answer")
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	again()
	if err := Check("", dir, testLayout); err != nil {
		t.Errorf("the lock file makes the directory foreign: %v", err)
	}
}

// Start holds the run's directory until Close: a second Start is refused
// while the first holds it, and clears an earlier run's files once it may.
func TestStart(t *testing.T) {
	dir := t.TempDir()
	first, old, err := Start("", dir, testLayout, testKey, "an answer", "rone")
	if err != nil || old != "" {
		t.Fatalf("Start: %v, old %q", err, old)
	}
	if err := first.Save(State{RunID: "rone"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Start("", dir, testLayout, testKey, "an answer", "rtwo"); !errors.Is(err, ErrRunInProgress) {
		t.Fatalf("a second Start while the first holds the directory: %v", err)
	}
	first.Close()
	second, old, err := Start("", dir, testLayout, testKey, "an answer", "rtwo")
	if err != nil || old != "rone" {
		t.Fatalf("after Close: %v, old %q", err, old)
	}
	second.Close()
}
