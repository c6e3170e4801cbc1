package sources

import (
	"os"
	"path/filepath"
	"testing"
)

// samePath takes a source's path as it was indexed, or as the shell
// completes it from the working directory, or from the project's top.
func TestSamePath(t *testing.T) {
	top := t.TempDir()
	if err := os.Mkdir(filepath.Join(top, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(top, "notes")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, given, indexed, workDir string
		want                          bool
	}{
		{"as indexed", "notes/a.md", "notes/a.md", top, true},
		{"as indexed, not clean", "./notes//a.md", "notes/a.md", top, true},
		{"from a subdirectory", "a.md", "notes/a.md", sub, true},
		{"up and back", "../notes/a.md", "notes/a.md", sub, true},
		{"absolute", filepath.Join(top, "notes", "a.md"), "notes/a.md", top, true},
		{"another file", "b.md", "notes/a.md", sub, false},
		{"a directory", "notes", "notes/a.md", top, false},
		{"nothing indexed", "a.md", "", sub, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := samePath(tt.given, tt.indexed, tt.workDir); got != tt.want {
				t.Errorf("samePath(%q, %q, %q) = %v, want %v", tt.given, tt.indexed, tt.workDir, got, tt.want)
			}
		})
	}
}
