package index

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var updateSchema = flag.Bool("update", false, "rewrite schema.json from a fresh database of each version")

// schema.json, which the index checks a database file's schema against,
// is what SQLite reads back from a fresh database built with the
// package's statements, for every version. After a change to the schema
// (or to SQLite): go test ./index -run TestExpectedSchemaFile -update.
func TestExpectedSchemaFile(t *testing.T) {
	var entries []schemaFileEntry
	fresh := make([]schemaState, SchemaVersion+1)
	for v := 1; v <= SchemaVersion; v++ {
		s, err := freshSchema(fmt.Sprintf("sot-index-schema-test-v%d", v), schemaOf(v))
		if err != nil {
			t.Fatal(err)
		}
		fresh[v] = s
		e := schemaFileEntry{Version: v, Config: s.config}
		for _, o := range s.objects {
			var q *string
			if o.SQL.Valid {
				q = &o.SQL.String
			}
			e.Objects = append(e.Objects, schemaFileObject{o.Type, o.Name, o.Table, q})
		}
		entries = append(entries, e)
	}
	want, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if *updateSchema {
		if err := os.WriteFile("schema.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(schemaFile, want) {
		t.Fatalf("schema.json is not what a fresh database reads back; run go test ./index -run TestExpectedSchemaFile -update\n%s",
			cmp.Diff(string(want), string(schemaFile)))
	}
	got, err := decodeSchemaFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	for v := 1; v <= SchemaVersion; v++ {
		if d := cmp.Diff(fresh[v], got[v], cmp.AllowUnexported(schemaState{}), cmp.Comparer(func(a, b sql.NullString) bool { return a == b })); d != "" {
			t.Errorf("version %d decodes to another schema (-fresh +file):\n%s", v, d)
		}
	}
}

// freshSchema creates statements in a new in-memory database of the given
// name and reads back what SQLite made of them.
func freshSchema(name, statements string) (schemaState, error) {
	db, err := sql.Open("sqlite", "file:"+name+"?mode=memory")
	if err != nil {
		return schemaState{}, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // every connection to :memory: is a database of its own
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, statements); err != nil {
		return schemaState{}, fmt.Errorf("creating the schema: %w", err)
	}
	return readSchema(ctx, db)
}
