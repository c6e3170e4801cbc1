package review

import (
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCheckOutputDir(t *testing.T) {
	tests := []struct {
		name  string
		dir   string // under a temporary directory; "out" when empty
		files []string
		bad   string // a name the error must cite, "" when the directory is fine
	}{
		{"missing", "", nil, ""},
		{"empty", "", []string{}, ""},
		{"an earlier review", "", []string{".gitignore", "run.json", "journal.jsonl", "REVIEW-SECURITY.md", "REVIEW-SYNTHESIS.md", "review.sarif", "MODERATOR.md", "resolutions.jsonl"}, ""},
		{"marked by sot's ignore file", "", []string{".gitignore=*\n", "review.json"}, ""},
		{"PAW's own review files", ".paw/work/billing/reviews", []string{"REVIEW-SECURITY.md", "REVIEW-SYNTHESIS.md"}, ""},
		{"a user's REVIEW file elsewhere", "docs", []string{"REVIEW-CHECKLIST.md"}, "REVIEW-CHECKLIST.md"},
		{"a user's ignore file", "", []string{".gitignore=*.log\n"}, ".gitignore"},
		{"a source directory", "", []string{"go.mod", "main.go"}, "go.mod"},
		{"a stray file among reviews", "", []string{"run.json", "REVIEW-SECURITY.md", "notes.txt"}, "notes.txt"},
		{"a subdirectory", "", []string{"run.json", "REVIEW-SECURITY.md", "pkg/"}, "pkg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), filepath.FromSlash(cmp.Or(tt.dir, "out")))
			if tt.files != nil {
				os.MkdirAll(dir, 0o755)
			}
			for _, f := range tt.files {
				if strings.HasSuffix(f, "/") {
					os.MkdirAll(filepath.Join(dir, f), 0o755)
					continue
				}
				name, content, ok := strings.Cut(f, "=")
				if !ok {
					content = "x"
				}
				os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
			}
			err := checkOutputDir(dir)
			if tt.bad == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != "output_dir" || !strings.Contains(err.Error(), tt.bad) {
				t.Fatalf("err = %v, want an output_dir error citing %s", err, tt.bad)
			}
		})
	}
}

// A new run in a directory that held another run removes that run's files:
// those it recorded as written and the names only sot uses, and nothing
// else, not even a REVIEW-*.md it did not write.
func TestClearStale(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{".gitignore", "REVIEW-SECURITY.md", "REVIEW-2025-DESIGN.md", "review.json", "result.json", "journal.jsonl", "run.lock"} {
		os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644)
	}
	if err := (state{RunID: "rold"}).save(dir); err != nil {
		t.Fatal(err)
	}
	if err := recordWritten(dir, []string{filepath.Join(dir, "REVIEW-SECURITY.md")}); err != nil {
		t.Fatal(err)
	}
	if old, err := clearStale(dir, "rold"); err != nil || old != "" {
		t.Fatalf("the same run: old %q, err %v; want nothing removed", old, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "REVIEW-SECURITY.md")); err != nil {
		t.Fatal("the same run's files were removed")
	}
	old, err := clearStale(dir, "rnew")
	if err != nil || old != "rold" {
		t.Fatalf("old %q, err %v", old, err)
	}
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := []string{".gitignore", "REVIEW-2025-DESIGN.md", "run.json", "run.lock"}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}

// Documents saying there is nothing to review replace an earlier review's
// files in the same directory, so the two never contradict each other.
func TestWriteEmptyClearsAnEarlierRun(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{".gitignore", "REVIEW-SYNTHESIS.md", "review.sarif", "result.json"} {
		os.WriteFile(filepath.Join(dir, f), []byte("old"), 0o644)
	}
	if err := (state{RunID: "rold", Written: []string{"REVIEW-SYNTHESIS.md"}}).save(dir); err != nil {
		t.Fatal(err)
	}
	res := EmptyResult(Context{Type: "diff"}, "no changes to review", nil)
	if _, err := WriteEmpty(dir, res, []string{"json"}, "test"); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := []string{".gitignore", "review.json", "run.lock"}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}
