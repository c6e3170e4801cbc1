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
		{"typo in error message", "p.go", "package p\n\nfunc f() error {\n\treturn errors.New(\"could not recieve input\")\n}\n", "package p\n\nfunc f() error {\n\treturn errors.New(\"could not receive input\")\n}\n", true, "single small edit such as a typo fix"},
		{"typo in docs", "README.md", "# Tool\n\nIt recieves input.\n", "# Tool\n\nIt receives input.\n", true, "single small edit such as a typo fix"},
		{"doubled letter in docs", "docs/guide.md", "Send the adress.\n", "Send the address.\n", true, "single small edit such as a typo fix"},
		{"inside a block comment in view", "p.c", "/*\n Adds numbers.\n*/\nint add(int a, int b) { return a + b; }\n", "/*\n Sums numbers.\n*/\nint add(int a, int b) { return a + b; }\n", true, "comment-only change"},
		{"jsdoc prose", "p.js", "/**\n * Adds numbers.\n */\nfunction add(a, b) { return a + b; }\n", "/**\n * Sums numbers.\n */\nfunction add(a, b) { return a + b; }\n", true, "comment-only change"},
		{"realigned struct", "p.go", "package p\n\ntype T struct {\n\tA int\n\tBcd int\n}\n", "package p\n\ntype T struct {\n\tA   int\n\tBcd int\n}\n", true, "whitespace-only change"},
		{"comment in a file with struct tags", "p.go", "package p\n\n// T is a thing.\ntype T struct {\n\tA int `json:\"a\"`\n}\n", "package p\n\n// T holds a thing.\ntype T struct {\n\tA int `json:\"a\"`\n}\n", true, "comment-only change"},

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

		// A "*" line is a comment only inside a block comment we saw open.
		{"js continuation line", "price.js", "function total(price) {\n  return price\n    * 2;\n}\n", "function total(price) {\n  return price\n    * 200;\n}\n", false, ""},
		{"code before a block comment", "p.c", "int f(void) {\n\treturn g(); /* note */\n}\n", "int f(void) {\n\treturn h(); /* note */\n}\n", false, ""},
		{"code after a block comment", "p.c", "int f(void) {\n\t/* note */ return g();\n}\n", "int f(void) {\n\t/* note */ return h();\n}\n", false, ""},
		{"star line whose opener is out of view", "notes.js", "/*\n * 1\n * 2\n\nModule notes\n * a\n * b\n * c\n * d\n * e\n * f\n */\n", "/*\n * 1\n * 2\n\nModule notes\n * a\n * b\n * c\n * d\n * x\n * f\n */\n", false, ""},
		// Comments that tools read.
		{"haskell pragma", "M.hs", "{-# LANGUAGE GADTs #-}\nmodule M where\n", "{-# LANGUAGE DataKinds #-}\nmodule M where\n", false, ""},
		{"eslint block directive", "p.js", "let a = 1;\n", "/* eslint-disable */\nlet a = 1;\n", false, ""},
		{"jsdoc type", "p.js", "/** @type {number} */\nlet a = 1;\n", "/** @type {string} */\nlet a = 1;\n", false, ""},
		{"kubebuilder marker", "api/types.go", "package api\n\ntype S struct {\n\t// +kubebuilder:validation:Minimum=1\n\tN int\n}\n", "package api\n\ntype S struct {\n\t// +kubebuilder:validation:Minimum=0\n\tN int\n}\n", false, ""},
		{"sqlc query name", "query.sql", "-- name: GetUser :one\nSELECT * FROM users WHERE id = $1;\n", "-- name: GetUser :many\nSELECT * FROM users WHERE id = $1;\n", false, ""},
		{"dockerfile syntax", "Dockerfile", "FROM alpine\n", "# syntax=docker/dockerfile:1\nFROM alpine\n", false, ""},
		{"php attribute", "p.php", "<?php\n#[Route('/a')]\nfunction a() {}\n", "<?php\n#[Route('/b')]\nfunction a() {}\n", false, ""},
		{"cgo preamble", "c.go", "package p\n\n// int limit = 1;\nimport \"C\"\n", "package p\n\n// int limit = 2;\nimport \"C\"\n", false, ""},
		{"example output", "p_test.go", "package p\n\nfunc ExampleAdd() {\n\tprintln(Add(1, 2))\n\t// Output: 3\n}\n", "package p\n\nfunc ExampleAdd() {\n\tprintln(Add(1, 2))\n\t// Output: 4\n}\n", false, ""},
		{"comment in strict json", "data.json", "{\"a\": 1}\n", "// note\n{\"a\": 1}\n", false, ""},
		{"go.mod deprecation", "go.mod", "module x\n\ngo 1.22\n", "// Deprecated: use x/v2.\nmodule x\n\ngo 1.22\n", false, ""},
		{"golden file", "testdata/out.go", "package out\n\n// one\nvar X = 1\n", "package out\n\n// two\nvar X = 1\n", false, ""},
		// Comment-looking lines inside multi-line strings are content.
		{"go raw string template", "gen.go", "package gen\n\nconst tmpl = `\n// header\nbody\n`\n", "package gen\n\nconst tmpl = `\n// footer\nbody\n`\n", false, ""},
		{"python triple-quoted string", "p.py", "X = \"\"\"\n# heading\n\"\"\"\n", "X = \"\"\"\n# title\n\"\"\"\n", false, ""},
		{"yaml block scalar", "issue.yml", "body: |\n  # Title\n  text\n", "body: |\n  # Heading\n  text\n", false, ""},
		// Whitespace that is content.
		{"space in string literal", "p.go", "package p\n\nvar s = \"a  b\"\n", "package p\n\nvar s = \"a b\"\n", false, ""},
		{"shell assignment", "run.sh", "a=1\necho $a\n", "a = 1\necho $a\n", false, ""},
		{"css descendant selector", "s.css", "div.x { color: red; }\n", "div .x { color: red; }\n", false, ""},
		{"c macro parameters", "m.h", "#define F(x) (x)\n", "#define F (x) (x)\n", false, ""},
		{"operators fuse", "p.c", "int f(int i, int j) {\n\treturn i + ++j;\n}\n", "int f(int i, int j) {\n\treturn i+++j;\n}\n", false, ""},
		{"regular expression literal", "p.js", "const re = /a  b/;\n", "const re = /a b/;\n", false, ""},
		{"yaml value spacing", "c.yaml", "name: a b\n", "name: a  b\n", false, ""},
		{"unknown format", "data.xyz", "a b\n", "a  b\n", false, ""},
		// Small edits that change meaning.
		{"single-word string", "p.go", "package p\n\nvar s = \"recieve\"\n", "package p\n\nvar s = \"receive\"\n", false, ""},
		{"http method", "p.go", "package p\n\nvar m = \"GET\"\n", "package p\n\nvar m = \"PUT\"\n", false, ""},
		{"url scheme", "p.go", "package p\n\nvar u = \"http\"\n", "package p\n\nvar u = \"https\"\n", false, ""},
		{"sql in string", "p.go", "package p\n\nfunc f() {\n\tdb.Query(\"SELECT name FROM users\")\n}\n", "package p\n\nfunc f() {\n\tdb.Query(\"SELECT name FROM user\")\n}\n", false, ""},
		{"now to not in docs", "SECURITY.md", "Tokens are now revoked.\n", "Tokens are not revoked.\n", false, ""},
		{"never to ever in docs", "README.md", "It never retries.\n", "It ever retries.\n", false, ""},
		{"maximum to minimum in docs", "README.md", "The maximum is ten.\n", "The minimum is ten.\n", false, ""},
		{"inline code in docs", "README.md", "Run `make tset` first.\n", "Run `make test` first.\n", false, ""},
		{"fenced code in docs", "README.md", "Run:\n\n```\nmake tset\n```\n", "Run:\n\n```\nmake test\n```\n", false, ""},
		{"indented code in docs", "README.md", "Run:\n\n    make tset\n", "Run:\n\n    make test\n", false, ""},
		{"license", "LICENSE", "MIT License\n", "MPL License\n", false, ""},
		{"requirement", "requirements.txt", "flask==2.0\n", "flasx==2.0\n", false, ""},
		{"trailing directive", "p.go", "package p\n\nvar x = f() //nolint:errcheck\n", "package p\n\nvar x = f() //nolint:errchek\n", false, ""},
		{"hash inside quotes", "p.py", "x = 'a#bcde'\n", "x = 'a#bcdf'\n", false, ""},
		{"deleted file", "p.go", goFile, "", false, ""},
		// Secrets: masked, two keys look alike, and a key in a comment is
		// still a key.
		{"key replaced by another", "p.go", "package p\n\nvar key = \"" + testAWSKey + "\"\n", "package p\n\nvar key = \"" + testAWSKey2 + "\"\n", false, ""},
		{"token added in a comment", "p.go", goFile, replace(goFile, "// Add adds two numbers.", "// Add adds two numbers (deploy token "+testGitHubPAT+")."), false, ""},
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
