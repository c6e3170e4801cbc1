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
