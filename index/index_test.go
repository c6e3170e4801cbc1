package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sotlabs/sot/internal/safedir"
)

func openTemp(t *testing.T) (*Index, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "index.db")
	x, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x, path
}

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

func ids(docs []Doc) []string {
	var out []string
	for _, d := range docs {
		out = append(out, d.ID)
	}
	return out
}

func hitIDs(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Doc.ID)
	}
	return out
}

func pragma(t *testing.T, x *Index, name string) string {
	t.Helper()
	var v string
	if err := x.r.QueryRow("PRAGMA " + name).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOpenCreatesAndReopens(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub dir?#%", "index.db") // characters a file: URI must escape
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	want := Doc{ID: "a", Path: "notes/a.md", Title: "Alpha", Type: "meeting", Date: time.Date(2024, 5, 6, 7, 8, 9, 10, time.FixedZone("x", 3600)),
		Text: "alpha text", Meta: json.RawMessage(`{"quarter":"Q2"}`), Analysis: json.RawMessage(`{"summary":"s"}`)}

	for i, step := range []struct {
		name string
		add  bool
	}{
		{"create", true},
		{"reopen", false},
		{"reopen again", false},
	} {
		t.Run(step.name, func(t *testing.T) {
			x, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			for name, v := range map[string]string{"user_version": strconv.Itoa(SchemaVersion), "journal_mode": "wal", "application_id": "1936684081", "query_only": "1"} {
				if got := pragma(t, x, name); got != v {
					t.Errorf("PRAGMA %s = %s, want %s", name, got, v)
				}
			}
			if step.add {
				if _, err := x.Add(context.Background(), want); err != nil {
					t.Fatal(err)
				}
			}
			got, err := x.Get(context.Background(), "a")
			if err != nil {
				t.Fatal(err)
			}
			w := want
			w.Hash = ContentHash(want)
			if diff := cmp.Diff(w, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
				t.Errorf("step %d: Get (-want +got):\n%s", i, diff)
			}
			if got.Date.Location() != time.UTC {
				t.Errorf("Date comes back in %v, want UTC", got.Date.Location())
			}
		})
	}
}

func TestOpenRefuses(t *testing.T) {
	good := func(t *testing.T, dir string) string {
		p := filepath.Join(dir, "real.db")
		x, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		x.Close()
		return p
	}
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, dir string) string // returns the path to open
		symlink bool
		want    string
	}{
		{"symlink to an index", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "index.db")
			if err := os.Symlink(good(t, dir), p); err != nil {
				t.Fatal(err)
			}
			return p
		}, true, "is a symlink"},
		{"dangling symlink", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "index.db")
			if err := os.Symlink(filepath.Join(dir, "elsewhere.db"), p); err != nil {
				t.Fatal(err)
			}
			return p
		}, true, "is a symlink"},
		{"symlinked -wal", func(t *testing.T, dir string) string {
			p := good(t, dir)
			if err := os.Symlink(filepath.Join(dir, "elsewhere"), p+"-wal"); err != nil {
				t.Fatal(err)
			}
			return p
		}, true, "real.db-wal is a symlink"},
		{"symlinked -shm", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "index.db")
			if err := os.Symlink(filepath.Join(dir, "elsewhere"), p+"-shm"); err != nil {
				t.Fatal(err)
			}
			return p
		}, true, "index.db-shm is a symlink"},
		{"a directory", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "index.db")
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			return p
		}, false, "not a regular file"},
		{"not a database", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "index.db")
			if err := os.WriteFile(p, []byte(strings.Repeat("not sqlite\n", 100)), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, false, "not a database"},
		{"another program's database", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "index.db")
			db, err := sql.Open("sqlite", p)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec("CREATE TABLE t (x)"); err != nil {
				t.Fatal(err)
			}
			return p
		}, false, "not a sot index"},
		{"a newer schema", func(t *testing.T, dir string) string {
			p := good(t, dir)
			db, err := sql.Open("sqlite", p)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec("PRAGMA user_version = " + fmt.Sprint(SchemaVersion+1)); err != nil {
				t.Fatal(err)
			}
			return p
		}, false, fmt.Sprintf("schema version %d, newer", SchemaVersion+1)},
		{"no path", func(t *testing.T, dir string) string { return "" }, false, "no database path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := tc.setup(t, dir)
			x, err := Open(p)
			if err == nil {
				x.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			var se *safedir.SymlinkError
			if got := errors.As(err, &se); got != tc.symlink {
				t.Errorf("error %v: is a SymlinkError: %v, want %v", err, got, tc.symlink)
			}
			if _, err := os.Lstat(filepath.Join(dir, "elsewhere.db")); err == nil {
				t.Error("a symlink's target was created")
			}
		})
	}
}

