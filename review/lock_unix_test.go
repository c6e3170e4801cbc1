//go:build unix

package review

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// While one run holds an output directory, another is refused with the
// holder's pid; once it lets go, the next run proceeds.
func TestLockRun(t *testing.T) {
	dir := t.TempDir()
	d := openDir(t, dir)
	unlock, err := lockRun(d)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockRun(d)
	if !errors.Is(err, ErrRunInProgress) || !strings.Contains(err.Error(), fmt.Sprintf("process %d is running a review into", os.Getpid())) {
		t.Fatalf("second lock: %v; want ErrRunInProgress naming this process", err)
	}
	unlock()
	again, err := lockRun(d)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	again()
	if err := checkOutputDir(dir); err != nil {
		t.Errorf("the lock file makes the directory foreign: %v", err)
	}
}
