package material

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/sotlabs/sot/internal/tokens"
)

// splitMaterials returns a diff and an artifact material with files of very
// different sizes: many hunks, one huge hunk, a huge document without
// hunks, deletions, renames and small files.
func splitMaterials(t *testing.T) []*Material {
	r := newRepo(t)
	var funcs strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&funcs, "func F%d() int {\n%s\treturn %d\n}\n\n", i, lines("\t// body of F", 1, 6), i)
	}
	v1 := "package many\n\n" + funcs.String()
	r.write("pkg/many.go", v1)
	r.write("pkg/small.go", "package pkg\n\nvar S = 1\n")
	r.write("pkg/gone.go", lines("// gone", 1, 80))
	r.write("docs/old.md", lines("doc", 1, 30))
	r.commit("base")
	v2 := v1
	for i := 0; i < 40; i += 3 {
		v2 = strings.Replace(v2, fmt.Sprintf("\treturn %d\n", i), fmt.Sprintf("\tx := %d\n\treturn x * 2\n", i), 1)
	}
	r.write("pkg/many.go", v2)
	r.write("pkg/small.go", "package pkg\n\nvar S = 2\n")
	r.remove("pkg/gone.go")
	r.mv("docs/old.md", "docs/new.md")
	r.write("a/huge.go", "package a\n\n"+lines("var v = \"a fairly long line to make many tokens\" //", 1, 600))
	r.write("z/last.txt", "last\n")
	d := r.diff(DiffOptions{Untracked: true})

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "book.txt"), lines("It was a dark and stormy night; the rain fell in torrents, line", 1, 600))
	writeFile(t, filepath.Join(dir, "note.md"), "# Note\n\nShort.\n")
	writeFile(t, filepath.Join(dir, "one-long-line.txt"), strings.Repeat("word ", 3000)+"\n")
	a, err := Artifacts([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	return []*Material{d, a}
}

// contentLines returns the numbered and removed lines of a text.
func contentLines(text string) []string {
	var out []string
	for _, l := range splitLines(text) {
		if isContentLine(l) {
			out = append(out, l)
		}
	}
	return out
}

// joinPieces joins the pieces of cut lines (see cutLine) back into whole
// lines. A piece is joined to the line before it only when that line ends
// with the matching "continues" marker and the piece starts with the
// matching "continued" marker.
func joinPieces(lines []string) []string {
	var out []string
	for _, l := range lines {
		mark, num, text := parseLine(l)
		name := "line " + strconv.Itoa(num)
		if mark == markRemoved {
			name = "removed line"
		}
		if k := len(out) - 1; k >= 0 {
			tail := " (" + name + " continues)"
			if rest, ok := strings.CutPrefix(text, "("+name+" continued) "); ok && strings.HasSuffix(out[k], tail) {
				if pm, pn, _ := parseLine(out[k]); pm == mark && pn == num {
					out[k] = strings.TrimSuffix(out[k], tail) + rest
					continue
				}
			}
		}
		out = append(out, l)
	}
	return out
}

func TestSplitEveryLineOnce(t *testing.T) {
	for _, m := range splitMaterials(t) {
		for _, budget := range []int{40, 150, 700, 3000, 20000, m.Tokens(), 0} {
			t.Run(fmt.Sprintf("%s/%d", m.Type, budget), func(t *testing.T) {
				checkSplit(t, m, budget)
			})
		}
	}
}

func checkSplit(t *testing.T, m *Material, budget int) {
	t.Helper()
	chunks := m.Split(budget)
	if budget <= 0 || m.Tokens() <= budget {
		if len(chunks) != 1 || len(chunks[0].Files) != len(m.Files) {
			t.Fatalf("everything fits, yet %d chunks", len(chunks))
		}
	}
	got := make(map[string][]string)
	parts := make(map[string][]int)
	for i, c := range chunks {
		if c.Index != i+1 {
			t.Errorf("chunk %d has index %d", i+1, c.Index)
		}
		if c.Tokens != sumTokens(c.Files) {
			t.Errorf("chunk %d: Tokens %d, files sum to %d", c.Index, c.Tokens, sumTokens(c.Files))
		}
		if budget > 0 && c.Tokens > budget {
			if n := len(contentLines(c.Text())); n > 1 {
				t.Errorf("chunk %d: %d tokens over budget %d with %d lines", c.Index, c.Tokens, budget, n)
			}
		}
		for _, f := range c.Files {
			if len(f.Text) < 1<<15 && f.Tokens != tokens.Count(f.Text) {
				t.Errorf("%s: Tokens %d, text has %d", f.Path, f.Tokens, tokens.Count(f.Text))
			}
			base := f.Path
			if b, k, n, ok := splitPartName(f.Path); ok {
				base = b
				parts[base] = append(parts[base], k)
				if !strings.HasPrefix(f.Text, "## "+f.Path) {
					t.Errorf("part header: %q", firstLine(f.Text))
				}
				if len(parts[base]) == n && k != n {
					t.Errorf("%s: parts out of order", f.Path)
				}
			}
			got[base] = append(got[base], contentLines(f.Text)...)
			orig, ok := m.File(base)
			if !ok {
				t.Fatalf("chunk file %q is not in the material", f.Path)
			}
			for _, r := range f.Changed {
				if !inRanges(orig.Changed, r.Start) || !inRanges(orig.Changed, r.End) {
					t.Errorf("%s: changed range %v not in the file's %v", f.Path, r, orig.Changed)
				}
			}
			for _, r := range f.Shown {
				if !inRanges(orig.Shown, r.Start) || !inRanges(orig.Shown, r.End) {
					t.Errorf("%s: shown range %v not in the file's", f.Path, r)
				}
			}
		}
	}
	for _, f := range m.Files {
		if diff := cmp.Diff(contentLines(f.Text), joinPieces(got[f.Path])); diff != "" {
			t.Errorf("%s: lines differ across chunks (-want +got):\n%.2000s", f.Path, diff)
		}
		if ks := parts[f.Path]; len(ks) > 0 {
			for i, k := range ks {
				if k != i+1 {
					t.Errorf("%s: part numbers %v", f.Path, ks)
					break
				}
			}
		}
	}
	for p := range got {
		if _, ok := m.File(p); !ok {
			t.Errorf("unknown file %q in chunks", p)
		}
	}
}

func TestSplitKeepsDirectoriesTogether(t *testing.T) {
	mk := func(p string, n int) File {
		return renderText(p, []byte(lines("some words here", 1, n)))
	}
	m := &Material{Type: TypeArtifacts, Files: []File{mk("b/2.md", 10), mk("a/1.md", 10), mk("b/1.md", 10), mk("a/2.md", 10)}}
	per := m.Tokens() / 4
	chunks := m.Split(2*per + 1)
	var got [][]string
	for _, c := range chunks {
		got = append(got, c.Paths())
	}
	want := [][]string{{"a/1.md", "a/2.md"}, {"b/1.md", "b/2.md"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

func TestSplitHunkParts(t *testing.T) {
	r := newRepo(t)
	var funcs strings.Builder
	for i := 0; i < 6; i++ {
		fmt.Fprintf(&funcs, "func F%d() int {\n%s\treturn %d\n}\n\n", i, lines("\t// body", 1, 30), i)
	}
	v1 := "package p\n\n" + funcs.String()
	r.write("p.go", v1)
	r.commit("base")
	v2 := v1
	for i := 0; i < 6; i += 2 { // unchanged functions keep the hunks apart
		v2 = strings.Replace(v2, fmt.Sprintf("\treturn %d\n", i), fmt.Sprintf("\treturn %d + 1\n", i), 1)
	}
	r.write("p.go", v2)
	m := r.diff(DiffOptions{})
	f := m.Files[0]
	if n := strings.Count(f.Text, "\n@@"); n != 3 {
		t.Fatalf("%d hunks, want 3:\n%s", n, f.Text)
	}
	half := m.Tokens()/2 + 20
	chunks := m.Split(half)
	if len(chunks) < 2 {
		t.Fatalf("%d chunks", len(chunks))
	}
	for _, c := range chunks {
		for _, pf := range c.Files {
			// Parts hold whole hunks: each starts with an "@@" line that
			// is not a continuation.
			body := splitLines(pf.Text)[1:]
			if !strings.HasPrefix(body[0], "@@ ") || strings.Contains(pf.Text, "(continued)") {
				t.Errorf("part does not start at a hunk:\n%s", pf.Text)
			}
			if !strings.Contains(body[len(body)-1], "|") {
				t.Errorf("part ends with %q", body[len(body)-1])
			}
			if pf.Status != StatusModified || pf.Language != "go" || pf.Additions == 0 || pf.Deletions == 0 {
				t.Errorf("part fields: %+v", pf)
			}
			if mf, ok := m.File(pf.Path); !ok || mf.Path != "p.go" {
				t.Errorf("File(%q) does not find the file", pf.Path)
			}
		}
	}
	checkSplit(t, m, half)
	if got := slices.Collect(func(yield func(string) bool) {
		for _, c := range chunks {
			for _, p := range c.Paths() {
				if !yield(p) {
					return
				}
			}
		}
	}); !slices.Equal(slices.Compact(got), []string{"p.go"}) {
		t.Errorf("chunk paths %v", got)
	}
}

func TestSplitPartName(t *testing.T) {
	for _, tt := range []struct {
		in   string
		base string
		i, n int
		ok   bool
	}{
		{"a.go (part 2 of 3)", "a.go", 2, 3, true},
		{"dir/x (y).md (part 10 of 12)", "dir/x (y).md", 10, 12, true},
		{"a.go (part 4 of 3)", "a.go (part 4 of 3)", 0, 0, false},
		{"a.go (part two of 3)", "a.go (part two of 3)", 0, 0, false},
		{"a.go", "a.go", 0, 0, false},
	} {
		base, i, n, ok := splitPartName(tt.in)
		if base != tt.base || i != tt.i || n != tt.n || ok != tt.ok {
			t.Errorf("splitPartName(%q) = %q %d %d %v", tt.in, base, i, n, ok)
		}
	}
	if partName("a.go", 2, 3) != "a.go (part 2 of 3)" {
		t.Error(partName("a.go", 2, 3))
	}
}

// oneLineJSON returns a minified JSON array of about n bytes on one line,
// with some non-ASCII text so that cuts must respect UTF-8.
func oneLineJSON(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"item-%d","note":"naïve café 東京 %d","v":%d.%03d}`, i, i*7919%10007, i%97, i*31%1000, i%1000)
	}
	b.WriteByte(']')
	return b.String()
}

// TestSplitLongLine splits files whose lines are larger than the budget:
// every chunk fits, and the pieces of each line put together give the
// line back exactly.
func TestSplitLongLine(t *testing.T) {
	// Lines of 120 KB, 60 KB, 70 KB and 940 KB; a fifth of that with
	// -short or -race, where tokenizing is much slower.
	kb := 1 << 10
	if testing.Short() || raceEnabled {
		kb /= 5
	}
	data := "package data; var Data = []byte(" + strconv.Quote(oneLineJSON(120*kb)) + ")"
	old, cur, big := oneLineJSON(60*kb), oneLineJSON(70*kb), 940*kb
	r := newRepo(t)
	r.write("mod/old.json", old+"\n")
	r.write("mod/small.go", "package mod\n")
	r.commit("base")
	r.write("data.go", data)          // one line, untracked, no final newline
	r.write("mod/old.json", cur+"\n") // a long removed and a long added line
	diffM := r.diff(DiffOptions{Untracked: true})

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "min.json"), oneLineJSON(big))
	writeFile(t, filepath.Join(dir, "notes.txt"), "short\n"+strings.Repeat("x", 5000)+"\nshort again\n")
	artM, err := Artifacts([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	// source gives the lines of each file as the material shows them: the
	// removed line of mod/old.json comes before the added one.
	source := map[string][]string{
		"data.go":      {data},
		"mod/old.json": {old, cur},
		"min.json":     {oneLineJSON(big)},
		"notes.txt":    {"short", strings.Repeat("x", 5000), "short again"},
	}

	tests := []struct {
		name   string
		m      *Material
		budget int
	}{
		{"diff/256", diffM, 256},
		{"diff/1000", diffM, 1000},
		{"diff/8000", diffM, 8000},
		{"artifacts/256", artM, 256},
		{"artifacts/30000", artM, 30000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chunks := tt.m.Split(tt.budget)
			lines := make(map[string][]string)
			for _, c := range chunks {
				if c.Tokens > tt.budget {
					t.Errorf("chunk %d: %d tokens, budget %d", c.Index, c.Tokens, tt.budget)
				}
				for _, f := range c.Files {
					if n := tokens.Count(f.Text); n != f.Tokens {
						t.Errorf("%s: %d tokens counted, %d recorded", f.Path, n, f.Tokens)
					}
					base, _, _, _ := splitPartName(f.Path)
					lines[base] = append(lines[base], contentLines(f.Text)...)
				}
			}
			for p, want := range source {
				if _, ok := tt.m.File(p); !ok {
					continue
				}
				var got []string
				for _, l := range joinPieces(lines[p]) {
					_, _, text := parseLine(l)
					got = append(got, text)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s: the pieces do not give the lines back: %d lines, want %d", p, len(got), len(want))
					for i := range min(len(got), len(want)) {
						if got[i] != want[i] {
							t.Errorf("line %d differs: %d bytes, want %d", i+1, len(got[i]), len(want[i]))
						}
					}
				}
			}
			checkSplit(t, tt.m, tt.budget)
		})
	}

	// The pieces show where a line continues, and the line is counted
	// once, in the part that starts it.
	f, _ := diffM.File("data.go")
	parts, _ := splitFile(*f, tokens.Count(f.Text), 1000, tokens.Count)
	if len(parts) < 3 {
		t.Fatalf("%d parts", len(parts))
	}
	first, second := splitLines(parts[0].Text), splitLines(parts[1].Text)
	if !strings.HasPrefix(first[2], "   1 +| package data; var Data") || !strings.HasSuffix(first[2], " (line 1 continues)") {
		t.Errorf("first piece: %.60q ... %q", first[2], first[2][max(0, len(first[2])-40):])
	}
	if second[1] != "@@ (continued)" || !strings.HasPrefix(second[2], "   1 +| (line 1 continued) ") {
		t.Errorf("second part starts with %q, %.60q", second[1], second[2])
	}
	for i, p := range parts {
		if (p.Additions == 1) != (i == 0) || !slices.Equal(p.Changed, []LineRange{{1, 1}}) {
			t.Errorf("part %d: +%d, changed %v", i+1, p.Additions, p.Changed)
		}
	}
}

func TestCutText(t *testing.T) {
	for _, text := range []string{
		strings.Repeat("ab", 500),
		strings.Repeat("東京", 300),
		strings.Repeat("😀", 300),
		strings.Repeat("a b, c; ", 200),
	} {
		for _, limit := range []int{1, 3, 16, 100} {
			pieces, counts := cutText(text, limit)
			if strings.Join(pieces, "") != text {
				t.Errorf("%.10q/%d: pieces do not join to the text", text, limit)
			}
			for i, p := range pieces {
				if p == "" || !utf8.ValidString(p) || counts[i] != tokens.Count(p) {
					t.Errorf("%.10q/%d: piece %d %q (%d tokens recorded)", text, limit, i, p, counts[i])
				}
				if counts[i] > limit && utf8.RuneCountInString(p) > 1 {
					t.Errorf("%.10q/%d: piece %d has %d tokens", text, limit, i, counts[i])
				}
			}
		}
	}
}

// SplitBy measures each file once with the caller's measure, packs by it,
// and gives each chunk the measure of its text (blank lines between files
// included), leaving the files' own counts alone. The measure here is
// additive over lines, as a fence's is: bytes plus three per line.
func TestSplitByMeasuresEachFileOnce(t *testing.T) {
	for _, m := range splitMaterials(t) {
		var mu sync.Mutex
		measured := map[string]int{}
		size := func(text string) int {
			mu.Lock()
			measured[text]++
			mu.Unlock()
			return len(text) + 3*strings.Count(text, "\n")
		}
		whole := 0
		for _, f := range m.Files {
			whole += size(f.Text) + size("\n")
		}
		clear(measured)
		for _, budget := range []int{whole / 5, whole, 0} {
			t.Run(fmt.Sprintf("%s/%d", m.Type, budget), func(t *testing.T) {
				clear(measured)
				chunks := m.SplitBy(budget, size)
				if budget > 0 && budget < whole && len(chunks) < 2 {
					t.Fatalf("%d chunk(s) for a budget of a fifth", len(chunks))
				}
				for _, f := range m.Files {
					if measured[f.Text] != 1 {
						t.Errorf("%s measured %d times", f.Path, measured[f.Text])
					}
				}
				got := map[string][]string{}
				for _, c := range chunks {
					if n := len(c.Text()) + 3*strings.Count(c.Text(), "\n"); n != c.Tokens {
						t.Errorf("chunk %d: Tokens %d, its text measures %d", c.Index, c.Tokens, n)
					}
					if budget > 0 && c.Tokens > budget && len(contentLines(c.Text())) > 1 {
						t.Errorf("chunk %d: %d over the budget of %d", c.Index, c.Tokens, budget)
					}
					for _, f := range c.Files {
						if _, _, _, part := splitPartName(f.Path); !part {
							if orig, _ := m.File(f.Path); orig.Tokens != f.Tokens {
								t.Errorf("%s: Tokens changed from %d to %d", f.Path, orig.Tokens, f.Tokens)
							}
						}
						base, _, _, _ := splitPartName(f.Path)
						got[base] = append(got[base], contentLines(f.Text)...)
					}
				}
				for _, f := range m.Files {
					if diff := cmp.Diff(contentLines(f.Text), joinPieces(got[f.Path])); diff != "" {
						t.Errorf("%s: the chunks do not hold its lines once each (-want +got):\n%s", f.Path, diff)
					}
				}
			})
		}
	}
}