func TestSync(t *testing.T) {
	ctx := context.Background()
	x, _ := openTemp(t)
	doc := func(id, text string) Doc {
		return Doc{ID: id, Path: id + ".md", Title: "Doc " + id, Type: "document", Date: day("2024-01-02"), Text: text}
	}
	for _, step := range []struct {
		name   string
		docs   []Doc
		prune  bool
		want   Changes
		after  []string // the IDs in the index afterwards
		search map[string][]string
	}{
		{
			name:   "new index",
			docs:   []Doc{doc("a", "apple"), doc("b", "banana"), doc("c", "cherry")},
			want:   Changes{Added: 3, AddedIDs: []string{"a", "b", "c"}},
			after:  []string{"a", "b", "c"},
			search: map[string][]string{"banana": {"b"}, "cherry": {"c"}},
		},
		{
			name:   "same docs again",
			docs:   []Doc{doc("c", "cherry"), doc("a", "apple"), doc("b", "banana")},
			want:   Changes{Unchanged: 3},
			after:  []string{"a", "b", "c"},
			search: map[string][]string{"banana": {"b"}},
		},
		{
			name:   "one changed, one new, one missing, no prune",
			docs:   []Doc{doc("a", "apple"), doc("b", "blueberry"), doc("d", "date")},
			want:   Changes{Added: 1, Updated: 1, Unchanged: 1, AddedIDs: []string{"d"}, UpdatedIDs: []string{"b"}},
			after:  []string{"a", "b", "c", "d"},
			search: map[string][]string{"banana": nil, "blueberry": {"b"}, "date": {"d"}, "cherry": {"c"}},
		},
		{
			name:   "prune",
			docs:   []Doc{doc("a", "apple"), doc("b", "blueberry"), doc("d", "date")},
			prune:  true,
			want:   Changes{Unchanged: 3, Removed: 1, RemovedIDs: []string{"c"}},
			after:  []string{"a", "b", "d"},
			search: map[string][]string{"cherry": nil, "apple": {"a"}},
		},
		{
			name:  "moved file, same hash",
			docs:  []Doc{{ID: "a", Path: "moved/a.md", Title: "Doc a", Type: "document", Date: day("2024-01-02"), Text: "apple", Hash: "h1"}},
			want:  Changes{Updated: 1, UpdatedIDs: []string{"a"}},
			after: []string{"a", "b", "d"},
		},
		{
			name:  "caller's hash unchanged",
			docs:  []Doc{{ID: "a", Path: "moved/a.md", Title: "ignored", Text: "ignored", Hash: "h1"}},
			want:  Changes{Unchanged: 1},
			after: []string{"a", "b", "d"},
		},
		{
			name:   "prune everything else",
			docs:   []Doc{doc("e", "elderberry")},
			prune:  true,
			want:   Changes{Added: 1, Removed: 3, AddedIDs: []string{"e"}, RemovedIDs: []string{"a", "b", "d"}},
			after:  []string{"e"},
			search: map[string][]string{"apple": nil, "elderberry": {"e"}},
		},
		{
			name:  "prune with nothing",
			prune: true,
			want:  Changes{Removed: 1, RemovedIDs: []string{"e"}},
		},
	} {
		t.Run(step.name, func(t *testing.T) {
			got, err := x.Sync(ctx, step.docs, SyncOptions{Prune: step.prune})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(step.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Changes (-want +got):\n%s", diff)
			}
			list, err := x.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(step.after, ids(list), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("List (-want +got):\n%s", diff)
			}
			for q, want := range step.search {
				hits, err := x.Search(ctx, q, SearchOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, hitIDs(hits), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("Search(%q) (-want +got):\n%s", q, diff)
				}
			}
		})
	}
}

