package cmdutil

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

type theme string

type label string

func (l label) String() string { return "label:" + string(l) }

// A value from the material (a corpus title, a theme name, an observer's
// name) is printed as one line with its control characters escaped; sot's
// own format, its line breaks included, and values that are not text are
// printed as fmt prints them.
func TestTerminalHelpers(t *testing.T) {
	const evil = "t\x1b]0;pwned\x07\x1b[2J\nsot: warning: fake"
	const shown = `t\x1b]0;pwned\x07\x1b[2J\nsot: warning: fake`
	for _, tt := range []struct {
		name  string
		print func(*bytes.Buffer)
		want  string
	}{
		{"Warn", func(b *bytes.Buffer) { Warn(b, evil) }, "sot: warning: " + shown + "\n"},
		{"Say", func(b *bytes.Buffer) { Say(b, evil) }, "sot: " + shown + "\n"},
		{"Fprintf string", func(b *bytes.Buffer) { Fprintf(b, "  - %s: %d\n", evil, 3) }, "  - " + shown + ": 3\n"},
		{"Fprintf named string", func(b *bytes.Buffer) { Fprintf(b, "%s|%v\n", theme(evil), label("a\rb")) }, shown + `|label:a\rb` + "\n"},
		{"Fprintf slice", func(b *bytes.Buffer) { Fprintf(b, "%s\n", []string{"a\x1b", "b"}) }, `[a\x1b b]` + "\n"},
		{"Fprintf named slice", func(b *bytes.Buffer) { Fprintf(b, "%v\n", []theme{"a\u202e"}) }, `[a\u202e]` + "\n"},
		{"Fprintf error", func(b *bytes.Buffer) { Fprintf(b, "%v\n", errors.New("e\u009b1m")) }, `e\u009b1m` + "\n"},
		{"Fprintf numbers", func(b *bytes.Buffer) { Fprintf(b, "%d %.1f %s %v\n", 3, 1.5, time.Second, nil) }, "3 1.5 1s <nil>\n"},
		{"Fprintf clean", func(b *bytes.Buffer) { Fprintf(b, "sot: %s, %s\n", "Zürich — 会議", "a b") }, "sot: Zürich — 会議, a b\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			tt.print(&b)
			if b.String() != tt.want {
				t.Errorf("got %q, want %q", b.String(), tt.want)
			}
			if strings.ContainsAny(b.String(), "\x1b\x07\r\u202e\u009b") {
				t.Errorf("%q holds a control character", b.String())
			}
		})
	}
}

// A question's choices (persona names, say) are shown escaped, and the
// answer is still the choice as it was given.
func TestTerminalAskerEscapesChoices(t *testing.T) {
	var out bytes.Buffer
	io := &IOStreams{In: strings.NewReader("1\n"), ErrOut: &out}
	got, err := TerminalAsker(io)("Which one?", []string{"a\x1b[2J", "b"})
	if err != nil || got != "a\x1b[2J" {
		t.Fatalf("got %q, %v", got, err)
	}
	if strings.Contains(out.String(), "\x1b") || !strings.Contains(out.String(), `1) a\x1b[2J`) {
		t.Errorf("the choice is not shown escaped: %q", out.String())
	}
}

// The asker reads an answer and nothing after it: what the user typed
// next (moderator mode's first question, after the yes that enters it) is
// still there for whoever reads the input next.
func TestTerminalAskerLeavesTheRest(t *testing.T) {
	const rest = "ask security is the cookie attacker controlled?\ndone\n"
	tests := []struct {
		answer  string
		choices []string
	}{
		{"y\n", []string{"yes", "no"}},
		{"maybe\n\n", []string{"yes", "no"}},
		{"1\n", []string{"a", "b"}},
		{"free text\n", nil},
	}
	for _, tt := range tests {
		in := strings.NewReader(tt.answer + rest)
		if _, err := TerminalAsker(&IOStreams{In: in, ErrOut: io.Discard})("Enter moderator mode?", tt.choices); err != nil {
			t.Fatal(err)
		}
		if left, _ := io.ReadAll(in); string(left) != rest {
			t.Errorf("%q: the input left after the answer is %q", tt.answer, left)
		}
	}
}
