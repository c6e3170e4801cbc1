package index

import (
	"context"
	"database/sql"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// A database file found at the index's path is read before it is used, on
// a read-only connection (see [Open]). Its schema (every table, index,
// trigger and view in sqlite_schema, the FTS5 shadow tables included, and
// the FTS5 configuration) must be exactly the one this package creates, as
// read back from a fresh database built with the same statements, so the
// two never drift apart. A trigger, view, table or index of anyone else's
// making, a changed CREATE statement, a marker of an older or unknown
// schema version, or a file that fails PRAGMA integrity_check is not trusted:
// the file is removed and the index is built anew.

// schemaObject is one row of sqlite_schema.
type schemaObject struct {
	Type, Name, Table string
	SQL               sql.NullString // NULL for the indexes SQLite makes itself
}

func (o schemaObject) String() string { return fmt.Sprintf("%s %q", o.Type, o.Name) }

// expectedSchema is what this package's schema looks like in sqlite_schema
// and in the FTS5 configuration table, as SQLite itself writes it: as a
// fresh in-memory database built with the same statements reads back
// (freshSchema), kept in schema.json, which TestExpectedSchemaFile holds
// equal to that reading. Building the database in each process took a
// millisecond of every sot ask before the index could be opened.
// There is one for each version (1 to SchemaVersion), since an index sot
// wrote with an earlier version is upgraded in place.
func expectedSchema(version int) (schemaState, error) {
	states, err := schemaStates()
	if err != nil {
		return schemaState{}, err
	}
	return states[version], nil
}

// schemaStates is schema.json decoded, once.
var schemaStates = sync.OnceValues(func() ([]schemaState, error) { return decodeSchemaFile(schemaFile) })

//go:embed schema.json
var schemaFile []byte

// schemaFileEntry is one version's schemaState in schema.json.
type schemaFileEntry struct {
	Version int                `json:"version"`
	Objects []schemaFileObject `json:"objects"`
	Config  []string           `json:"config"`
}

// schemaFileObject is a schemaObject in schema.json.
type schemaFileObject struct {
	Type  string  `json:"type"`
	Name  string  `json:"name"`
	Table string  `json:"table"`
	SQL   *string `json:"sql"` // null for the indexes SQLite makes itself
}

// decodeSchemaFile reads schema.json: the schemaState of every version, by
// version (index 0 unused).
func decodeSchemaFile(data []byte) ([]schemaState, error) {
	var entries []schemaFileEntry
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, fmt.Errorf("index: schema.json: %w", err)
	}
	states := make([]schemaState, SchemaVersion+1)
	seen := make([]bool, SchemaVersion+1)
	for _, e := range entries {
		if e.Version < 1 || e.Version > SchemaVersion || seen[e.Version] {
			return nil, fmt.Errorf("index: schema.json: version %d is unknown or given twice", e.Version)
		}
		seen[e.Version] = true
		s := schemaState{config: e.Config}
		for _, o := range e.Objects {
			obj := schemaObject{Type: o.Type, Name: o.Name, Table: o.Table}
			if o.SQL != nil {
				obj.SQL = sql.NullString{String: *o.SQL, Valid: true}
			}
			s.objects = append(s.objects, obj)
		}
		states[e.Version] = s
	}
	for v := 1; v <= SchemaVersion; v++ {
		if !seen[v] {
			return nil, fmt.Errorf("index: schema.json has no version %d", v)
		}
	}
	return states, nil
}

// schemaState is the part of a database that must match expectedSchema.
type schemaState struct {
	objects []schemaObject // sorted by type and name
	config  []string       // the rows of docs_fts_config, "k=v", sorted
}

// queryer is what reading a database needs: an *sql.DB, *sql.Conn or
// *sql.Tx.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readSchema reads sqlite_schema, and docs_fts_config when there is one.
func readSchema(ctx context.Context, q queryer) (schemaState, error) {
	var s schemaState
	rows, err := q.QueryContext(ctx, "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name")
	if err != nil {
		return s, err
	}
	defer rows.Close()
	hasConfig := false
	for rows.Next() {
		var o schemaObject
		if err := rows.Scan(&o.Type, &o.Name, &o.Table, &o.SQL); err != nil {
			return s, err
		}
		o.SQL.String = normalizeSQL(o.SQL.String)
		s.objects = append(s.objects, o)
		hasConfig = hasConfig || o.Type == "table" && o.Name == "docs_fts_config"
	}
	if err := rows.Err(); err != nil {
		return s, err
	}
	rows.Close()
	if !hasConfig {
		return s, nil
	}
	rows, err = q.QueryContext(ctx, "SELECT quote(k), quote(v) FROM docs_fts_config")
	if err != nil {
		return s, err
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return s, err
		}
		s.config = append(s.config, k+"="+v)
	}
	if err := rows.Err(); err != nil {
		return s, err
	}
	slices.Sort(s.config)
	return s, nil
}

// normalizeSQL folds every run of white space in a CREATE statement to one
// space.
func normalizeSQL(s string) string { return strings.Join(strings.Fields(s), " ") }

