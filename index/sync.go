package index

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"slices"
	"time"
)

// SyncOptions tune Sync.
type SyncOptions struct {
	// Prune removes every source in the index that the synced docs do not
	// contain (by ID): the sources whose file is gone, and those a file no
	// longer yields. Without it Sync only adds and updates.
	Prune bool
}

// Changes reports what a Sync did.
type Changes struct {
	Added     int `json:"added"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	Removed   int `json:"removed"`

	// The IDs of the sources added, updated and removed, sorted.
	AddedIDs   []string `json:"added_ids,omitempty"`
	UpdatedIDs []string `json:"updated_ids,omitempty"`
	RemovedIDs []string `json:"removed_ids,omitempty"`
}

// ContentHash is the hash Sync gives a Doc that has none: SHA-256, in hex,
// over its Path, Title, Type, Date, Text and Meta (not its Analysis, which
// is derived from the rest).
func ContentHash(d Doc) string {
	h := sha256.New()
	field := func(h hash.Hash, s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	date := ""
	if !d.Date.IsZero() {
		date = d.Date.UTC().Format(time.RFC3339Nano)
	}
	for _, s := range []string{d.Path, d.Title, d.Type, date, d.Text, string(d.Meta)} {
		field(h, s)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// row is a Doc checked and turned into column values.
type row struct {
	id, path, typ, hash, title, body string
	date, meta, analysis             any
}

func toRow(d Doc) (row, error) {
	if d.ID == "" {
		return row{}, errors.New("a source has no ID")
	}
	r := row{id: d.ID, path: d.Path, typ: d.Type, hash: d.Hash, title: d.Title, body: d.Text}
	if r.hash == "" {
		r.hash = ContentHash(d)
	}
	var err error
	if r.date, err = dateColumn(d.Date); err != nil {
		return row{}, fmt.Errorf("source %q: %w", d.ID, err)
	}
	if r.meta, err = jsonColumn("meta", d.Meta); err != nil {
		return row{}, fmt.Errorf("source %q: %w", d.ID, err)
	}
	if r.analysis, err = jsonColumn("analysis", d.Analysis); err != nil {
		return row{}, fmt.Errorf("source %q: %w", d.ID, err)
	}
	return r, nil
}

// Sync brings the index up to date with docs, in one transaction:
//   - a doc whose ID the index does not hold is added;
//   - a doc whose Hash or Path differs from the stored one is updated: every
//     field is replaced, its Analysis too, so an analysis of the old content
//     does not outlive it (a doc without Analysis clears it);
//   - a doc with the same Hash and Path is left untouched, its stored
//     analysis included;
//   - with opts.Prune, sources the index holds and docs does not are removed.
//
// A doc without a Hash gets [ContentHash]. Every doc is checked before
// anything is written (an ID, no ID twice, valid JSON in Meta and Analysis,
// a date in the years 0000-9999); on any error nothing changes.
func (x *Index) Sync(ctx context.Context, docs []Doc, opts SyncOptions) (Changes, error) {
	rows := make([]row, len(docs))
	seen := make(map[string]bool, len(docs))
	for i, d := range docs {
		r, err := toRow(d)
		if err != nil {
			return Changes{}, fmt.Errorf("index: %w", err)
		}
		if seen[r.id] {
			return Changes{}, fmt.Errorf("index: source %q is given twice", r.id)
		}
		seen[r.id] = true
		rows[i] = r
	}

	tx, err := x.w.BeginTx(ctx, nil)
	if err != nil {
		return Changes{}, fmt.Errorf("index: %w", err)
	}
	defer tx.Rollback()
	c, err := syncRows(ctx, tx, rows, seen, opts)
	if err != nil {
		return Changes{}, fmt.Errorf("index: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return Changes{}, fmt.Errorf("index: %w", err)
	}
	slices.Sort(c.AddedIDs)
	slices.Sort(c.UpdatedIDs)
	slices.Sort(c.RemovedIDs)
	return c, nil
}

// Add adds docs to the index and updates those it holds already: Sync
// without pruning.
func (x *Index) Add(ctx context.Context, docs ...Doc) (Changes, error) {
	return x.Sync(ctx, docs, SyncOptions{})
}

func syncRows(ctx context.Context, tx *sql.Tx, rows []row, seen map[string]bool, opts SyncOptions) (Changes, error) {
	var c Changes
	lookup, err := tx.PrepareContext(ctx, "SELECT hash, path FROM docs WHERE id = ?")
	if err != nil {
		return c, err
	}
	defer lookup.Close()
	insert, err := tx.PrepareContext(ctx, `INSERT INTO docs (id, path, type, date, hash, title, meta, analysis, body)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return c, err
	}
	defer insert.Close()
	update, err := tx.PrepareContext(ctx, `UPDATE docs SET path = ?, type = ?, date = ?, hash = ?, title = ?,
		meta = ?, analysis = ?, body = ? WHERE id = ?`)
	if err != nil {
		return c, err
	}
	defer update.Close()
	movePath, err := tx.PrepareContext(ctx, "UPDATE docs SET path = ? WHERE id = ?")
	if err != nil {
		return c, err
	}
	defer movePath.Close()

	for _, r := range rows {
		var hash, path string
		err := lookup.QueryRowContext(ctx, r.id).Scan(&hash, &path)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if _, err := insert.ExecContext(ctx, r.id, r.path, r.typ, r.date, r.hash, r.title, r.meta, r.analysis, r.body); err != nil {
				return c, fmt.Errorf("adding %q: %w", r.id, err)
			}
			c.Added++
			c.AddedIDs = append(c.AddedIDs, r.id)
		case err != nil:
			return c, err
		case hash == r.hash && path != r.path:
			// The same content reached by another path (a file moved, or
			// a corpus named from another directory): its analysis still
			// holds.
			if _, err := movePath.ExecContext(ctx, r.path, r.id); err != nil {
				return c, fmt.Errorf("updating %q: %w", r.id, err)
			}
			c.Updated++
			c.UpdatedIDs = append(c.UpdatedIDs, r.id)
		case hash != r.hash:
			if _, err := update.ExecContext(ctx, r.path, r.typ, r.date, r.hash, r.title, r.meta, r.analysis, r.body, r.id); err != nil {
				return c, fmt.Errorf("updating %q: %w", r.id, err)
			}
			c.Updated++
			c.UpdatedIDs = append(c.UpdatedIDs, r.id)
		default:
			c.Unchanged++
		}
	}

	if !opts.Prune {
		return c, nil
	}
	ids, err := tx.QueryContext(ctx, "SELECT id FROM docs")
	if err != nil {
		return c, err
	}
	var gone []string
	for ids.Next() {
		var id string
		if err := ids.Scan(&id); err != nil {
			ids.Close()
			return c, err
		}
		if !seen[id] {
			gone = append(gone, id)
		}
	}
	if err := ids.Close(); err != nil {
		return c, err
	}
	if err := ids.Err(); err != nil {
		return c, err
	}
	if c.Removed, err = removeIDs(ctx, tx, gone); err != nil {
		return c, err
	}
	c.RemovedIDs = gone
	return c, nil
}
