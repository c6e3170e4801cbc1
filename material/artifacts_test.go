package material

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestArtifacts(t *testing.T) {
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	writeFile(t, filepath.Join(docs, "b.md"), "# B\r\n\r\nSecond.\r\n")
	writeFile(t, filepath.Join(docs, "a.md"), "\xef\xbb\xbf# A\n\nFirst.\n")
	writeFile(t, filepath.Join(docs, "sub", "c.yaml"), "key: value\n")
	writeFile(t, filepath.Join(docs, ".git", "config"), "[core]\n")
	writeFile(t, filepath.Join(docs, ".cache", "x.md"), "x\n")
	writeFile(t, filepath.Join(docs, ".env"), "TOKEN=x\n")
	writeFile(t, filepath.Join(docs, "node_modules", "m.js"), "x\n")
	writeFile(t, filepath.Join(docs, "logo.png"), "\x89PNG\x00\x00")
	writeFile(t, filepath.Join(docs, "latin1.txt"), "caf\xe9\n")
	writeFile(t, filepath.Join(docs, "empty.md"), "")
	writeFile(t, filepath.Join(docs, "huge.txt"), strings.Repeat("x", MaxArtifactBytes+1))
	writeFile(t, filepath.Join(docs, "go.sum"), "x\n")
	writeFile(t, filepath.Join(dir, "design.md"), "Design\nline two\n")
	t.Chdir(dir)

	m, err := Artifacts([]string{"docs", "./design.md", "docs/a.md"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Type != TypeArtifacts || m.Coordinates != "docs, design.md, docs/a.md" {
		t.Errorf("type %q coordinates %q", m.Type, m.Coordinates)
	}
	if diff := cmp.Diff([]string{"design.md", "docs/a.md", "docs/b.md", "docs/sub/c.yaml"}, m.Paths()); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	want := map[string]string{
		"docs/.cache":       "hidden directory",
		"docs/.env":         "hidden file",
		"docs/node_modules": "vendored",
		"docs/logo.png":     "binary file",
		"docs/latin1.txt":   "not UTF-8 text",
		"docs/empty.md":     "empty file",
		"docs/huge.txt":     "file of 1048577 bytes exceeds the 1 MiB limit",
		"docs/go.sum":       "lock file",
	}
	if diff := cmp.Diff(want, skippedMap(m)); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	a, _ := m.File("docs/a.md")
	if a.Text != "## docs/a.md\n   1 | # A\n   2 |\n   3 | First.\n" {
		t.Errorf("BOM not stripped:\n%q", a.Text)
	}
	b, _ := m.File("docs/b.md")
	if b.Text != "## docs/b.md\n   1 | # B\n   2 |\n   3 | Second.\n" {
		t.Errorf("CRLF not normalised:\n%q", b.Text)
	}
	if b.Language != "markdown" || !slices.Equal(b.Shown, []LineRange{{1, 3}}) || len(b.Changed) != 0 || m.Tokens() == 0 {
		t.Errorf("docs/b.md: %+v", b)
	}
	if !m.IsShown("docs/b.md", 3) || m.IsShown("docs/b.md", 4) || m.IsChanged("docs/b.md", 1) {
		t.Error("IsShown/IsChanged on an artifact")
	}
	if c, _ := m.File("docs/sub/c.yaml"); c.Language != "yaml" {
		t.Errorf("language %q", c.Language)
	}
}

func TestArtifactsErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bin.dat"), "a\x00b")
	writeFile(t, filepath.Join(dir, "latin1.txt"), "caf\xe9\n")
	writeFile(t, filepath.Join(dir, "empty.md"), " \n\n")
	writeFile(t, filepath.Join(dir, "huge.txt"), strings.Repeat("x\n", MaxArtifactBytes))
	if err := os.MkdirAll(filepath.Join(dir, "hollow", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		paths []string
		want  error
		text  string
	}{
		{[]string{filepath.Join(dir, "bin.dat")}, ErrBinary, "bin.dat"},
		{[]string{filepath.Join(dir, "latin1.txt")}, ErrNotUTF8, "iconv"},
		{[]string{filepath.Join(dir, "empty.md")}, ErrEmpty, "empty.md"},
		{[]string{filepath.Join(dir, "huge.txt")}, ErrTooLarge, "1 MiB"},
		{[]string{filepath.Join(dir, "missing.md")}, os.ErrNotExist, "missing.md"},
		{[]string{filepath.Join(dir, "hollow")}, ErrEmpty, "no files found"},
		{nil, ErrEmpty, "name the files"},
	}
	for _, tt := range tests {
		_, err := Artifacts(tt.paths)
		if !errors.Is(err, tt.want) {
			t.Errorf("Artifacts(%v): error %v is not %v", tt.paths, err, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.text) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Artifacts(%v): error %q should be one line mentioning %q", tt.paths, err, tt.text)
		}
	}
}

func TestFreeform(t *testing.T) {
	m, err := Freeform("stdin", strings.NewReader("\xef\xbb\xbfIs free will compatible\r\nwith determinism?"))
	if err != nil {
		t.Fatal(err)
	}
	want := "## stdin\n   1 | Is free will compatible\n   2 | with determinism?\n"
	if m.Type != TypeFreeform || m.Coordinates != "stdin" || m.Text() != want {
		t.Errorf("got %q %q\n%q", m.Type, m.Coordinates, m.Text())
	}
	if f := m.Files[0]; f.Language != "" || !m.IsShown("stdin", 2) || m.Tokens() == 0 || m.Files[0].Tokens != m.Tokens() {
		t.Errorf("file %+v", f)
	}
	m, err = Freeform("notes/essay.md", strings.NewReader("# Essay\n"))
	if err != nil || m.Files[0].Language != "markdown" || m.Coordinates != "notes/essay.md" {
		t.Errorf("named freeform: %+v %v", m, err)
	}

	for _, tt := range []struct {
		in   string
		want error
	}{
		{"a\x00b", ErrBinary},
		{"\xff\xfe", ErrNotUTF8},
		{"", ErrEmpty},
		{"\xef\xbb\xbf\r\n  \n", ErrEmpty},
	} {
		if _, err := Freeform("stdin", strings.NewReader(tt.in)); !errors.Is(err, tt.want) || !strings.HasPrefix(err.Error(), "stdin: ") {
			t.Errorf("Freeform(%q): error %v, want %v", tt.in, err, tt.want)
		}
	}
	if _, err := Freeform("stdin", iotest.ErrReader(errors.New("boom"))); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("reader error: %v", err)
	}
}
