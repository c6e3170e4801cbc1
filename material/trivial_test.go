package material

import (
	"math/rand/v2"
	"testing"
)

func TestIsTrivial(t *testing.T) {
	goFile := "package p\n\n// Add adds two numbers.\nfunc Add(a, b int) int {\n\tif a < b {\n\t\treturn a + b\n\t}\n\treturn b + a\n}\n"
	tests := []struct {
		name       string
		path       string
		before     string
		after      string
		trivial    bool
		wantReason string
	}{
		{"comment reworded", "p.go", goFile, replace(goFile, "// Add adds two numbers.", "// Add returns the sum of a and b.\n// It never fails."), true, "comment-only change"},
		{"block comment", "p.go", goFile, replace(goFile, "// Add adds two numbers.\n", "/*\n * Add adds.\n */\n"), true, "comment-only change"},
		{"python comment", "p.py", "x = 1\n", "# set x\nx = 1\n", true, "comment-only change"},
		{"html comment", "p.html", "<p>x</p>\n", "<!-- note -->\n<p>x</p>\n", true, "comment-only change"},
		{"gofmt spacing", "p.go", goFile, replace(goFile, "return a + b", "return a+b"), true, "whitespace-only change"},
		{"blank lines", "p.go", goFile, replace(goFile, "\treturn b + a\n", "\n\treturn b + a\n\n"), true, "whitespace-only change"},
		{"re-indented go", "p.go", goFile, replace(goFile, "\t\treturn a + b", "        return a + b"), true, "whitespace-only change"},
		{"typo in comment", "p.go", goFile, replace(goFile, "two numbers", "two nubmers"), true, "comment-only change"},
		{"typo in trailing comment", "p.go", "package p\n\nvar x = 1 // teh value\n", "package p\n\nvar x = 1 // the value\n", true, "single small edit such as a typo fix"},
		{"typo in string", "p.go", "package p\n\nvar s = \"recieve\"\n", "package p\n\nvar s = \"receive\"\n", true, "single small edit such as a typo fix"},
		{"typo in docs", "README.md", "# Tool\n\nIt recieves input.\n", "# Tool\n\nIt receives input.\n", true, "single small edit such as a typo fix"},

		{"operator change", "p.go", goFile, replace(goFile, "if a < b {", "if a <= b {"), false, ""},
		{"identifier change", "p.go", goFile, replace(goFile, "return a + b", "return a + a"), false, ""},
		{"config value", "deploy.yaml", "replicas: 3\n", "replicas: 5\n", false, ""},
		{"python indentation", "p.py", "if x:\n    y()\nz()\n", "if x:\n    y()\n    z()\n", false, ""},
		{"yaml indentation", "c.yaml", "a:\n  b: 1\nc: 2\n", "a:\n  b: 1\n  c: 2\n", false, ""},
		{"build constraint", "p.go", goFile, "//go:build linux\n\n" + goFile, false, ""},
		{"shebang", "run.sh", "echo hi\n", "#!/bin/bash\necho hi\n", false, ""},
		{"two edits", "p.go", goFile, replace(replace(goFile, "return a + b", "return a - b"), "return b + a", "return b - a"), false, ""},
		{"code added", "p.go", goFile, replace(goFile, "\treturn b + a\n", "\tlog(a)\n\treturn b + a\n"), false, ""},
		{"new file", "new.go", "", "package p\n", false, ""},
		{"deleted file", "p.go", goFile, "", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRepo(t)
			r.write("base.txt", "base\n")
			if tt.before != "" {
				r.write(tt.path, tt.before)
			}
			r.commit("base")
			if tt.after == "" {
				r.remove(tt.path)
			} else {
				r.write(tt.path, tt.after)
			}
			m := r.diff(DiffOptions{Untracked: true})
			if m.Empty() {
				t.Fatal("no change")
			}
			got, reason := m.IsTrivial()
			if got != tt.trivial || reason != tt.wantReason {
				t.Errorf("IsTrivial() = %v, %q; want %v, %q\n%s", got, reason, tt.trivial, tt.wantReason, m.Text())
			}
		})
	}
	if ok, _ := (&Material{Type: TypeArtifacts, Files: []File{renderText("a.md", []byte("x\n"))}}).IsTrivial(); ok {
		t.Error("artifacts are never trivial")
	}
	m := &Material{Type: TypeDiff, Skipped: []Skipped{{"img.png", reasonBinary}}}
	if ok, _ := m.IsTrivial(); ok {
		t.Error("a skipped file is never trivial")
	}
}

func replace(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	panic("replace: " + old + " not found")
}

func TestEditDistance(t *testing.T) {
	naive := func(a, b []rune) int {
		d := make([][]int, len(a)+1)
		for i := range d {
			d[i] = make([]int, len(b)+1)
			d[i][0] = i
		}
		for j := range d[0] {
			d[0][j] = j
		}
		for i := 1; i <= len(a); i++ {
			for j := 1; j <= len(b); j++ {
				c := 1
				if a[i-1] == b[j-1] {
					c = 0
				}
				d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+c)
			}
		}
		return d[len(a)][len(b)]
	}
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() []rune {
		n := rng.IntN(12)
		w := make([]rune, n)
		for i := range w {
			w[i] = rune('a' + rng.IntN(3))
		}
		return w
	}
	for i := 0; i < 5000; i++ {
		a, b := word(), word()
		for _, limit := range []int{0, 1, 3, 5} {
			want := naive(a, b)
			if want > limit {
				want = limit + 1
			}
			if got := editDistance(a, b, limit); got != want {
				t.Fatalf("editDistance(%q, %q, %d) = %d, want %d", string(a), string(b), limit, got, want)
			}
		}
	}
}
