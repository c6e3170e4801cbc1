// Package index keeps documents (the knowledge sources of sot ask, the
// argument nodes of sot debate --graph) in an embedded SQLite
// database with a full-text index.
//
// One file holds every source's text, metadata and analysis, and an FTS5
// index over its title and text. [Index.Sync] brings the database up to date
// with the sources a loader found, incrementally by content hash: new sources
// are inserted, changed ones rewritten, unchanged ones left alone, and (when
// asked) sources that are gone are removed, all in one transaction.
// [Index.Search] ranks sources for a question by BM25 with a recency bonus;
// choosing a diverse set among them is the caller's business. [Index.Add],
// [Index.Remove], [Index.Get], [Index.List] and [Index.SetAnalysis] serve
// `sot sources`.
//
// The database is SQLite through modernc.org/sqlite, a pure-Go build of
// SQLite with FTS5 compiled in, so sot stays one static binary without cgo.
// The file runs in WAL mode with a busy timeout: one writer and any number
// of readers work at once, in this process or another. An Index is safe for
// concurrent use; its writes are serialised on one connection and its reads
// use a pool of read-only connections, each read seeing one snapshot.
//
// The schema (version 4, kept in PRAGMA user_version and marked as sot's by
// PRAGMA application_id) is:
//
//	CREATE TABLE docs (
//	  n        INTEGER PRIMARY KEY,  -- rowid, the FTS index's content_rowid
//	  id       TEXT NOT NULL UNIQUE,
//	  path     TEXT NOT NULL,
//	  type     TEXT NOT NULL,
//	  date     TEXT,                 -- UTC, fixed width, sortable; NULL when unknown
//	  hash     TEXT NOT NULL,
//	  title    TEXT NOT NULL,
//	  meta     TEXT CHECK (meta IS NULL OR json_valid(meta)),
//	  analysis TEXT CHECK (analysis IS NULL OR json_valid(analysis)),
//	  body     TEXT NOT NULL         -- Doc.Text
//	) STRICT;
//	CREATE INDEX docs_path ON docs(path);
//	CREATE INDEX docs_date ON docs(date);
//	CREATE VIRTUAL TABLE docs_fts USING fts5(title, body, content='docs',
//	  content_rowid='n', tokenize='porter unicode61 remove_diacritics 2');
//
// and three triggers keep docs_fts in step with docs on insert, delete and
// an update of title or body. Version 2 adds the files the documents were
// read from ([File], [Index.Files], [Index.UpdateFiles]):
//
//	CREATE TABLE files (
//	  path    TEXT PRIMARY KEY,  -- resolved, absolute
//	  size    INTEGER NOT NULL,  -- the stat when the file was read: bytes,
//	  mtime   INTEGER NOT NULL,  --   and nanoseconds since the epoch
//	  ctime   INTEGER NOT NULL,
//	  inode   INTEGER NOT NULL,
//	  checked INTEGER NOT NULL,  -- when the reading began
//	  reader  TEXT NOT NULL,     -- which loader read it
//	  hash    TEXT NOT NULL,     -- of the bytes
//	  skip    TEXT NOT NULL,     -- why it gives no document, or ''
//	  id      TEXT NOT NULL,     -- the document it gives, or ''
//	  shown   TEXT NOT NULL,     -- the document's path, type, date, title, meta
//	  type    TEXT NOT NULL,
//	  date    TEXT,
//	  title   TEXT NOT NULL,
//	  meta    TEXT CHECK (meta IS NULL OR json_valid(meta))
//	) STRICT, WITHOUT ROWID;
//	CREATE INDEX files_id ON files(id);
//
// Version 3 adds an index that holds, by rowid, what [Index.Search] ranks
// by besides the full-text scores: each document's date and ID. Ranking
// reads it instead of the documents' rows, which hold their bodies too:
//
//	CREATE INDEX docs_rank ON docs(n, date, id);
//
// Version 4 keeps every row of files packed into one value, which
// [Index.Files] reads in one step, and three triggers that drop it on any
// write to files, so that it never disagrees with them (see pack.go):
//
//	CREATE TABLE files_pack (
//	  k    INTEGER PRIMARY KEY CHECK (k = 1),
//	  data BLOB NOT NULL
//	) STRICT;
//
// A version 1 or 2 index that is exactly as sot wrote it gains what the
// later versions add when it is opened, and keeps its sources.
//
// The database file, and the -wal, -shm and -journal files SQLite keeps
// beside it, are never opened through a symlink, nor is the directory that
// holds them: the sources of sot ask often live in a repository someone
// else wrote, where a committed symlink would otherwise send the index's
// writes wherever it points (see internal/safedir). The directories above
// that one are the caller's to reach safely.
//
// Nor is a database file found there trusted as it is: a committed
// .sot/index/corpus.db could carry a trigger that fires on every write.
// [Open] reads an existing file read-only first and compares its schema
// with the one this package creates; a file that differs is removed and
// rebuilt, and [Index.Rebuilt] says why. Every connection runs with PRAGMA
// trusted_schema off and in SQLite's defensive mode.
package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sotlabs/sot/internal/safedir"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver, FTS5 included
)

