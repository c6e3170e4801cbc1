package ask

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/persona"
)

// A corpus index that came with the repository, with a trigger of its
// own, is not used as it is: sot rebuilds it, the trigger never fires, and
// the plan says so.
func TestPlantedIndexIsRebuilt(t *testing.T) {
	top := testCorpus(t)
	ix, err := OpenIndex(top)
	if err != nil {
		t.Fatal(err)
	}
	path := ix.Path()
	ix.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`CREATE TABLE stolen (text TEXT)`,
		`CREATE TRIGGER evil AFTER INSERT ON docs BEGIN INSERT INTO stolen VALUES (new.text); END`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	o := testOptions(t, top, "http://127.0.0.1:1")
	p, err := Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if note := strings.Join(p.Notes, "\n"); !strings.Contains(note, "was not one sot wrote") || !strings.Contains(note, `"evil"`) {
		t.Errorf("notes %q do not say the index was rebuilt", p.Notes)
	}
	db, err = sql.Open("sqlite", path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name IN ('evil', 'stolen')`).Scan(&n); err != nil || n != 0 {
		t.Errorf("the planted trigger or table is still there (%d, %v)", n, err)
	}
}

// A corpus index directory that is a symlink stops the question with an
// error for the user, though the index is opened while the corpus is
// walked, and nothing is written where the link points.
func TestSymlinkedIndexDirIsRefused(t *testing.T) {
	top := testCorpus(t)
	victim := t.TempDir()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(top, IndexDir)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(top, IndexDir)); err != nil {
		t.Skip(err)
	}
	_, err := Prepare(context.Background(), testOptions(t, top, "http://127.0.0.1:1"))
	var ue *engine.UserError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "sot writes nothing through a symlink") {
		t.Fatalf("Prepare: %v, want a user error about the symlink", err)
	}
	if entries, _ := os.ReadDir(victim); len(entries) != 0 {
		t.Errorf("written through the link: %v", entries)
	}
}

// Without a Library, Prepare loads one with LoadLibrary (beside the walk
// of the corpus) and reads the roles with it; an error from LoadLibrary
// stops the question with that error.
func TestPrepareLoadsTheLibrary(t *testing.T) {
	top := testCorpus(t)
	o := testOptions(t, top, "http://127.0.0.1:1")
	lib := o.Library
	o.Library = nil
	calls := 0
	o.LoadLibrary = func() (*persona.Library, error) { calls++; return lib, nil }
	p, err := Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || !p.SoT || len(p.Readings) == 0 || p.Readings[0].Role == nil {
		t.Fatalf("LoadLibrary called %d times; SoT %v, %d readings", calls, p.SoT, len(p.Readings))
	}

	broken := errors.New("persona directory unreadable")
	o.LoadLibrary = func() (*persona.Library, error) { return nil, broken }
	if _, err := Prepare(context.Background(), o); !errors.Is(err, broken) {
		t.Errorf("Prepare with a library that fails to load: %v", err)
	}
}
