package review

import (
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/engine/run"
)

// openDir opens dir as a run's output directory for the rest of the test.
func openDir(t *testing.T, dir string) *run.Dir {
	t.Helper()
	d, err := run.Open("", dir, layout, run.Key())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestCheckOutputDir(t *testing.T) {
	tests := []struct {
		name  string
		dir   string // under a temporary project top; "out" when empty
		files []string
		link  string // a path under the top made a symlink to a directory outside it
		bad   string // what the error must cite, "" when the directory is fine
	}{
		{"missing", "", nil, "", ""},
		{"empty", "", []string{}, "", ""},
		{"an earlier review", "", []string{".gitignore", "run.json", "journal.jsonl", "REVIEW-SECURITY.md", "REVIEW-SYNTHESIS.md", "review.sarif", "MODERATOR.md", "resolutions.jsonl"}, "", ""},
		{"marked by sot's ignore file", "", []string{".gitignore=*\n", "review.json"}, "", ""},
		{"PAW's own review files", ".paw/work/billing/reviews", []string{"REVIEW-SECURITY.md", "REVIEW-SYNTHESIS.md"}, "", ""},
		{"a user's REVIEW file elsewhere", "docs", []string{"REVIEW-CHECKLIST.md"}, "", "REVIEW-CHECKLIST.md"},
		{"a user's ignore file", "", []string{".gitignore=*.log\n"}, "", ".gitignore"},
		{"a source directory", "", []string{"go.mod", "main.go"}, "", "go.mod"},
		{"a stray file among reviews", "", []string{"run.json", "REVIEW-SECURITY.md", "notes.txt"}, "", "notes.txt"},
		{"a subdirectory", "", []string{"run.json", "REVIEW-SECURITY.md", "pkg/"}, "", "pkg"},
		// Symlinks, which sot never creates, wherever they point.
		{"a linked run state", "", []string{".gitignore=*\n", "run.json@"}, "", "run.json -> "},
		{"a linked lock", "", []string{"run.lock@"}, "", "run.lock -> "},
		{"a linked temporary file", "", []string{"run.json", "REVIEW-SYNTHESIS.md.tmp@"}, "", "REVIEW-SYNTHESIS.md.tmp -> "},
		{"the reviews directory links outside", ".sot/reviews/r1", nil, ".sot/reviews", ".sot/reviews is a symlink to "},
		{"the output directory links outside", ".sot/reviews/r1", nil, ".sot/reviews/r1", "the output directory "},
		{"PAW's work directory links outside", ".paw/work/billing/reviews", nil, ".paw/work", ".paw/work is a symlink to "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := t.TempDir()
			outside := t.TempDir()
			victim := filepath.Join(outside, "victim")
			os.WriteFile(victim, []byte("precious\n"), 0o600)
			dir := filepath.Join(top, filepath.FromSlash(cmp.Or(tt.dir, "out")))
			if tt.link != "" {
				link := filepath.Join(top, filepath.FromSlash(tt.link))
				os.MkdirAll(filepath.Dir(link), 0o755)
				os.Symlink(outside, link)
			}
			if tt.files != nil {
				os.MkdirAll(dir, 0o755)
			}
			for _, f := range tt.files {
				if strings.HasSuffix(f, "/") {
					os.MkdirAll(filepath.Join(dir, f), 0o755)
					continue
				}
				if name, ok := strings.CutSuffix(f, "@"); ok {
					os.Symlink(victim, filepath.Join(dir, name))
					continue
				}
				name, content, ok := strings.Cut(f, "=")
				if !ok {
					content = "x"
				}
				os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
			}
			err := run.Check(top, dir, layout)
			if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
				t.Errorf("the victim now holds %q", b)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 1 {
				t.Errorf("the check created files outside the project: %v", entries)
			}
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
	d := openDir(t, dir)
	if err := d.Save(run.State{RunID: "rold"}); err != nil {
		t.Fatal(err)
	}
	if err := d.RecordWritten([]string{filepath.Join(dir, "REVIEW-SECURITY.md")}); err != nil {
		t.Fatal(err)
	}
	if old, err := d.ClearStale("rold"); err != nil || old != "" {
		t.Fatalf("the same run: old %q, err %v; want nothing removed", old, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "REVIEW-SECURITY.md")); err != nil {
		t.Fatal("the same run's files were removed")
	}
	old, err := d.ClearStale("rnew")
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
	if err := openDir(t, dir).Save(run.State{RunID: "rold", Written: []string{"REVIEW-SYNTHESIS.md"}}); err != nil {
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