// SchemaVersion is the version of the schema this package writes, kept in
// the database's PRAGMA user_version. A database of a newer version is
// refused rather than misread.
const SchemaVersion = 4

// applicationID marks a SQLite file as a sot index ("sot1").
const applicationID = 0x736f7431

// busyTimeout is how long a statement waits for a lock another connection
// holds (another process writing the same index) before it fails.
const busyTimeout = 10 * time.Second

// dateLayout stores dates in UTC with a fixed width, so that they sort as
// text and keep nanoseconds.
const dateLayout = "2006-01-02T15:04:05.000000000Z"

// ErrNotFound is returned, wrapped, for an ID the index does not hold.
var ErrNotFound = errors.New("no such source in the index")

// Doc is one knowledge source as the index stores it.
type Doc struct {
	// ID identifies the source; it is unique in the index and not empty.
	ID string `json:"id"`
	// Path is where the source was read from.
	Path string `json:"path"`
	// Title is searched with a higher weight than Text.
	Title string `json:"title"`
	// Type is the kind of source (meeting, report, document, ...).
	Type string `json:"type"`
	// Date is when the source was written; the zero time when unknown. It
	// comes back from the index in UTC. Years must lie in 0000-9999.
	Date time.Time `json:"date"`
	// Hash is the source's content hash; when empty, Sync and Add fill it
	// with [ContentHash].
	Hash string `json:"hash"`
	// Text is the source's full text. List leaves it empty.
	Text string `json:"text,omitempty"`
	// Meta is the source's metadata as JSON, or nil.
	Meta json.RawMessage `json:"meta,omitempty"`
	// Analysis is what an analysis of the source found, as JSON, or nil.
	Analysis json.RawMessage `json:"analysis,omitempty"`
}

// Index is an open index database. It is safe for concurrent use.
type Index struct {
	path string
	w    *sql.DB // one connection: every write, serialised
	r    *sql.DB // read-only connections for Get, List and Search

	rebuilt string // why Open replaced the file it found; see Rebuilt
	abs     string // the database file's absolute path

	// unpacked is set when Files found no pack to read: UpdateFiles
	// writes one even when nothing changed.
	unpacked atomic.Bool
}

const schema = `
CREATE TABLE docs (
  n        INTEGER PRIMARY KEY,
  id       TEXT NOT NULL UNIQUE,
  path     TEXT NOT NULL,
  type     TEXT NOT NULL,
  date     TEXT,
  hash     TEXT NOT NULL,
  title    TEXT NOT NULL,
  meta     TEXT CHECK (meta IS NULL OR json_valid(meta)),
  analysis TEXT CHECK (analysis IS NULL OR json_valid(analysis)),
  body     TEXT NOT NULL
) STRICT;
CREATE INDEX docs_path ON docs(path);
CREATE INDEX docs_date ON docs(date);
CREATE VIRTUAL TABLE docs_fts USING fts5(title, body, content='docs',
  content_rowid='n', tokenize='porter unicode61 remove_diacritics 2');
CREATE TRIGGER docs_ai AFTER INSERT ON docs BEGIN
  INSERT INTO docs_fts(rowid, title, body) VALUES (new.n, new.title, new.body);
END;
CREATE TRIGGER docs_ad AFTER DELETE ON docs BEGIN
  INSERT INTO docs_fts(docs_fts, rowid, title, body) VALUES ('delete', old.n, old.title, old.body);
END;
CREATE TRIGGER docs_au AFTER UPDATE OF title, body ON docs BEGIN
  INSERT INTO docs_fts(docs_fts, rowid, title, body) VALUES ('delete', old.n, old.title, old.body);
  INSERT INTO docs_fts(rowid, title, body) VALUES (new.n, new.title, new.body);
END;
`

