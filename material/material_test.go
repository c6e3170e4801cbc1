package material

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestFileLookup(t *testing.T) {
	m := &Material{Type: TypeDiff, Files: []File{
		{Path: "auth/session.go", Changed: []LineRange{{3, 5}}, Shown: []LineRange{{1, 9}}},
		{Path: "a/real.go", Changed: []LineRange{{1, 1}}, Shown: []LineRange{{1, 1}}},
		{Path: "new/name.go", OldPath: "old/name.go", Shown: []LineRange{{2, 2}}},
	}}
	for _, tt := range []struct {
		in, want string
	}{
		{"auth/session.go", "auth/session.go"},
		{"./auth/session.go", "auth/session.go"},
		{"a/auth/session.go", "auth/session.go"},
		{"b/auth/session.go", "auth/session.go"},
		{`auth\session.go`, "auth/session.go"},
		{"auth/session.go (part 2 of 3)", "auth/session.go"},
		{" auth/./session.go ", "auth/session.go"},
		{"a/real.go", "a/real.go"}, // a real "a/" directory wins over the prefix
		{"b/a/real.go", "a/real.go"},
		{"old/name.go", "new/name.go"},
		{"missing.go", ""},
		{"session.go", ""},
	} {
		f, ok := m.File(tt.in)
		got := ""
		if ok {
			got = f.Path
		}
		if got != tt.want {
			t.Errorf("File(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if !m.IsChanged("b/auth/session.go", 4) || m.IsChanged("auth/session.go", 6) || !m.IsShown("auth/session.go", 6) {
		t.Error("IsChanged/IsShown through prefixes")
	}
	if m.IsChanged("missing.go", 1) || m.IsShown("missing.go", 1) {
		t.Error("unknown file reported")
	}
	if got := strings.Join(m.Paths(), ","); got != "auth/session.go,a/real.go,new/name.go" {
		t.Errorf("Paths() = %s", got)
	}
	if !(&Material{}).Empty() || (&Material{Skipped: []Skipped{{"x", "binary file"}}}).Empty() {
		t.Error("Empty")
	}
	// A file pointer from File refers into the material.
	f, _ := m.File("auth/session.go")
	f.Tokens = 42
	if m.Files[0].Tokens != 42 {
		t.Error("File does not return a pointer into Files")
	}
}

func TestParseLine(t *testing.T) {
	var b strings.Builder
	w := newLineWriter(&b, 5)
	w.diffLine(markContext, 12, "ctx")
	w.diffLine(markAdded, 13, "\tadded | with bar")
	w.diffLine(markRemoved, 0, "removed")
	w.diffLine(markAdded, 14, "")
	w.diffLine(markRemoved, 0, "")
	w.diffLine(markContext, 99999, " lead")
	w.plainLine(7, "plain")
	w.plainLine(8, "")
	want := []struct {
		mark byte
		num  int
		text string
	}{
		{' ', 12, "ctx"}, {'+', 13, "\tadded | with bar"}, {'-', 0, "removed"}, {'+', 14, ""}, {'-', 0, ""},
		{' ', 99999, " lead"}, {'|', 7, "plain"}, {'|', 8, ""},
	}
	got := splitLines(b.String())
	if len(got) != len(want) {
		t.Fatalf("%d lines", len(got))
	}
	for i, l := range got {
		mark, num, text := parseLine(l)
		if mark != want[i].mark || num != want[i].num || text != want[i].text {
			t.Errorf("parseLine(%q) = %q %d %q, want %+v", l, mark, num, text, want[i])
		}
	}
	for _, l := range []string{
		"## auth/session.go (modified, +1 -0)", "@@ func F()", "@@", "renamed from x", "deleted file, 3 lines removed",
		"8 lines of context", "", "   -| too few spaces", "12+| no separator", "  12 x| bad marker",
		"context: 8 lines around each change",
	} {
		if isContentLine(l) {
			t.Errorf("isContentLine(%q) = true", l)
		}
	}
	// Ranges grow with increasing line numbers only.
	if len(w.changed) != 1 || w.changed[0] != (LineRange{13, 14}) || len(w.shown) != 2 {
		t.Errorf("ranges: changed %v shown %v", w.changed, w.shown)
	}
}

func TestLanguage(t *testing.T) {
	for p, want := range map[string]string{
		"a/b.go": "go", "x.TS": "typescript", "x.tsx": "typescript", "README.md": "markdown", "k8s.yml": "yaml",
		"Dockerfile": "dockerfile", "build/Dockerfile.prod": "dockerfile", "Makefile": "makefile", "go.mod": "go-mod",
		"main.tf": "terraform", "x.unknown": "", "LICENSE": "", "schema.sql": "sql", "api.proto": "protobuf",
	} {
		if got := Language(p); got != want {
			t.Errorf("Language(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestDiffLarge reads a 50,000-line change (5,000 with -short or -race)
// and splits it: every file is
// reviewed or skipped, every line lands in one chunk. It prints the time
// taken; the lead's benchmark measures it properly.
func TestDiffLarge(t *testing.T) {
	files, per := 50, 1000
	if testing.Short() || raceEnabled {
		files = 5 // the same code paths, a tenth of the size
	}
	r := newRepo(t)
	for i := 0; i < files; i++ {
		r.write(fmt.Sprintf("pkg%02d/file%02d.go", i%7, i), "package p\n\n"+lines("var before = \"a line that is about to change\" //", 1, per))
	}
	r.commit("base")
	for i := 0; i < files; i++ {
		r.write(fmt.Sprintf("pkg%02d/file%02d.go", i%7, i), "package p\n\n"+lines("var after = \"a line that has been changed\" //", 1, per))
	}
	start := time.Now()
	m := r.diff(DiffOptions{})
	read := time.Since(start)
	if len(m.Files)+len(m.Skipped) != files {
		t.Fatalf("%d files, %d skipped", len(m.Files), len(m.Skipped))
	}
	added := 0
	for _, f := range m.Files {
		added += f.Additions
	}
	if added != files*per {
		t.Errorf("%d added lines", added)
	}
	start = time.Now()
	budget := 30000
	chunks := m.Split(budget)
	split := time.Since(start)
	start = time.Now()
	s := m.Analyze()
	analyze := time.Since(start)
	t.Logf("%d-line diff: read %v (%d tokens), split into %d chunks %v, analyze %v (%v)",
		files*per, read, m.Tokens(), len(chunks), split, analyze, s.Categories)
	checkSplit(t, m, budget)
}
