package cmdutil

import (
	"os"
	"testing"
)

// Jobs run from cron, CI or ssh -n read /dev/null or a pipe: neither is a
// person who could answer a question.
func TestNotATerminal(t *testing.T) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	plain, err := os.Create(t.TempDir() + "/file")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for name, f := range map[string]*os.File{"/dev/null": devnull, "a pipe": r, "a file": plain} {
		if isTerminal(f) {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
}