// rankSchema is what schema version 3 adds to version 2: the date and ID
// of each document by its rowid, so that ranking the matches of a query
// reads this small index and not the rows of the documents (see
// rankQuery).
const rankSchema = `
CREATE INDEX docs_rank ON docs(n, date, id);
`

// schemaSteps are the statements of each schema version in turn: version
// v is the first v of them, and an index of version v is upgraded by the
// ones after.
var schemaSteps = []string{"", schema, filesSchema, rankSchema, packSchema}

// schemaOf is every statement of schema version v.
func schemaOf(v int) string { return strings.Join(schemaSteps[:v+1], "") }

// Open opens the index database at path, creating the file and its schema
// when the file does not exist. The directory must exist and must not be a
// symlink, and neither may the file be, nor the -wal, -shm or -journal
// files beside it: Open refuses them with a *safedir.SymlinkError. A file
// that is not a SQLite database, a SQLite database that is not a sot index,
// and an index written with a newer schema are refused too.
//
// An existing file is read on a read-only connection before it is used
// (see trust.go). A file marked as a sot index whose schema is not exactly
// the one this package creates (a trigger, view, table or index more, a
// changed CREATE statement, another schema version) or that fails SQLite's
// integrity_check is removed, with the files beside it, and a new, empty index
// is built in its place; [Index.Rebuilt] says why. The sources it held are
// gone: a caller that syncs them from their files gets them back, but their
// analyses are lost.
//
// Every connection runs with PRAGMA trusted_schema off, cell_size_check on
// and SQLite's defensive mode. Reads ([Index.Get], [Index.List],
// [Index.Search]) go through read-only connections.
func Open(path string) (*Index, error) {
	if path == "" {
		return nil, errors.New("index: no database path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	if err := checkDir(path, abs); err != nil {
		return nil, err
	}
	before, err := checkFiles(path, abs)
	if err != nil {
		return nil, err
	}

	var rebuilt string
	if before != nil {
		v, err := inspect(abs, !checkedBefore(abs, before))
		if err != nil {
			return nil, fmt.Errorf("index: open %s: %w", path, err)
		}
		if v.distrust != "" {
			if err := removeFiles(abs, before); err != nil {
				return nil, fmt.Errorf("index: removing the untrusted %s: %w", path, err)
			}
			rebuilt, before = v.distrust, nil
		}
	}

	w, err := sql.Open("sqlite", dsn(abs, append(safePragmas(),
		"_pragma=journal_mode(WAL)",
		"_pragma=synchronous(NORMAL)",
		"_pragma=journal_size_limit(4194304)",
		"_txlock=immediate")...))
	if err != nil {
		return nil, fmt.Errorf("index: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	x := &Index{path: path, abs: abs, w: w, rebuilt: rebuilt}
	if err := x.migrate(context.Background()); err != nil {
		w.Close()
		return nil, fmt.Errorf("index: open %s: %w", path, err)
	}
	// The file exists now. Make sure it is the one that was checked, or a
	// regular file of our own making, and not something that appeared there
	// between the check and the open.
	after, err := checkFiles(path, abs)
	if err != nil {
		w.Close()
		return nil, err
	}
	if before != nil && (after == nil || !os.SameFile(before, after)) {
		w.Close()
		return nil, fmt.Errorf("index: %s was replaced while it was being opened", path)
	}

	r, err := sql.Open("sqlite", dsn(abs, append(safePragmas(),
		"mode=ro",
		"_pragma=query_only(1)",
		"_pragma=cache_size(-65536)")...)) // up to 64 MiB of pages per connection: a 10,000-source index stays in memory
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("index: open %s: %w", path, err)
	}
	r.SetMaxOpenConns(max(4, runtime.GOMAXPROCS(0)))
	r.SetMaxIdleConns(4)
	x.r = r
	return x, nil
}

// Rebuilt says why [Open] removed the file it found at the index's path and
// built a new, empty index in its place, or "" when it did not. The reason
// reads after "the index was removed and rebuilt because", as in
// `it has a trigger "t" (on "docs") that sot does not create`. A caller
// should tell the user, since whoever planted the file may have meant
// harm, and the analyses the file held are gone.
func (x *Index) Rebuilt() string { return x.rebuilt }

// checkDir refuses an index whose directory, as named in path, is a
// symlink: the index's writes would land wherever it points.
func checkDir(path, abs string) error {
	dir := filepath.Dir(abs)
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, _ := os.Readlink(dir)
		return fmt.Errorf("index: refusing the database: %w", &safedir.SymlinkError{Path: filepath.Dir(path), Target: target})
	}
	if !fi.IsDir() {
		return fmt.Errorf("index: %s is not a directory", filepath.Dir(path))
	}
	return nil
}

// dsn is the modernc.org/sqlite data source name of the file at abs.
func dsn(abs string, params ...string) string {
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive: file:/C:/...
	}
	return "file:" + (&url.URL{Path: p}).EscapedPath() + "?" + strings.Join(params, "&")
}

