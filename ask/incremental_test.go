package ask

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sotlabs/sot/index"
)

// incrementalCorpus writes a project whose corpus has 6 notes on pricing,
// which a question on pricing chooses, and 24 on the office, which it does
// not; every file was last modified an hour ago.
func incrementalCorpus(t *testing.T) (top, dir string) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	top = t.TempDir()
	dir = filepath.Join(top, ".sot", "corpus")
	for _, d := range []string{filepath.Join(top, ".git"), dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 6 {
		writeNote(t, dir, fmt.Sprintf("pricing-%d.md", i), fmt.Sprintf("# Pricing %d\n\nThe pricing of the enterprise tier, note %d: keep the discount at %d%%.\n", i, i, 10+i))
	}
	for i := range 24 {
		writeNote(t, dir, fmt.Sprintf("office-%02d.md", i), fmt.Sprintf("# Office %d\n\nThe plants on floor %d need water.\n", i, i))
	}
	return top, dir
}

// writeNote writes a file and dates it an hour back.
func writeNote(t *testing.T, dir, name, body string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
}

// readsCounter counts, by base name, the files Prepare reads.
type readsCounter struct {
	mu    sync.Mutex
	names []string
}

func countReads(t *testing.T) *readsCounter {
	c := &readsCounter{}
	corpusReadFile = func(name string) ([]byte, error) {
		c.mu.Lock()
		c.names = append(c.names, filepath.Base(name))
		c.mu.Unlock()
		return os.ReadFile(name)
	}
	t.Cleanup(func() { corpusReadFile = nil })
	return c
}

func (c *readsCounter) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.names
	c.names = nil
	return n
}