func TestSyncKeepsAnalysisOfUnchanged(t *testing.T) {
	ctx := context.Background()
	x, _ := openTemp(t)
	a := Doc{ID: "a", Path: "a.md", Text: "one"}
	b := Doc{ID: "b", Path: "b.md", Text: "two"}
	if _, err := x.Add(ctx, a, b); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if err := x.SetAnalysis(ctx, id, json.RawMessage(`{"summary":"of `+id+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	b.Text = "two, edited"
	if _, err := x.Sync(ctx, []Doc{a, b}, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"a": `{"summary":"of a"}`, "b": ""} {
		d, err := x.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if string(d.Analysis) != want {
			t.Errorf("%s: analysis %s, want %q", id, d.Analysis, want)
		}
	}
}

func TestSyncRejects(t *testing.T) {
	ctx := context.Background()
	x, _ := openTemp(t)
	if _, err := x.Add(ctx, Doc{ID: "keep", Text: "kept"}); err != nil {
		t.Fatal(err)
	}
	ok := Doc{ID: "ok", Text: "fine"}
	for _, tc := range []struct {
		name string
		docs []Doc
		want string
	}{
		{"no ID", []Doc{ok, {Text: "x"}}, "has no ID"},
		{"an ID twice", []Doc{ok, {ID: "d"}, {ID: "d"}}, `"d" is given twice`},
		{"bad meta", []Doc{ok, {ID: "m", Meta: json.RawMessage(`{"a":`)}}, "meta is not valid JSON"},
		{"bad analysis", []Doc{ok, {ID: "m", Analysis: json.RawMessage(`nope`)}}, "analysis is not valid JSON"},
		{"date out of range", []Doc{ok, {ID: "m", Date: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}, "outside the years"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := x.Sync(ctx, tc.docs, SyncOptions{Prune: true})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Sync: error %v, want one saying %q", err, tc.want)
			}
			list, err := x.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(list); !slices.Equal(got, []string{"keep"}) {
				t.Errorf("the index changed: %v", got)
			}
		})
	}
}

func TestGetRemoveSetAnalysis(t *testing.T) {
	ctx := context.Background()
	x, _ := openTemp(t)
	if _, err := x.Add(ctx, Doc{ID: "a", Title: "A", Text: "alpha"}, Doc{ID: "b", Title: "B", Text: "beta"}); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Get(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of an unknown ID: %v, want ErrNotFound", err)
	}
	if err := x.SetAnalysis(ctx, "nope", json.RawMessage(`{}`)); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetAnalysis of an unknown ID: %v, want ErrNotFound", err)
	}
	if err := x.SetAnalysis(ctx, "a", json.RawMessage(`{"x"`)); err == nil {
		t.Error("SetAnalysis took invalid JSON")
	}
	if err := x.SetAnalysis(ctx, "a", json.RawMessage(`{"topicTags":["x"]}`)); err != nil {
		t.Fatal(err)
	}
	list, err := x.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Text != "" || string(list[0].Analysis) != `{"topicTags":["x"]}` {
		t.Errorf("List = %+v, want two docs without text, a's with its analysis", list)
	}
	if err := x.SetAnalysis(ctx, "a", nil); err != nil {
		t.Fatal(err)
	}
	if d, _ := x.Get(ctx, "a"); d.Analysis != nil || d.Text != "alpha" {
		t.Errorf("after clearing: %+v", d)
	}
	n, err := x.Remove(ctx, "a", "nope", "a")
	if err != nil || n != 1 {
		t.Errorf("Remove = %d, %v; want 1, nil", n, err)
	}
	if hits, _ := x.Search(ctx, "alpha", SearchOptions{}); len(hits) != 0 {
		t.Errorf("a removed source is still found: %v", hitIDs(hits))
	}
	if n, err := x.Remove(ctx); n != 0 || err != nil {
		t.Errorf("Remove() = %d, %v", n, err)
	}
}

