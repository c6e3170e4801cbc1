package cmdutil

import (
	"os"
	"strings"
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

// A yes/no question takes y, yes and Enter for yes and n or no for no, and
// asks again on anything else.
func TestTerminalAskerYesNo(t *testing.T) {
	tests := []struct{ in, want string }{
		{"\n", "yes"}, {"y\n", "yes"}, {"YES\n", "yes"}, {"n\n", "no"}, {"No\n", "no"}, {"maybe\nn\n", "no"},
	}
	for _, tt := range tests {
		var errOut strings.Builder
		ask := TerminalAsker(&IOStreams{In: strings.NewReader(tt.in), ErrOut: &errOut})
		got, err := ask("Enter moderator mode?", []string{"yes", "no"})
		if err != nil || got != tt.want {
			t.Errorf("%q: %q, %v; want %q", tt.in, got, err, tt.want)
		}
		if !strings.Contains(errOut.String(), "[Y/n]") {
			t.Errorf("%q: the question does not show [Y/n]: %q", tt.in, errOut.String())
		}
	}
}
