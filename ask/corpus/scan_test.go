package corpus

import (
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sotlabs/sot/internal/tokens"
)

// TestStatDecidesWhatIsRead: a file whose stat is unchanged and older
// than the reading is taken from what is known; a file modified within
// the racy window of the reading is read again even when its stat is the
// same, as is one whose stat changed or that an older reader read.
func TestStatDecidesWhatIsRead(t *testing.T) {
	now := time.Now()
	s := Stamp{Path: "notes/a.md", Size: 10, ModTime: now.Add(-time.Hour).UnixNano(), Change: now.UnixNano(), Inode: 7}
	k := Known{Stamp: s, Checked: now.UnixNano(), Reader: Reader}
	if !k.fresh(s) {
		t.Error("an unchanged file modified an hour before it was read is read again")
	}
	racy := s
	racy.ModTime = now.Add(-time.Second).UnixNano()
	if (Known{Stamp: racy, Checked: now.UnixNano(), Reader: Reader}).fresh(racy) {
		t.Error("a file modified a second before it was read is trusted by its stat, though a same-size change in that tick would not show")
	}
	for name, edit := range map[string]func(*Stamp){
		"size":        func(x *Stamp) { x.Size++ },
		"mtime":       func(x *Stamp) { x.ModTime++ },
		"change time": func(x *Stamp) { x.Change++ },
		"inode":       func(x *Stamp) { x.Inode++ },
		"path":        func(x *Stamp) { x.Path = "other/a.md" },
	} {
		changed := s
		edit(&changed)
		if k.fresh(changed) {
			t.Errorf("a file whose %s changed is not read again", name)
		}
	}
	old := k
	old.Reader = "sot-corpus/0"
	if old.fresh(s) {
		t.Error("a file an older reader read is not read again")
	}
}

