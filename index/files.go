package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
)

// filesSchema is what schema version 2 adds to version 1: the files the
// documents were read from, with what each file's stat said when it was
// read and what it gave, so that a loader reads again only the files that
// changed. It is its own table, so a version 1 index gains it without its
// other CREATE statements changing.
const filesSchema = `
CREATE TABLE files (
  path    TEXT PRIMARY KEY,
  size    INTEGER NOT NULL,
  mtime   INTEGER NOT NULL,
  ctime   INTEGER NOT NULL,
  inode   INTEGER NOT NULL,
  checked INTEGER NOT NULL,
  reader  TEXT NOT NULL,
  hash    TEXT NOT NULL,
  skip    TEXT NOT NULL,
  id      TEXT NOT NULL,
  shown   TEXT NOT NULL,
  type    TEXT NOT NULL,
  date    TEXT,
  title   TEXT NOT NULL,
  meta    TEXT CHECK (meta IS NULL OR json_valid(meta))
) STRICT, WITHOUT ROWID;
CREATE INDEX files_id ON files(id);
`

// File is a file documents are read from, as the index remembers it: what
// its stat said when it was read, and what reading it gave. The index does
// not judge whether a file changed; the loader that wrote the File does.
type File struct {
	// Path is the file's resolved, absolute path: the key.
	Path string `json:"path"`
	// Size, ModTime and Change (the inode's change time; 0 where the
	// system does not keep one) are the file's stat when it was read, in
	// bytes and nanoseconds since the epoch, and Inode its inode number
	// (0 where unknown).
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime"`
	Change  int64  `json:"ctime"`
	Inode   uint64 `json:"inode"`
	// Checked is when the reading of the file began, in nanoseconds since
	// the epoch: a file whose stat is not older than that may have
	// changed again within the same clock tick.
	Checked int64 `json:"checked"`
	// Reader names the loader, and its version, that read the file.
	Reader string `json:"reader"`
	// Hash is the hash of the file's bytes.
	Hash string `json:"hash"`
	// Skip is why the file gives no document; "" when it gives Doc.
	Skip string `json:"skip,omitempty"`
	// Doc is the document the file gives: its ID, Path (as the file was
	// reached), Title, Type, Date and Meta. Its Text and Analysis are not
	// kept with the file; the document itself holds them.
	Doc Doc `json:"doc"`
}

// Files returns every file the index remembers, sorted by Path (byte by
// byte, as strings compare). A file
// whose document leaves the index (Remove, Sync with Prune) is forgotten
// with it, so that its loader reads it again.
func (x *Index) Files(ctx context.Context) ([]File, error) {
	files, ok, err := readPack(ctx, x.r)
	if err == nil && !ok {
		x.unpacked.Store(true) // the next UpdateFiles packs them
		files, err = fileRows(ctx, x.r)
	}
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	return files, nil
}

// FileUpdate is what a loader found since the index last saw its files.
type FileUpdate struct {
	// Put are the files read again or for the first time; each replaces
	// the File the index holds for its Path.
	Put []File
	// Gone are the paths of files that are no longer there (or no longer
	// read): the index forgets them.
	Gone []string
	// Docs are the documents the files of Put give: added, or updated
	// when their hash or path changed, as [Index.Sync] does without
	// pruning.
	Docs []Doc
}

