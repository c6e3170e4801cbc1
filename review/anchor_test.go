package review

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sotlabs/sot/material"
)

func TestAnchorHasSection(t *testing.T) {
	dir := t.TempDir()
	design := filepath.Join(dir, "design.md")
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(design, []byte("# Session cache\n\n## Storage\n\nRedis.\n\n### 3. Rollout plan\n\nLater.\n"), 0o644)
	os.WriteFile(notes, []byte("plain notes without headings\n"), 0o644)
	m, err := material.Artifacts([]string{design, notes})
	if err != nil {
		t.Fatal(err)
	}
	a := newAnchor(m)
	path := func(p string) string { // as the material names it
		for _, f := range m.Files {
			if filepath.Base(f.Path) == filepath.Base(p) {
				return f.Path
			}
		}
		t.Fatalf("%s not in the material", p)
		return ""
	}
	tests := []struct {
		path, section string
		want          bool
	}{
		{path(design), "Storage", true},
		{path(design), "## storage", true},
		{path(design), "Rollout plan", true}, // numbering aside
		{path(design), "Security Model", false},
		{"", "Security Model", true}, // notes.txt has no headings to check against
		{path(notes), "Anything", true},
		{"missing.md", "Storage", false},
	}
	for _, tt := range tests {
		if got := a.HasSection(tt.path, tt.section); got != tt.want {
			t.Errorf("HasSection(%q, %q) = %v, want %v", tt.path, tt.section, got, tt.want)
		}
	}
	onlyDesign := newAnchor(&material.Material{Type: m.Type, Files: []material.File{*must(m.File(path(design)))}})
	if onlyDesign.HasSection("", "Security Model") || !onlyDesign.HasSection("", "Storage") {
		t.Error("with headed documents only, a section must be one of their headings")
	}
}

func must(f *material.File, ok bool) *material.File {
	if !ok {
		panic("no such file")
	}
	return f
}
