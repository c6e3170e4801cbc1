package history

import (
	"testing"

	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/review/synthesis"
)

// files is a Reader over texts by path.
func files(m map[string]string) Reader {
	return func(p string) ([]string, bool) {
		t, ok := m[p]
		if !ok {
			return nil, false
		}
		return Lines(t), true
	}
}

func item(id, file string, start, end int, claim string) synthesis.Item {
	return synthesis.Item{ID: id, Claim: claim, Location: finding.Location{File: file, StartLine: start, EndLine: end}}
}

const before = `package app

func Add(a, b int) int {
	if a < 0 {
		return b
	}
	return a + b
}

func Sub(a, b int) int { return a - b }
`

// A finding whose lines moved is carried to where they are now; one whose
// lines changed, or whose file went away, is resolved; one that points at
// no lines is carried as it is.
func TestCarry(t *testing.T) {
	prior := []synthesis.Item{
		item("S1", "app.go", 4, 6, "Add drops a negative a."),
		item("S2", "app.go", 10, 0, "Sub is untested."),
		item("S3", "gone.go", 1, 1, "A file that was deleted."),
		{ID: "S4", Claim: "The change has no tests."},
	}
	Stamp(prior, files(map[string]string{"app.go": before, "gone.go": "package gone\n"}))
	for _, it := range prior[:3] {
		if it.Anchor == nil || it.Fingerprint == "" {
			t.Fatalf("%s was not stamped", it.ID)
		}
	}
	// Two lines were added above Add (reformatted: the anchor ignores
	// indentation), and Sub was rewritten.
	after := "package app\n\n// Add adds.\n// It is old.\nfunc Add(a, b int) int {\n  if a < 0 {\n    return b\n  }\n\treturn a + b\n}\n\nfunc Sub(a, b int) int { return b - a }\n"
	carried, resolved := Carry("r1", prior, files(map[string]string{"app.go": after}))
	got := map[string]string{}
	for _, it := range carried {
		got[it.ID] = it.History + " " + it.Location.String() + " from " + it.From
	}
	for _, it := range resolved {
		got[it.ID] = it.History + " from " + it.From
	}
	want := map[string]string{
		"S1": "carried over app.go:6-8 from r1",
		"S2": "resolved from r1",
		"S3": "resolved from r1",
		"S4": "carried over  from r1",
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: %q, want %q", id, got[id], w)
		}
	}
}

// A finding the user dismissed stays out, found again or carried, even
// worded a little differently; one found again keeps its history.
func TestMerge(t *testing.T) {
	read := files(map[string]string{"app.go": before})
	dismissedBefore := []synthesis.Item{item("S9", "app.go", 10, 0, "Sub has no test for negative numbers.")}
	Stamp(dismissedBefore, read)
	dismissals := []Dismissal{{Fingerprint: dismissedBefore[0].Fingerprint, File: "app.go", Anchor: dismissedBefore[0].Anchor,
		Claim: dismissedBefore[0].Claim, Reason: "covered elsewhere", RunID: "r0"}}

	carried := []synthesis.Item{item("S1", "app.go", 4, 6, "Add returns b alone when a is negative.")}
	Stamp(carried, read)
	carried, _ = Carry("r1", carried, read)
	current := []synthesis.Item{
		item("S1", "app.go", 4, 6, "Add returns only b when a is negative."),  // found again, reworded
		item("S2", "app.go", 10, 10, "Sub has no test for negative numbers!"), // dismissed before
		item("S3", "app.go", 3, 3, "Add needs a doc comment."),                // new
	}
	Stamp(current, read)
	items, dismissed := Merge(current, carried, dismissals)
	if len(items) != 2 || items[0].History != synthesis.HistoryCarried || items[0].From != "r1" || items[1].History != synthesis.HistoryNew {
		t.Fatalf("items: %+v", items)
	}
	if len(dismissed) != 1 || dismissed[0].Outcome == nil || dismissed[0].Outcome.Reason != "covered elsewhere" || dismissed[0].From != "r0" {
		t.Fatalf("dismissed: %+v", dismissed)
	}
}