// prepareOn asks the pricing question over the project at top.
func prepareOn(t *testing.T, top string) *Plan {
	t.Helper()
	o := benchAskOptions(t, top, "http://127.0.0.1:9/v1", nil) // no call is made
	o.Question = "What did we decide about enterprise pricing?"
	o.OutputDir = filepath.Join(top, ".sot", "answers", "q")
	p, err := Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// readingsText is everything the plan's readings hold.
func readingsText(p *Plan) string {
	var b strings.Builder
	for _, r := range p.Readings {
		b.WriteString(r.Text + "\n")
	}
	return b.String()
}

// indexed says whether the project's index holds the source id.
func indexed(t *testing.T, top, id string) bool {
	t.Helper()
	ix, err := OpenIndex(top)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	_, err = ix.Get(context.Background(), id)
	if err != nil && !errors.Is(err, index.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

func idOf(t *testing.T, p *Plan, name string) string {
	t.Helper()
	for id, s := range p.Sources {
		if filepath.Base(s.Path) == name {
			return id
		}
	}
	t.Fatalf("no source %s in the plan", name)
	return ""
}

func TestUnchangedCorpusReadsOnlyTheChosenSources(t *testing.T) {
	top, _ := incrementalCorpus(t)
	reads := countReads(t)
	first := prepareOn(t, top)
	if n := len(reads.take()); n != 30 {
		t.Fatalf("the first question read %d files, want all 30", n)
	}
	second := prepareOn(t, top)
	got := reads.take()
	if len(got) != len(second.Chosen) || len(got) != 6 {
		t.Errorf("the second question over the unchanged corpus read %v, want only the 6 sources it chose", got)
	}
	for _, name := range got {
		if !strings.HasPrefix(name, "pricing-") {
			t.Errorf("it read %s, which it did not choose", name)
		}
	}
	if first.RunID != second.RunID || readingsText(first) != readingsText(second) {
		t.Error("the same question over the same corpus is planned differently when the corpus is not read again")
	}
	if len(second.Sources) != 30 {
		t.Errorf("the plan knows %d sources, want 30", len(second.Sources))
	}
}

func TestEditedFileIsPickedUp(t *testing.T) {
	top, dir := incrementalCorpus(t)
	before := prepareOn(t, top)
	old := idOf(t, before, "pricing-2.md")
	writeNote(t, dir, "pricing-2.md", "# Pricing 2\n\nThe pricing of the enterprise tier is now a flat fee, decided on Monday.\n")
	after := prepareOn(t, top)
	if !strings.Contains(readingsText(after), "flat fee") {
		t.Error("the edited note's new text is not read")
	}
	if _, ok := after.Sources[old]; ok || indexed(t, top, old) {
		t.Error("the edited note's old content is still a source")
	}
}

func TestSameSizeEditWithinTheSameSecondIsPickedUp(t *testing.T) {
	top, dir := incrementalCorpus(t)
	p := filepath.Join(dir, "pricing-3.md")
	// The note was written just now, within the second the question reads
	// it in; it is edited again in that second, to the same size and the
	// same modification time.
	tick := time.Now().Truncate(time.Second)
	if err := os.Chtimes(p, tick, tick); err != nil {
		t.Fatal(err)
	}
	prepareOn(t, top)
	body, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(body), "13%", "31%", 1)
	if len(edited) != len(body) || edited == string(body) {
		t.Fatal("the edit does not keep the size")
	}
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, tick, tick); err != nil {
		t.Fatal(err)
	}
	after := prepareOn(t, top)
	if text := readingsText(after); !strings.Contains(text, "31%") || strings.Contains(text, "13%") {
		t.Errorf("the same-size edit is not read:\n%s", text)
	}
}

func TestDeletedFileLeavesTheIndex(t *testing.T) {
	top, dir := incrementalCorpus(t)
	before := prepareOn(t, top)
	id := idOf(t, before, "pricing-4.md")
	if err := os.Remove(filepath.Join(dir, "pricing-4.md")); err != nil {
		t.Fatal(err)
	}
	after := prepareOn(t, top)
	if _, ok := after.Sources[id]; ok {
		t.Error("the deleted note is still a source")
	}
	if strings.Contains(readingsText(after), "note 4") {
		t.Error("the deleted note is still read")
	}
	if indexed(t, top, id) {
		t.Error("the deleted note is still in the index")
	}
}

func TestFileSwappedForALinkOutOfTheProjectIsRefused(t *testing.T) {
	top, dir := incrementalCorpus(t)
	before := prepareOn(t, top)
	id := idOf(t, before, "pricing-5.md")
	outside := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(outside, []byte("# Pricing\n\nThe enterprise pricing secret: outside-the-project.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "pricing-5.md")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, p); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	reads := countReads(t)
	after := prepareOn(t, top)
	for _, name := range reads.take() {
		if name == "secret.md" {
			t.Error("the file the link points to was read")
		}
	}
	if strings.Contains(readingsText(after), "outside-the-project") {
		t.Error("the linked file's text is read")
	}
	refused := false
	for _, s := range after.Skipped {
		refused = refused || filepath.Base(s.Path) == "pricing-5.md" && strings.Contains(s.Reason, "outside the project")
	}
	if !refused {
		t.Errorf("the link is not skipped as one out of the project: %+v", after.Skipped)
	}
	if _, ok := after.Sources[id]; ok || indexed(t, top, id) {
		t.Error("the note the link replaced is still a source")
	}
}

// TestNoteAddedSinceTheLastQuestionIsChosen: the question is ranked while
// the corpus is scanned, from the index as it was; a note added since the
// last question changes the index, and the question is ranked again, so
// the new note is among the sources chosen.
func TestNoteAddedSinceTheLastQuestionIsChosen(t *testing.T) {
	top, dir := incrementalCorpus(t)
	prepareOn(t, top)
	writeNote(t, dir, "pricing-new.md", "# Enterprise pricing decision\n\nWe decided the enterprise pricing: enterprise pricing moves to a flat fee.\n")
	after := prepareOn(t, top)
	id := idOf(t, after, "pricing-new.md")
	var chosen []string
	for _, c := range after.Chosen {
		chosen = append(chosen, c.ID)
	}
	if !slices.Contains(chosen, id) {
		t.Errorf("the note added since the last question, %s, is not chosen: %v", id, chosen)
	}
	if !strings.Contains(readingsText(after), "flat fee") {
		t.Error("the new note is not read")
	}
}
