package corpusgen_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sotlabs/sot/ask/corpus"
	"github.com/sotlabs/sot/conflict"
	"github.com/sotlabs/sot/internal/corpusgen"
)

// files reads every file under dir, by its path relative to dir.
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestWriteIsDeterministic(t *testing.T) {
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		if err := corpusgen.Write(d, 50, 7); err != nil {
			t.Fatal(err)
		}
	}
	if err := corpusgen.Write(c, 50, 8); err != nil {
		t.Fatal(err)
	}
	fa, fb, fc := files(t, a), files(t, b), files(t, c)
	if len(fa) != 50 {
		t.Fatalf("%d files, want 50", len(fa))
	}
	for name, body := range fa {
		if !bytes.Equal(body, fb[name]) {
			t.Fatalf("%s differs between two writes with the same seed", name)
		}
	}
	same := 0
	for name, body := range fa {
		if bytes.Equal(body, fc[name]) {
			same++
		}
	}
	if same == len(fa) {
		t.Error("another seed wrote the same corpus")
	}
}

// The notes read as sot ask reads them: every one a Markdown source with
// its frontmatter's title, type and date, the dates over several years,
// and the billing migration in enough of them for Question to find.
func TestNotesLoadWithTitlesTypesAndDates(t *testing.T) {
	dir := t.TempDir()
	if err := corpusgen.Write(dir, 200, 1); err != nil {
		t.Fatal(err)
	}
	sources, skipped, err := corpus.Load([]string{dir}, corpus.Options{})
	if err != nil || len(skipped) > 0 {
		t.Fatalf("Load: %v, skipped %+v", err, skipped)
	}
	if len(sources) != 200 {
		t.Fatalf("%d sources, want 200", len(sources))
	}
	years, types, titles := map[int]bool{}, map[string]bool{}, map[string]bool{}
	topic := 0
	for _, s := range sources {
		if s.Format != corpus.FormatMarkdown || s.Date.IsZero() || s.Title == "" || strings.HasPrefix(s.Title, "20") {
			t.Fatalf("%s: format %s, date %v, title %q: the frontmatter was not read", s.Path, s.Format, s.Date, s.Title)
		}
		if titles[s.Title] {
			t.Errorf("title %q twice", s.Title)
		}
		titles[s.Title] = true
		years[s.Date.Year()], types[s.Type] = true, true
		if strings.Contains(s.Text, corpusgen.Topic) {
			topic++
		}
	}
	if len(years) < 4 || len(types) != 4 {
		t.Errorf("years %v, types %v: want notes over several years, of four types", years, types)
	}
	if topic < 200/3 {
		t.Errorf("%d of 200 notes mention the %s, want a third or more", topic, corpusgen.Topic)
	}
}

// Small corpora have relevant notes too: the ten-note corpus of the
// benchmarks has several sources for Question.
func TestTenNotesHaveTheTopic(t *testing.T) {
	dir := t.TempDir()
	if err := corpusgen.Write(dir, 10, 1); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range files(t, dir) {
		if bytes.Contains(b, []byte(corpusgen.Topic)) {
			n++
		}
	}
	if n < 4 {
		t.Errorf("%d of 10 notes mention the %s, want 4 or more", n, corpusgen.Topic)
	}
}

// sentenceRE finds a note's sentences about the topic, as a model that
// quotes its source would.
var sentenceRE = regexp.MustCompile(`[A-Z][^.?!\n]*\bbilling migration\b[^.?!\n]*\.`)

// The notes disagree: answers that quote what each note says about the
// billing migration are conflicts for the lexical detector, and some are
// agreements, and both positions are taken.
func TestNotesDisagree(t *testing.T) {
	dir := t.TempDir()
	if err := corpusgen.Write(dir, 60, 3); err != nil {
		t.Fatal(err)
	}
	var rs []conflict.Response
	delay, ship := 0, 0
	for name, b := range files(t, dir) {
		found := sentenceRE.FindAllString(string(b), 3)
		if len(found) == 0 {
			continue
		}
		text := strings.Join(found, " ")
		if strings.Contains(text, "delay the billing migration to Q4") {
			delay++
		}
		if strings.Contains(text, "ship the billing migration in Q3") {
			ship++
		}
		rs = append(rs, conflict.Response{Response: text, AgentName: name})
	}
	if delay == 0 || ship == 0 {
		t.Fatalf("%d notes delay the migration, %d ship it: want both positions", delay, ship)
	}
	an, err := conflict.Detect(rs, conflict.Options{Threshold: 0.6, Keep: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !an.HasConflicts || an.TotalConflicts < len(rs) || an.TotalAgreements == 0 {
		t.Errorf("%d answers: %d conflicts, %d agreements; want conflicts between many notes and some agreements",
			len(rs), an.TotalConflicts, an.TotalAgreements)
	}
}

func TestWriteRejectsANegativeCount(t *testing.T) {
	if err := corpusgen.Write(t.TempDir(), -1, 1); err == nil {
		t.Error("Write(-1) succeeded")
	}
}