// UpdateFiles applies a loader's findings in one transaction: it syncs
// u.Docs, replaces the files of u.Put, forgets the paths of u.Gone, and
// then removes every document that one of those files gave before and
// that no file the index remembers gives any more, so that a deleted or
// edited file's old content leaves the index with its analysis. Documents
// no file ever gave (added by hand) are left alone. The files are then
// packed for Files. An empty update writes nothing, unless Files found no
// pack to read.
func (x *Index) UpdateFiles(ctx context.Context, u FileUpdate) (Changes, error) {
	if len(u.Put) == 0 && len(u.Gone) == 0 && len(u.Docs) == 0 && !x.unpacked.Load() {
		return Changes{}, nil
	}
	rows := make([]row, len(u.Docs))
	seen := make(map[string]bool, len(u.Docs))
	for i, d := range u.Docs {
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
	puts := make([][]any, len(u.Put))
	for i, f := range u.Put {
		if f.Path == "" {
			return Changes{}, errors.New("index: a file has no path")
		}
		date, err := dateColumn(f.Doc.Date)
		if err != nil {
			return Changes{}, fmt.Errorf("index: file %q: %w", f.Path, err)
		}
		meta, err := jsonColumn("meta", f.Doc.Meta)
		if err != nil {
			return Changes{}, fmt.Errorf("index: file %q: %w", f.Path, err)
		}
		puts[i] = []any{f.Path, f.Size, f.ModTime, f.Change, int64(f.Inode), f.Checked, f.Reader, f.Hash, f.Skip,
			f.Doc.ID, f.Doc.Path, f.Doc.Type, date, f.Doc.Title, meta}
	}

	tx, err := x.w.BeginTx(ctx, nil)
	if err != nil {
		return Changes{}, fmt.Errorf("index: %w", err)
	}
	defer tx.Rollback()
	c, err := syncRows(ctx, tx, rows, seen, SyncOptions{})
	if err != nil {
		return Changes{}, fmt.Errorf("index: %w", err)
	}
	orphans, err := updateFiles(ctx, tx, puts, u)
	if err != nil {
		return Changes{}, fmt.Errorf("index: %w", err)
	}
	gone := make([]string, 0, len(orphans))
	for _, id := range orphans {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM files WHERE id = ?", id).Scan(&n); err != nil {
			return Changes{}, fmt.Errorf("index: %w", err)
		}
		if n == 0 {
			gone = append(gone, id)
		}
	}
	if c.Removed, err = removeIDs(ctx, tx, gone); err != nil {
		return Changes{}, fmt.Errorf("index: %w", err)
	}
	if err := writePack(ctx, tx); err != nil {
		return Changes{}, fmt.Errorf("index: packing the files: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return Changes{}, fmt.Errorf("index: %w", err)
	}
	x.unpacked.Store(false)
	c.RemovedIDs = gone
	slices.Sort(c.AddedIDs)
	slices.Sort(c.UpdatedIDs)
	slices.Sort(c.RemovedIDs)
	return c, nil
}

// updateFiles writes the files of u.Put (as puts, their column values)
// and deletes those of u.Gone, returning the IDs of the documents the
// replaced and deleted files gave before, each once.
func updateFiles(ctx context.Context, tx *sql.Tx, puts [][]any, u FileUpdate) ([]string, error) {
	before, err := tx.PrepareContext(ctx, "SELECT id FROM files WHERE path = ?")
	if err != nil {
		return nil, err
	}
	defer before.Close()
	put, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO files (path, size, mtime, ctime, inode, checked, reader, hash, skip,
		id, shown, type, date, title, meta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return nil, err
	}
	defer put.Close()
	del, err := tx.PrepareContext(ctx, "DELETE FROM files WHERE path = ?")
	if err != nil {
		return nil, err
	}
	defer del.Close()

	var orphans []string
	had := map[string]bool{}
	old := func(path, now string) error {
		var id string
		err := before.QueryRowContext(ctx, path).Scan(&id)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil
		case err != nil:
			return err
		}
		if id != "" && id != now && !had[id] {
			had[id] = true
			orphans = append(orphans, id)
		}
		return nil
	}
	for i, f := range u.Put {
		if err := old(f.Path, f.Doc.ID); err != nil {
			return nil, err
		}
		if _, err := put.ExecContext(ctx, puts[i]...); err != nil {
			return nil, fmt.Errorf("recording the file %q: %w", f.Path, err)
		}
	}
	for _, p := range u.Gone {
		if err := old(p, ""); err != nil {
			return nil, err
		}
		if _, err := del.ExecContext(ctx, p); err != nil {
			return nil, fmt.Errorf("forgetting the file %q: %w", p, err)
		}
	}
	return orphans, nil
}

// parseDate reads a date as dateColumn writes it. The fixed width of
// dateLayout is read digit by digit, which takes a tenth of what
// time.Parse takes: Files reads one date a file, 10,000 at a time. Any
// other text goes to time.Parse, which says what is wrong with it.
func parseDate(s string) (time.Time, error) {
	if len(s) != len(dateLayout) || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' || s[29] != 'Z' {
		return time.Parse(dateLayout, s)
	}
	num := func(from, to int) (int, bool) {
		n := 0
		for _, c := range []byte(s[from:to]) {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	var v [7]int
	for i, r := range [7][2]int{{0, 4}, {5, 7}, {8, 10}, {11, 13}, {14, 16}, {17, 19}, {20, 29}} {
		n, ok := num(r[0], r[1])
		if !ok {
			return time.Parse(dateLayout, s)
		}
		v[i] = n
	}
	t := time.Date(v[0], time.Month(v[1]), v[2], v[3], v[4], v[5], v[6], time.UTC)
	if t.Year() != v[0] || int(t.Month()) != v[1] || t.Day() != v[2] || t.Hour() != v[3] || t.Minute() != v[4] || t.Second() != v[5] {
		return time.Parse(dateLayout, s) // out of range: February 30th, hour 25
	}
	return t, nil
}