// checkFiles refuses a database file, or one of SQLite's files beside it,
// that is a symlink or not a regular file. It returns the database file's
// information, or nil when it does not exist yet.
func checkFiles(path, abs string) (fs.FileInfo, error) {
	var db fs.FileInfo
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		fi, err := os.Lstat(abs + suffix)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("index: %w", err)
		}
		name := path + suffix
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(abs + suffix)
			return nil, fmt.Errorf("index: refusing the database: %w", &safedir.SymlinkError{Path: name, Target: target})
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("index: %s is not a regular file", name)
		}
		if suffix == "" {
			db = fi
		}
	}
	return db, nil
}

// migrate creates the schema in a new database and checks an existing one
// again, now under the write lock: a file that changed since Open
// inspected it is refused.
func (x *Index) migrate(ctx context.Context) error {
	tx, err := x.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	v, err := examine(ctx, tx, false)
	if err != nil {
		return err
	}
	switch {
	case v.empty:
		if _, err := tx.ExecContext(ctx, schemaOf(SchemaVersion)); err != nil {
			return fmt.Errorf("creating the schema: %w", err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = %d", applicationID, SchemaVersion)); err != nil {
			return err
		}
	case v.upgrade > 0:
		// An index of an earlier version, exactly as sot wrote it: it
		// gains what the later versions add and keeps its sources and
		// their analyses.
		if _, err := tx.ExecContext(ctx, strings.Join(schemaSteps[v.upgrade+1:], "")); err != nil {
			return fmt.Errorf("upgrading the schema: %w", err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
			return err
		}
	case v.distrust != "":
		return fmt.Errorf("the index changed while it was being opened and is not one sot wrote: %s", v.distrust)
	}
	return tx.Commit()
}

// Path is the path the index was opened with.
func (x *Index) Path() string { return x.path }

// Close closes the database. The index must not be used afterwards.
// When this was the last connection to the file, so that SQLite folded
// its write-ahead log into it, Close records the file's identity beside
// it, and the next Open trusts the file's pages without reading them all
// (see checked.go).
func (x *Index) Close() error {
	err := x.r.Close()
	if werr := x.w.Close(); err == nil {
		err = werr
	}
	if err == nil {
		recordChecked(x.abs)
	}
	return err
}

// docColumns are the columns scanDoc reads, in its order.
const docColumns = "id, path, type, date, hash, title, meta, analysis, body"

type scanner interface{ Scan(dest ...any) error }

// scanDoc reads a row of docColumns, after the columns scanned into first.
// With an empty string selected for the body it reads a Doc without its
// text.
func scanDoc(s scanner, first ...any) (Doc, error) {
	var d Doc
	var date, meta, analysis sql.NullString
	dest := append(first, &d.ID, &d.Path, &d.Type, &date, &d.Hash, &d.Title, &meta, &analysis, &d.Text)
	if err := s.Scan(dest...); err != nil {
		return Doc{}, err
	}
	if date.Valid {
		t, err := parseDate(date.String)
		if err != nil {
			return Doc{}, fmt.Errorf("source %q: bad date %q in the index", d.ID, date.String)
		}
		d.Date = t
	}
	if meta.Valid {
		d.Meta = json.RawMessage(meta.String)
	}
	if analysis.Valid {
		d.Analysis = json.RawMessage(analysis.String)
	}
	return d, nil
}

// Get returns the source with the given ID, or an error wrapping
// ErrNotFound.
func (x *Index) Get(ctx context.Context, id string) (Doc, error) {
	row := x.r.QueryRowContext(ctx, "SELECT "+docColumns+" FROM docs WHERE id = ?", id)
	d, err := scanDoc(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Doc{}, fmt.Errorf("index: source %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return Doc{}, fmt.Errorf("index: %w", err)
	}
	return d, nil
}

// List returns every source in the index sorted by ID, without its Text.
func (x *Index) List(ctx context.Context) ([]Doc, error) {
	rows, err := x.r.QueryContext(ctx, "SELECT "+strings.Replace(docColumns, "body", "''", 1)+" FROM docs ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	defer rows.Close()
	var docs []Doc
	for rows.Next() {
		d, err := scanDoc(rows)
		if err != nil {
			return nil, fmt.Errorf("index: %w", err)
		}
		docs = append(docs, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	return docs, nil
}

// Remove removes the sources with the given IDs and returns how many it
// removed; IDs the index does not hold are skipped.
func (x *Index) Remove(ctx context.Context, ids ...string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	tx, err := x.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("index: %w", err)
	}
	defer tx.Rollback()
	n, err := removeIDs(ctx, tx, ids)
	if err != nil {
		return 0, fmt.Errorf("index: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("index: %w", err)
	}
	return n, nil
}

// removeIDs removes the documents with the given IDs, and forgets the
// files that gave them (see File), and returns how many documents it
// removed.
func removeIDs(ctx context.Context, tx *sql.Tx, ids []string) (int, error) {
	stmt, err := tx.PrepareContext(ctx, "DELETE FROM docs WHERE id = ?")
	if err != nil {
		return 0, err
	}
	defer stmt.Close()
	files, err := tx.PrepareContext(ctx, "DELETE FROM files WHERE id = ?")
	if err != nil {
		return 0, err
	}
	defer files.Close()
	n := 0
	for _, id := range ids {
		if _, err := files.ExecContext(ctx, id); err != nil {
			return 0, err
		}
		res, err := stmt.ExecContext(ctx, id)
		if err != nil {
			return 0, err
		}
		k, err := res.RowsAffected()
		if err != nil {
			return 0, err
		}
		n += int(k)
	}
	return n, nil
}

// SetAnalysis stores the analysis of the source with the given ID, replacing
// the one it had; nil or empty clears it. The analysis must be valid JSON.
// It does not change the source's hash, so a later Sync that finds the
// source unchanged keeps it.
func (x *Index) SetAnalysis(ctx context.Context, id string, analysis json.RawMessage) error {
	a, err := jsonColumn("analysis", analysis)
	if err != nil {
		return fmt.Errorf("index: source %q: %w", id, err)
	}
	res, err := x.w.ExecContext(ctx, "UPDATE docs SET analysis = ? WHERE id = ?", a, id)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("index: source %q: %w", id, ErrNotFound)
	}
	return nil
}

// jsonColumn is the column value of a JSON field: NULL when empty, else the
// JSON, which must be valid.
func jsonColumn(field string, v json.RawMessage) (any, error) {
	if len(v) == 0 {
		return nil, nil
	}
	if !json.Valid(v) {
		return nil, fmt.Errorf("%s is not valid JSON", field)
	}
	return string(v), nil
}

// dateColumn is the column value of a date: NULL for the zero time.
func dateColumn(t time.Time) (any, error) {
	if t.IsZero() {
		return nil, nil
	}
	u := t.UTC()
	if y := u.Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("date %s is outside the years 0000-9999", t)
	}
	return u.Format(dateLayout), nil
}