// TestScanReadsOnlyWhatChanged: the second scan of a corpus reads only the
// file edited since the first, and a file whose stat changed but whose
// bytes did not is read and found unchanged.
func TestScanReadsOnlyWhatChanged(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for _, name := range []string{"a.md", "b.md", "c.md"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("# "+strings.ToUpper(name)+"\n\nNotes on "+name+".\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	var reads atomic.Int32
	opts := Options{ReadFile: func(name string) ([]byte, error) { reads.Add(1); return os.ReadFile(name) }, Now: time.Now}
	first, err := Scan([]string{dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]Known{}
	for _, f := range first.Files {
		known[f.Real] = Known{Stamp: f.Stamp, Checked: first.Checked, Reader: Reader, Hash: f.Hash, Skip: f.Skip, Source: f.Source}
	}
	opts.Known = rememberAll(known)

	if err := os.WriteFile(filepath.Join(dir, "b.md"), []byte("# B\n\nNotes on b.md, edited.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dir, "c.md"), old.Add(time.Minute), old.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	reads.Store(0)
	second, err := Scan([]string{dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := reads.Load(); n != 2 {
		t.Errorf("the second scan read %d files, want 2 (the edited one, and the one whose stat changed)", n)
	}
	got := map[string]File{}
	for _, f := range second.Files {
		got[filepath.Base(f.Path)] = f
	}
	if a := got["a.md"]; a.Read || a.Source.Text != "" || a.Source.ID != known[a.Real].Source.ID {
		t.Errorf("a.md, unchanged: read %v, text %q, id %s", a.Read, a.Source.Text, a.Source.ID)
	}
	if b := got["b.md"]; !b.Read || !b.Changed || !strings.Contains(b.Source.Text, "edited") {
		t.Errorf("b.md, edited: read %v, changed %v, text %q", b.Read, b.Changed, b.Source.Text)
	}
	if c := got["c.md"]; !c.Read || c.Changed {
		t.Errorf("c.md, touched: read %v, changed %v", c.Read, c.Changed)
	}
	full, err := Reread(got["a.md"], opts)
	if err != nil || !strings.Contains(full.Text, "Notes on a.md") {
		t.Errorf("Reread(a.md) = %q, %v", full.Text, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("# A\n\nSomething else.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Reread(got["a.md"], opts); err == nil {
		t.Error("Reread of a file edited since the scan gave no error")
	}
	if err := os.Remove(filepath.Join(dir, "c.md")); err != nil {
		t.Fatal(err)
	}
	known["/elsewhere/d.md"] = Known{Stamp: Stamp{Path: "d.md"}, Reader: Reader, Hash: "d"} // another corpus's
	opts.Known = rememberAll(known)
	third, err := Scan([]string{dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	gone := third.Gone()
	if len(gone) != 1 || gone[0] != got["c.md"].Real {
		t.Errorf("Gone = %v, want only c.md's path", gone)
	}
}

// TestScanTakesTheCallersClock: a scan is stamped by the clock its caller
// passes, not the system's. A file its stamp finds modified within
// RacyWindow is read again by the next scan; without a clock, no stat is
// trusted and every file is read again.
func TestScanTakesTheCallersClock(t *testing.T) {
	dir := t.TempDir()
	mod := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	p := filepath.Join(dir, "a.md")
	if err := os.WriteFile(p, []byte("# A\n\nNotes.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mod, mod); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		now   func() time.Time
		reads int32
	}{
		{"a clock an hour after the file", func() time.Time { return mod.Add(time.Hour) }, 0},
		{"a clock a second after the file", func() time.Time { return mod.Add(time.Second) }, 1},
		{"no clock", nil, 1},
	} {
		var reads atomic.Int32
		opts := Options{ReadFile: func(name string) ([]byte, error) { reads.Add(1); return os.ReadFile(name) }, Now: c.now}
		first, err := Scan([]string{dir}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if c.now != nil && first.Checked != c.now().UnixNano() {
			t.Errorf("%s: checked at %d, want %d", c.name, first.Checked, c.now().UnixNano())
		}
		f := first.Files[0]
		opts.Known = rememberAll(map[string]Known{f.Real: {Stamp: f.Stamp, Checked: first.Checked, Reader: Reader, Hash: f.Hash, Source: f.Source}})
		reads.Store(0)
		if _, err := Scan([]string{dir}, opts); err != nil {
			t.Fatal(err)
		}
		if n := reads.Load(); n != c.reads {
			t.Errorf("%s: the second scan read %d files, want %d", c.name, n, c.reads)
		}
	}
}

// TestSourcesWithinTheBudgetLoadNoTokenizer: a source no longer in bytes
// than the part budget cannot be over it in tokens, so reading it (Load,
// and Reread of a chosen source) loads no tokenizer vocabulary, whose
// loading cost more than reading ten small notes; a source that could be
// over the budget is still cut into parts that each fit it. The
// vocabulary is loaded once per process, so this runs in a process of
// its own.
func TestSourcesWithinTheBudgetLoadNoTokenizer(t *testing.T) {
	const budget = 2048
	if os.Getenv("SOT_TEST_TOKENIZER_CHILD") == "1" {
		dir := t.TempDir()
		for i, n := range []int{10, 500, budget - 60} {
			body := "# Note\n\n" + strings.Repeat("word ", n/5)
			body += strings.Repeat("x", budget-len(body)) // exactly the budget in bytes for the last
			if i < 2 {
				body = body[:n]
			}
			if err := os.WriteFile(filepath.Join(dir, "note-"+string(rune('a'+i))+".md"), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		res, err := Scan([]string{dir}, Options{PartTokens: budget})
		if err != nil || len(res.Sources) != 3 {
			t.Fatalf("Scan: %d sources, %v", len(res.Sources), err)
		}
		for _, f := range res.Files {
			if _, err := Reread(f, Options{PartTokens: budget}); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range res.Sources {
			if len(s.Parts) != 0 {
				t.Errorf("%s, %d bytes, was cut into %d parts", s.Path, len(s.Text), len(s.Parts))
			}
		}
		if tokens.Loaded() {
			t.Error("reading sources within the budget in bytes loaded the tokenizer")
		}
		big := filepath.Join(dir, "big.md")
		if err := os.WriteFile(big, []byte("# Big\n\n"+strings.Repeat("The committee met and agreed on the budget.\n\n", 600)), 0o644); err != nil {
			t.Fatal(err)
		}
		srcs, _, err := Load([]string{big}, Options{PartTokens: budget})
		if err != nil || len(srcs) != 1 || len(srcs[0].Parts) < 2 {
			t.Fatalf("a source over the budget: %v", err)
		}
		for _, p := range srcs[0].Parts {
			if p.Tokens != tokens.Count(p.Text) || p.Tokens > budget {
				t.Errorf("part %d says %d tokens, counts %d, budget %d", p.Index, p.Tokens, tokens.Count(p.Text), budget)
			}
		}
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestSourcesWithinTheBudgetLoadNoTokenizer$", "-test.v")
	cmd.Env = append(os.Environ(), "SOT_TEST_TOKENIZER_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// knownList is a Remembered of records and their resolved paths.
type knownList struct {
	reals []string
	known []Known
}

func (l knownList) Len() int          { return len(l.reals) }
func (l knownList) Real(i int) string { return l.reals[i] }
func (l knownList) Known(i int) Known { return l.known[i] }

// rememberAll is an Options.Known that remembers the records of m, by
// resolved path.
func rememberAll(m map[string]Known) func() Remembered {
	var l knownList
	for _, p := range slices.Sorted(maps.Keys(m)) {
		l.reals, l.known = append(l.reals, p), append(l.known, m[p])
	}
	return func() Remembered { return l }
}

// TestMatchFindsEveryRecord: each file walked is matched to its record,
// where the walk's order parts from the records' ("2024/" is walked
// before "2024-notes.md", which sorts before it), among records of files
// not walked, for files without one, and when the records are not
// sorted as they should be.
func TestMatchFindsEveryRecord(t *testing.T) {
	walked := []string{"/c/2024/a.md", "/c/2024/b.md", "/c/2024-notes.md", "/c/2025/new.md", "/c/2025/x.md", "/c/z.md"}
	records := []string{"/a/other.md", "/c/2024-notes.md", "/c/2024/a.md", "/c/2024/b.md", "/c/2024/gone.md", "/c/2025/x.md", "/c/z.md", "/d/other.md"}
	files := make([]file, len(walked))
	for i, p := range walked {
		files[i] = file{real: p}
	}
	check := func(t *testing.T, records []string) {
		t.Helper()
		at := match(files, knownList{reals: records, known: make([]Known, len(records))})
		for i, p := range walked {
			want := slices.Index(records, p)
			if at[i] != want {
				t.Errorf("%s matched record %d, want %d", p, at[i], want)
			}
		}
	}
	t.Run("sorted", func(t *testing.T) { check(t, records) })
	t.Run("unsorted", func(t *testing.T) {
		shuffled := slices.Clone(records)
		rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		check(t, shuffled)
	})
	t.Run("none", func(t *testing.T) {
		for i, j := range match(files, nil) {
			if j != -1 {
				t.Errorf("%s matched %d with nothing known", walked[i], j)
			}
		}
	})
}
