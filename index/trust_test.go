package index

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"modernc.org/sqlite"

	"github.com/sotlabs/sot/internal/safedir"
)

// canaryCalls counts the calls of the SQL function sot_test_canary, which a
// planted trigger, view or CHECK constraint calls when it fires.
var canaryCalls atomic.Int64

func init() {
	sqlite.MustRegisterScalarFunction("sot_test_canary", -1, func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
		canaryCalls.Add(1)
		return int64(1), nil
	})
}

// trustDocs are the sources the trust tests index.
func trustDocs() []Doc {
	return []Doc{
		{ID: "a", Path: "a.md", Title: "Pricing review", Type: "meeting", Date: day("2025-01-10"), Text: "enterprise pricing and discount tiers"},
		{ID: "b", Path: "b.md", Title: "Hiring plan", Type: "report", Date: day("2025-02-10"), Text: "hiring engineers, pricing of offers"},
		{ID: "c", Path: "c.md", Title: "Outage", Type: "document", Date: day("2025-03-10"), Text: "database outage and failover"},
	}
}

// rawExec runs statements on the database at path as any SQLite program
// would, without the protections Open sets up.
func rawExec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// plant writes, at path, a sot index holding trustDocs and a source of the
// planter's, then changes it with stmts.
func plant(t *testing.T, path string, stmts ...string) {
	t.Helper()
	x, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Sync(context.Background(), append(trustDocs(), Doc{ID: "planted", Path: "p.md", Title: "Pricing", Text: "pricing pricing pricing"}), SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	rawExec(t, path, stmts...)
}

// searchAll is what a query sees of an index: every hit for a few queries.
func searchAll(t *testing.T, x *Index) map[string][]Hit {
	t.Helper()
	out := map[string][]Hit{}
	for _, q := range []string{"pricing", "outage failover", "hiring engineers"} {
		hits, err := x.Search(context.Background(), q, SearchOptions{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		out[q] = hits
	}
	return out
}

func TestOpenRebuildsUntrustedIndex(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stmts []string
		why   string // in Rebuilt()
	}{
		{"trigger on insert", []string{
			"CREATE TABLE pwned (x)",
			`CREATE TRIGGER evil AFTER INSERT ON docs BEGIN
			   INSERT INTO pwned VALUES (new.id);
			   SELECT sot_test_canary(new.id);
			 END`,
		}, `trigger "evil" (on "docs") that sot does not create`},
		{"trigger on update", []string{
			`CREATE TRIGGER evil AFTER UPDATE ON docs BEGIN SELECT sot_test_canary(new.id); END`,
		}, `trigger "evil"`},
		{"trigger on a shadow table", []string{
			`CREATE TRIGGER evil AFTER INSERT ON docs_fts_data BEGIN SELECT sot_test_canary(new.id); END`,
		}, "malformed database schema (evil)"}, // which defensive mode refuses to read
		{"a schema SQLite cannot read", []string{
			"PRAGMA writable_schema = ON",
			"INSERT INTO sqlite_schema VALUES ('table', 'junk', 'junk', 0, 'CREATE TABLE junk (')",
		}, "SQLite finds it corrupt"},
		{"a trigger of sot's replaced", []string{
			"DROP TRIGGER docs_ai",
			`CREATE TRIGGER docs_ai AFTER INSERT ON docs BEGIN
			   INSERT INTO docs_fts(rowid, title, body) VALUES (new.n, new.title, new.body);
			   SELECT sot_test_canary(new.id);
			 END`,
		}, `trigger "docs_ai" that differs`},
		{"a trigger of sot's dropped", []string{"DROP TRIGGER docs_ad"}, `no trigger "docs_ad"`},
		{"view", []string{"CREATE VIEW docs_view AS SELECT sot_test_canary(id) AS x FROM docs"}, `view "docs_view"`},
		{"extra table", []string{"CREATE TABLE extra (x)", "INSERT INTO extra VALUES (1)"}, `table "extra"`},
		{"extra index", []string{"CREATE INDEX docs_hash ON docs(hash)"}, `index "docs_hash"`},
		{"changed CHECK constraint", []string{
			"PRAGMA writable_schema = ON",
			"UPDATE sqlite_schema SET sql = replace(sql, 'json_valid(meta)', 'sot_test_canary(meta)') WHERE name = 'docs'",
			"PRAGMA writable_schema = RESET",
		}, `table "docs" that differs`},
		{"full-text configuration", []string{
			"INSERT INTO docs_fts(docs_fts, rank) VALUES ('rank', 'bm25(0.0, 100.0)')",
		}, "full-text index configuration"},
		{"schema version 0", []string{"PRAGMA user_version = 0"}, "schema version 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "corpus.db")
			plant(t, path, tc.stmts...)
			canaryCalls.Store(0)

			x, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			if got := x.Rebuilt(); !strings.Contains(got, tc.why) {
				t.Errorf("Rebuilt() = %q, want it to say %q", got, tc.why)
			}
			// What sot does with an index: sync, change, search, list.
			docs := trustDocs()
			if _, err := x.Sync(ctx, docs, SyncOptions{Prune: true}); err != nil {
				t.Fatal(err)
			}
			docs[0].Text += " and renewals"
			if _, err := x.Sync(ctx, docs, SyncOptions{Prune: true}); err != nil {
				t.Fatal(err)
			}
			if err := x.SetAnalysis(ctx, "b", []byte(`{"k":1}`)); err != nil {
				t.Fatal(err)
			}
			got := searchAll(t, x)
			if _, err := x.Get(ctx, "planted"); !errors.Is(err, ErrNotFound) {
				t.Errorf("the planted source survived: Get = %v", err)
			}
			if n := canaryCalls.Load(); n != 0 {
				t.Errorf("the planted schema ran %d times", n)
			}

			fresh, _ := openTemp(t)
			if _, err := fresh.Sync(ctx, docs, SyncOptions{Prune: true}); err != nil {
				t.Fatal(err)
			}
			if err := fresh.SetAnalysis(ctx, "b", []byte(`{"k":1}`)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(searchAll(t, fresh), got); diff != "" {
				t.Errorf("search results differ from a fresh index's (-fresh +rebuilt):\n%s", diff)
			}

			// The file holds sot's schema and nothing else.
			db, err := sql.Open("sqlite", dsn(path, "mode=ro"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			st, err := readSchema(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			want, err := expectedSchema(SchemaVersion)
			if err != nil {
				t.Fatal(err)
			}
			if d := diffSchema(st, want); d != "" {
				t.Errorf("the rebuilt file: %s", d)
			}
			if n := canaryCalls.Load(); n != 0 {
				t.Errorf("the planted schema ran %d times", n)
			}
		})
	}
}

func TestOpenRebuildsCorruptIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "corpus.db")
	plant(t, path)
	// Turn the docs_date index against its table: its entries no longer
	// match the rows, which integrity_check notices.
	rawExec(t, path,
		"PRAGMA writable_schema = ON",
		"UPDATE sqlite_schema SET sql = 'CREATE INDEX docs_date ON docs(path)' WHERE name = 'docs_date'",
		"PRAGMA writable_schema = RESET",
		"INSERT INTO docs (id, path, type, hash, title, body) VALUES ('z', 'z.md', 't', 'h', 'Z', 'z')",
		"PRAGMA writable_schema = ON",
		"UPDATE sqlite_schema SET sql = 'CREATE INDEX docs_date ON docs(date)' WHERE name = 'docs_date'",
		"PRAGMA writable_schema = RESET",
	)
	x, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if got := x.Rebuilt(); !strings.Contains(got, "integrity check") {
		t.Errorf("Rebuilt() = %q, want it to name the integrity check", got)
	}
	if docs, err := x.List(context.Background()); err != nil || len(docs) != 0 {
		t.Errorf("List = %v, %v; want an empty index", ids(docs), err)
	}
}

func TestOpenKeepsItsOwnIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "corpus.db")
	docs := generate(300)
	for i := range 3 {
		x, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := x.Rebuilt(); got != "" {
			t.Fatalf("open %d: Rebuilt() = %q", i, got)
		}
		// Add, change and remove sources, so that the FTS5 index merges
		// and its files move on.
		docs = docs[10:]
		for j := range 20 {
			docs[j].Text += " changed"
		}
		if _, err := x.Sync(ctx, docs, SyncOptions{Prune: true}); err != nil {
			t.Fatal(err)
		}
		if err := x.SetAnalysis(ctx, docs[0].ID, []byte(`{"n":1}`)); err != nil {
			t.Fatal(err)
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
	}
	x, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if got := x.Rebuilt(); got != "" {
		t.Fatalf("Rebuilt() = %q", got)
	}
	all, err := x.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(docs) {
		t.Errorf("%d sources after reopening, want %d", len(all), len(docs))
	}
}

func TestConnectionsAreHardened(t *testing.T) {
	x, _ := openTemp(t)
	ctx := context.Background()
	for _, db := range []struct {
		name string
		db   *sql.DB
	}{{"writer", x.w}, {"reader", x.r}} {
		for name, want := range map[string]string{"trusted_schema": "0", "cell_size_check": "1"} {
			var got string
			if err := db.db.QueryRowContext(ctx, "PRAGMA "+name).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s: PRAGMA %s = %s, want %s", db.name, name, got, want)
			}
		}
	}
	// A reader is read-only below query_only too.
	c, err := x.r.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "PRAGMA query_only = 0"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(ctx, "INSERT INTO docs (id, path, type, hash, title, body) VALUES ('z', 'z', 't', 'h', 'Z', 'z')"); err == nil || !strings.Contains(err.Error(), "readonly") {
		t.Errorf("a write on a reader: %v, want a read-only database error", err)
	}
}

func TestOpenLeavesSymlinkTargets(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup plants an untrusted index at target and returns the path
		// to open.
		setup func(t *testing.T, dir, target string) string
	}{
		{"the database is a symlink", func(t *testing.T, dir, target string) string {
			p := filepath.Join(dir, "corpus.db")
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"its directory is a symlink", func(t *testing.T, dir, target string) string {
			link := filepath.Join(dir, "index")
			if err := os.Symlink(filepath.Dir(target), link); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(link, filepath.Base(target))
		}},
		{"its directory is a symlink, no database yet", func(t *testing.T, dir, target string) string {
			link := filepath.Join(dir, "index")
			if err := os.Symlink(filepath.Dir(target), link); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(link, "new.db")
		}},
		{"its -wal is a symlink", func(t *testing.T, dir, target string) string {
			p := filepath.Join(dir, "corpus.db")
			plant(t, p, "CREATE TABLE extra (x)")
			if err := os.Symlink(target, p+"-wal"); err != nil {
				t.Fatal(err)
			}
			return p
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, elsewhere := t.TempDir(), t.TempDir()
			target := filepath.Join(elsewhere, "victim.db")
			plant(t, target, "CREATE TABLE extra (x)")
			want, err := os.ReadFile(target)
			if err != nil {
				t.Fatal(err)
			}
			wantNames := dirNames(t, elsewhere)
			p := tc.setup(t, dir, target)

			x, err := Open(p)
			if err == nil {
				x.Close()
				t.Fatal("Open succeeded")
			}
			var se *safedir.SymlinkError
			if !errors.As(err, &se) {
				t.Errorf("error %v is not a SymlinkError", err)
			}
			got, err := os.ReadFile(target)
			if err != nil {
				t.Fatalf("the link's target: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Error("the link's target changed")
			}
			if got := dirNames(t, elsewhere); !slices.Equal(got, wantNames) {
				t.Errorf("the link's directory holds %v, want only %v", got, wantNames)
			}
		})
	}
}

func TestOpenIgnoresStrayWAL(t *testing.T) {
	ctx := context.Background()
	// The -wal of an index with a trigger of its own, its frames not yet
	// checkpointed, planted beside no database.
	src := filepath.Join(t.TempDir(), "corpus.db")
	plant(t, src)
	db, err := sql.Open("sqlite", src)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	for _, s := range []string{
		"PRAGMA wal_autocheckpoint = 0",
		"CREATE TRIGGER evil AFTER INSERT ON docs BEGIN SELECT sot_test_canary(new.id); END",
		"CREATE TABLE extra (x)",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	wal, err := os.ReadFile(src + "-wal")
	if err != nil || len(wal) == 0 {
		t.Fatalf("the -wal to plant: %d bytes, %v", len(wal), err)
	}
	db.Close()

	path := filepath.Join(t.TempDir(), "corpus.db")
	if err := os.WriteFile(path+"-wal", wal, 0o644); err != nil {
		t.Fatal(err)
	}
	canaryCalls.Store(0)
	x, err := Open(path)
	if err != nil {
		// Refusing the file is safe too; but it must say why.
		t.Logf("Open: %v", err)
		return
	}
	defer x.Close()
	if _, err := x.Sync(ctx, trustDocs(), SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := canaryCalls.Load(); n != 0 {
		t.Errorf("the stray -wal's trigger ran %d times", n)
	}
	st, err := readSchema(ctx, x.r)
	if err != nil {
		t.Fatal(err)
	}
	want, err := expectedSchema(SchemaVersion)
	if err != nil {
		t.Fatal(err)
	}
	if d := diffSchema(st, want); d != "" {
		t.Errorf("the new index: %s", d)
	}
}

func TestDiffSchema(t *testing.T) {
	want, err := expectedSchema(SchemaVersion)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.objects) < 12 || len(want.config) == 0 {
		t.Fatalf("expected schema: %d objects, config %v; want the tables, indexes, triggers and FTS5 shadow tables", len(want.objects), want.config)
	}
	for _, name := range []string{"docs", "docs_fts", "docs_fts_data", "docs_fts_idx", "docs_fts_docsize", "docs_fts_config", "docs_ai", "docs_ad", "docs_au", "docs_path", "docs_date"} {
		found := false
		for _, o := range want.objects {
			found = found || o.Name == name
		}
		if !found {
			t.Errorf("the expected schema has no %q", name)
		}
	}
	if d := diffSchema(want, want); d != "" {
		t.Errorf("diffSchema(want, want) = %q", d)
	}
	// White space inside a statement does not count.
	spaced := want
	spaced.objects = append([]schemaObject(nil), want.objects...)
	for i, o := range spaced.objects {
		if o.Name == "docs_ai" {
			o.SQL.String = normalizeSQL(strings.ReplaceAll(o.SQL.String, " ", "\n\t "))
			spaced.objects[i] = o
		}
	}
	if d := diffSchema(spaced, want); d != "" {
		t.Errorf("white space: diffSchema = %q", d)
	}
}

func TestOpenEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "corpus.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	x, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if got := x.Rebuilt(); got != "" {
		t.Errorf("Rebuilt() = %q for an empty file", got)
	}
	if _, err := x.Add(context.Background(), trustDocs()...); err != nil {
		t.Fatal(err)
	}
}

// dirNames are the names in dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}
