package corpus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// FuzzLoad holds that Load never panics, whatever a file holds and
// whatever it is called, and that what it reads survives Export: the
// exported file loads as the same source, and its parts are all of its
// text.
func FuzzLoad(f *testing.F) {
	names := []string{"f.md", "f.txt", "f.json", "f"}
	_ = filepath.WalkDir("testdata", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if data, err := os.ReadFile(path); err == nil {
				f.Add(data, uint8(0))
				f.Add(data, uint8(1))
			}
		}
		return nil
	})
	for _, content := range tricky {
		f.Add([]byte(content), uint8(0))
	}
	f.Add([]byte("---\nagent_name: x\n---\n## Transcript\n## A (JSON)\n```\n"), uint8(0))
	f.Add([]byte(`{"analysis": {"keyPoints": [1, null, true]}, "sotMetadata": {"contentSignals": {"riskMentions": 1e3}}}`), uint8(2))

	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, kind uint8) {
		path := filepath.Join(dir, names[int(kind)%len(names)])
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		srcs, skipped, err := Load([]string{path}, Options{PartTokens: 64})
		if len(srcs)+len(skipped) > 1 || (err == nil) == (len(srcs)+len(skipped) == 0) {
			t.Fatalf("one file gave %d sources, %d skipped, err %v", len(srcs), len(skipped), err)
		}
		if len(srcs) == 0 {
			return
		}
		s := srcs[0]
		if s.Text == "" || s.Title == "" || !utf8.ValidString(s.Text) {
			t.Fatalf("source with text %q, title %q", s.Text, s.Title)
		}
		if s.Parts != nil {
			var b strings.Builder
			for _, p := range s.Parts {
				b.WriteString(p.Text)
			}
			if b.String() != s.Text {
				t.Fatalf("parts are not the text")
			}
		}
		out := Export(s)
		back := filepath.Join(dir, "exported.md")
		if err := os.WriteFile(back, out, 0o644); err != nil {
			t.Fatal(err)
		}
		again, skipped, err := Load([]string{back}, Options{})
		if err != nil || len(again) != 1 {
			t.Fatalf("exported file: %v, skipped %v, err %v\n%s", again, skipped, err, out)
		}
		if d := cmp.Diff(roundTripView(s), roundTripView(again[0])); d != "" {
			t.Fatalf("Load(Export(s)) (-want +got):\n%s\nexport:\n%s", d, out)
		}
	})
}
