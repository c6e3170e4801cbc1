package ask

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
)

// squashLowerFirst is squash as it was written first: the whole text
// lowered, then read. squash must give the same for every text.
func squashLowerFirst(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		switch r {
		case '‘', '’', '‚', '′':
			r = '\''
		case '“', '”', '„', '″':
			r = '"'
		case '–', '—', '−':
			r = '-'
		case '…':
			b.WriteString("...")
			space = false
			continue
		}
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return strings.Trim(b.String(), `"' `)
}

// A quote is found in its source as it was: squash lowers each letter as
// strings.ToLower does, invalid UTF-8 and letters that change size
// included.
func TestSquashLowersAsToLower(t *testing.T) {
	pieces := []string{"A", "b", "Z", "z", "@", "[", " ", "\t\n", "\r\v\f", "\x1f", "\u0085", "\u00a0", "İ", "ẞ", "Σ", "ǅ", "\xff", "\xe2\x80", "“", "’", "—", "…", "\"", "'", "Ω", "k", "\u212a", "é", "E\u0301", "ﬃ"}
	rng := rand.New(rand.NewPCG(3, 23))
	texts := []string{"", "   ", "\"'quoted'\"", "Hello  World"}
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	for _, s := range texts {
		if got, want := squash(s), squashLowerFirst(s); got != want {
			t.Fatalf("squash(%q) = %q, want %q", s, got, want)
		}
	}
}

// answer.json holds what json.Marshal writes of the answer, HTML escaped,
// laid out a field a line and a record a line (every answer on one line),
// with a line break at the end.
func TestAnswerJSONLayout(t *testing.T) {
	a := &Answer{RunID: "r1", Question: "Is <b>x</b> & y > z?", Conflicts: json.RawMessage(`{"a": [1, 2],  "b":"<i>"}`),
		Evidence: []Evidence{{ID: "A1", Title: "t\u2028", Points: []Point{{Point: "p", Quote: "q"}}}, {ID: "A2"}}, Notes: []string{"n"}}
	got, err := answerJSON(a)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, got); err != nil {
		t.Fatalf("answer.json is not JSON: %v\n%s", err, got)
	}
	if compact.String() != string(want) {
		t.Errorf("answer.json holds\n%s\nwant\n%s", compact.String(), want)
	}
	lines := strings.Split(string(got), "\n")
	if lines[len(lines)-1] != "" || !strings.Contains(string(got), "\n  \"run_id\": \"r1\",\n") || !strings.Contains(string(got), "\n    {\"id\":\"A2\"") {
		t.Errorf("answer.json is not laid out a field and a record a line:\n%s", got)
	}
	if strings.Contains(string(got), "<b>") {
		t.Error("answer.json is not HTML escaped")
	}
}