// diffSchema says how got differs from want, or "" when it does not.
func diffSchema(got, want schemaState) string {
	wantObj := make(map[string]schemaObject, len(want.objects))
	for _, o := range want.objects {
		wantObj[o.Type+"\x00"+o.Name] = o
	}
	var why []string
	seen := map[string]bool{}
	for _, o := range got.objects {
		k := o.Type + "\x00" + o.Name
		seen[k] = true
		w, ok := wantObj[k]
		switch {
		case !ok:
			why = append(why, fmt.Sprintf("a %s %q (on %q) that sot does not create", o.Type, o.Name, o.Table))
		case o != w:
			why = append(why, fmt.Sprintf("a %s %q that differs from the one sot creates", o.Type, o.Name))
		}
	}
	for _, o := range want.objects {
		if !seen[o.Type+"\x00"+o.Name] {
			why = append(why, fmt.Sprintf("no %s %q", o.Type, o.Name))
		}
	}
	if len(why) == 0 && !slices.Equal(got.config, want.config) {
		why = append(why, "a full-text index configuration that differs from the one sot creates")
	}
	if len(why) == 0 {
		return ""
	}
	const most = 3
	if len(why) > most {
		why = append(why[:most], fmt.Sprintf("%d more differences", len(why)-most))
	}
	return "it has " + strings.Join(why, ", ")
}

// verdict is what examine found in a database file.
type verdict struct {
	// empty: the file holds no schema and no marker of another program;
	// migrate creates the schema in it.
	empty bool
	// distrust says why the file is not a sot index as this package
	// writes it, although it is marked as one; "" when it is.
	distrust string
	// upgrade is the version of an index of an earlier version exactly
	// as sot wrote it, which migrate brings up to SchemaVersion; 0 when
	// there is nothing to upgrade.
	upgrade int
}

// errForeign refuses a SQLite database that is not marked as a sot index.
var errForeign = errors.New("the file is a SQLite database but not a sot index")

// examine reads the markers and the schema of a database and judges it.
// It returns an error for a file that must be neither used nor removed: one
// that is not a SQLite database, one of another program, or one of a newer
// sot. With deep it also runs PRAGMA integrity_check, which reads every page
// (about 0.2 s for an index of 10,000 sources).
func examine(ctx context.Context, q queryer, deep bool) (verdict, error) {
	var version, appID int64
	if err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return verdict{}, err
	}
	if err := q.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return verdict{}, err
	}
	var objects int
	if err := q.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&objects); err != nil {
		return unreadable(appID, err)
	}
	switch {
	case version == 0 && objects == 0 && (appID == 0 || appID == applicationID):
		return verdict{empty: true}, nil
	case appID != applicationID:
		return verdict{}, errForeign
	case version > SchemaVersion:
		return verdict{}, fmt.Errorf("the index has schema version %d, newer than this sot's %d: upgrade sot or remove the index to rebuild it", version, SchemaVersion)
	case version < 1:
		return verdict{distrust: fmt.Sprintf("it is marked as schema version %d, which sot never writes", version)}, nil
	}
	want, err := expectedSchema(int(version))
	if err != nil {
		return verdict{}, err
	}
	got, err := readSchema(ctx, q)
	if err != nil {
		return unreadable(appID, err)
	}
	if why := diffSchema(got, want); why != "" {
		return verdict{distrust: why}, nil
	}
	v := verdict{}
	if version < SchemaVersion {
		v.upgrade = int(version)
	}
	if !deep {
		return v, nil
	}
	rows, err := q.QueryContext(ctx, "PRAGMA integrity_check(3)")
	if err != nil {
		return unreadable(appID, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return verdict{}, err
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	if err := rows.Err(); err != nil {
		return verdict{}, err
	}
	if len(problems) > 0 {
		return verdict{distrust: "it fails SQLite's integrity check: " + strings.Join(problems, "; ")}, nil
	}
	return v, nil
}

// unreadable judges a database that SQLite found corrupt while reading it
// (a malformed schema, say one that defensive mode refuses): not trusted
// when it is marked as a sot index, else refused with err.
func unreadable(appID int64, err error) (verdict, error) {
	var se *sqlite.Error
	if appID == applicationID && errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CORRUPT {
		return verdict{distrust: "SQLite finds it corrupt: " + err.Error()}, nil
	}
	return verdict{}, err
}

// inspect opens the existing database file at abs read-only and examines
// it, with integrity_check when deep. Every connection has trusted_schema off, so nothing
// in the file's schema can call a function with side effects while it is
// read.
func inspect(abs string, deep bool) (verdict, error) {
	db, err := sql.Open("sqlite", dsn(abs, append(safePragmas(), "mode=ro")...))
	if err != nil {
		return verdict{}, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return verdict{}, err
	}
	defer conn.Close()
	return examine(ctx, conn, deep)
}

// safePragmas are the DSN parameters of every connection: a busy timeout,
// no function with side effects called from the schema (triggers, views,
// CHECK constraints, ...), cells checked for size as pages are read, and
// SQLite's defensive mode (no writable_schema, no writes to shadow tables).
func safePragmas() []string {
	return []string{
		"_pragma=busy_timeout(" + fmt.Sprint(busyTimeout.Milliseconds()) + ")",
		"_pragma=trusted_schema(0)",
		"_pragma=cell_size_check(1)",
		"_defensive=1",
	}
}

// sideFiles are the suffixes of the files SQLite keeps beside a database,
// and of the record Close keeps there.
var sideFiles = []string{"-wal", "-shm", "-journal", checkedSuffix}

// removeFiles removes the database file at abs, which must still be the
// file that was examined (checked), and then the files SQLite keeps beside
// it. A symlink is removed itself, never what it points to (checkFiles
// refused those already). A file that does not exist is no error.
func removeFiles(abs string, checked fs.FileInfo) error {
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case !os.SameFile(fi, checked):
		return fmt.Errorf("%s was replaced while it was being checked", abs)
	default:
		if err := os.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	for _, suffix := range sideFiles {
		if err := os.Remove(abs + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