func TestCanceledContext(t *testing.T) {
	x, _ := openTemp(t)
	if _, err := x.Add(context.Background(), Doc{ID: "a", Text: "alpha"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := x.Search(ctx, "alpha", SearchOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Search: %v, want context.Canceled", err)
	}
	if _, err := x.Add(ctx, Doc{ID: "b", Text: "beta"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Add: %v, want context.Canceled", err)
	}
	if _, err := x.Get(ctx, "a"); !errors.Is(err, context.Canceled) {
		t.Errorf("Get: %v, want context.Canceled", err)
	}
}

// TestConcurrentReadersAndWriter runs one writer and several readers at once
// on one Index, and a second Index on the same file; run it with -race.
func TestConcurrentReadersAndWriter(t *testing.T) {
	ctx := context.Background()
	x, path := openTemp(t)
	if _, err := x.Add(ctx, Doc{ID: "fixed", Title: "pricing", Text: "pricing decision"}); err != nil {
		t.Fatal(err)
	}
	other, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	const rounds = 30
	errs := make(chan error, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range rounds {
			docs := []Doc{{ID: "fixed", Title: "pricing", Text: "pricing decision"}}
			for j := range i % 5 {
				docs = append(docs, Doc{ID: string(rune('a' + j)), Text: strings.Repeat("pricing budget ", i+1)})
			}
			if _, err := x.Sync(ctx, docs, SyncOptions{Prune: true}); err != nil {
				errs <- err
				return
			}
		}
	}()
	readers := make(chan struct{})
	for r := range 4 {
		go func() {
			defer func() { readers <- struct{}{} }()
			ix := x
			if r%2 == 1 {
				ix = other
			}
			for range rounds {
				hits, err := ix.Search(ctx, "pricing", SearchOptions{})
				if err != nil {
					errs <- err
					return
				}
				if !slices.Contains(hitIDs(hits), "fixed") {
					errs <- errors.New("a reader missed the fixed source")
					return
				}
				if _, err := ix.List(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	go func() {
		for range 1 {
			for range rounds {
				if err := other.SetAnalysis(ctx, "fixed", json.RawMessage(`{"n":1}`)); err != nil {
					errs <- err
					return
				}
			}
		}
		readers <- struct{}{}
	}()
	for range 5 {
		<-readers
	}
	<-done
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// The same content reached by another path (a file moved, a corpus named
// from another directory) keeps its analysis; only the path changes.
func TestSyncKeepsAnalysisOfMoved(t *testing.T) {
	ctx := context.Background()
	x, _ := openTemp(t)
	a := Doc{ID: "a", Path: "notes/a.md", Hash: "h1", Text: "one"}
	if _, err := x.Add(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := x.SetAnalysis(ctx, "a", json.RawMessage(`{"summary":"of a"}`)); err != nil {
		t.Fatal(err)
	}
	a.Path = "../project/notes/a.md"
	ch, err := x.Sync(ctx, []Doc{a}, SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := x.Get(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if d.Path != a.Path || string(d.Analysis) != `{"summary":"of a"}` || ch.Updated != 1 {
		t.Errorf("path %q, analysis %s, changes %+v; want the new path and the analysis kept", d.Path, d.Analysis, ch)
	}
}
