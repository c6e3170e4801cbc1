package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// packSchema is what schema version 4 adds to version 3: every row of
// files packed into one value, which Files reads in one step. Reading
// 10,000 rows a column at a time took 36 ms of CPU of the 90 ms sot ask
// spent before its first request over an unchanged corpus; unpacking takes
// a tenth of that. Any write to files drops the pack, so that it never
// disagrees with the rows: UpdateFiles packs them again in the same
// transaction, and Files reads the rows while there is no pack.
const packSchema = `
CREATE TABLE files_pack (
  k    INTEGER PRIMARY KEY CHECK (k = 1),
  data BLOB NOT NULL
) STRICT;
CREATE TRIGGER files_pack_ai AFTER INSERT ON files BEGIN DELETE FROM files_pack; END;
CREATE TRIGGER files_pack_au AFTER UPDATE ON files BEGIN DELETE FROM files_pack; END;
CREATE TRIGGER files_pack_ad AFTER DELETE ON files BEGIN DELETE FROM files_pack; END;
`

// packMagic starts a pack; a pack in another layout is read past.
const packMagic = "sot-files/1\n"

// minPackedFile is the fewest bytes a packed file takes: a byte for the
// length of each of its eight strings (nine with a meta), one for each of
// its five numbers, and its two flags.
const minPackedFile = 15

// errPack is what a pack that does not decode gives: Files reads the rows
// instead.
var errPack = errors.New("the packed files do not decode")

// readPack returns the files the pack holds, or ok false when there is
// none, or none that decodes.
func readPack(ctx context.Context, q queryer) (files []File, ok bool, err error) {
	var data []byte
	switch err := q.QueryRowContext(ctx, "SELECT data FROM files_pack WHERE k = 1").Scan(&data); {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	files, err = unpack(data)
	if err != nil {
		return nil, false, nil // the rows are the truth
	}
	return files, true, nil
}

// writePack packs the rows of files, as the transaction sees them now.
func writePack(ctx context.Context, tx *sql.Tx) error {
	files, err := fileRows(ctx, tx)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, "INSERT OR REPLACE INTO files_pack (k, data) VALUES (1, ?)", pack(files))
	return err
}

// pack encodes files: packMagic, their count, and each file's fields in
// turn, strings as a length and their bytes, numbers as varints, and the
// date as seconds and nanoseconds after a flag that says it is set (the
// meta likewise).
func pack(files []File) []byte {
	size := len(packMagic) + binary.MaxVarintLen64
	for i := range files {
		f := &files[i]
		size += 12*binary.MaxVarintLen64 + len(f.Path) + len(f.Reader) + len(f.Hash) + len(f.Skip) + len(f.Doc.ID) +
			len(f.Doc.Path) + len(f.Doc.Type) + len(f.Doc.Title) + len(f.Doc.Meta) + 2
	}
	b := make([]byte, 0, size)
	b = append(b, packMagic...)
	b = binary.AppendUvarint(b, uint64(len(files)))
	str := func(s string) { b = binary.AppendUvarint(b, uint64(len(s))); b = append(b, s...) }
	for i := range files {
		f := &files[i]
		str(f.Path)
		b = binary.AppendVarint(b, f.Size)
		b = binary.AppendVarint(b, f.ModTime)
		b = binary.AppendVarint(b, f.Change)
		b = binary.AppendUvarint(b, f.Inode)
		b = binary.AppendVarint(b, f.Checked)
		str(f.Reader)
		str(f.Hash)
		str(f.Skip)
		str(f.Doc.ID)
		str(f.Doc.Path)
		str(f.Doc.Type)
		str(f.Doc.Title)
		if f.Doc.Date.IsZero() {
			b = append(b, 0)
		} else {
			b = append(b, 1)
			b = binary.AppendVarint(b, f.Doc.Date.Unix())
			b = binary.AppendVarint(b, int64(f.Doc.Date.Nanosecond()))
		}
		if f.Doc.Meta == nil {
			b = append(b, 0)
		} else {
			b = append(b, 1)
			str(string(f.Doc.Meta))
		}
	}
	return b
}

// unpack decodes what pack encoded. Its strings share one copy of data.
// Anything but a whole pack, read to its last byte, is errPack.
func unpack(data []byte) ([]File, error) {
	s := string(data)
	if len(s) < len(packMagic) || s[:len(packMagic)] != packMagic {
		return nil, errPack
	}
	d := packDecoder{s: s, at: len(packMagic)}
	n := d.uvarint()
	if d.err != nil || n > uint64(len(s))/minPackedFile {
		return nil, errPack // more files than the bytes could hold: no slice sized by a count that lies
	}
	files := make([]File, n)
	for i := range files {
		f := &files[i]
		f.Path = d.str()
		f.Size, f.ModTime, f.Change = d.varint(), d.varint(), d.varint()
		f.Inode = d.uvarint()
		f.Checked = d.varint()
		f.Reader, f.Hash, f.Skip = d.str(), d.str(), d.str()
		f.Doc.ID, f.Doc.Path, f.Doc.Type, f.Doc.Title = d.str(), d.str(), d.str(), d.str()
		f.Doc.Hash = f.Hash
		if d.flag() {
			sec, nsec := d.varint(), d.varint()
			if nsec < 0 || nsec >= int64(time.Second) {
				return nil, errPack
			}
			f.Doc.Date = time.Unix(sec, nsec).UTC()
		}
		if d.flag() {
			f.Doc.Meta = []byte(d.str())
		}
		if d.err != nil {
			return nil, errPack
		}
	}
	if d.at != len(s) {
		return nil, errPack
	}
	return files, nil
}

// packDecoder reads a pack; its first error sticks.
type packDecoder struct {
	s   string
	at  int
	err error
}

func (d *packDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if d.at >= len(d.s) {
			break
		}
		c := d.s[d.at]
		d.at++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
	d.err = errPack
	return 0
}

func (d *packDecoder) varint() int64 {
	u := d.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (d *packDecoder) str() string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.s)-d.at) {
		d.err = errPack
		return ""
	}
	s := d.s[d.at : d.at+int(n)]
	d.at += int(n)
	return s
}

func (d *packDecoder) flag() bool {
	if d.err != nil || d.at >= len(d.s) || d.s[d.at] > 1 {
		d.err = errPack
		return false
	}
	d.at++
	return d.s[d.at-1] == 1
}

// fileRows reads every row of files.
func fileRows(ctx context.Context, q queryer) ([]File, error) {
	// The count, from the smallest index, sizes the slice: growing it a
	// File at a time copied each of 10,000 files many times over. It is
	// only a hint, read a moment before the rows.
	var n int
	if err := q.QueryRowContext(ctx, "SELECT count(*) FROM files").Scan(&n); err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, `SELECT path, size, mtime, ctime, inode, checked, reader, hash, skip,
		id, shown, type, date, title, meta FROM files`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]File, 0, n)
	for rows.Next() {
		var f File
		var inode int64
		var date, meta sql.NullString
		if err := rows.Scan(&f.Path, &f.Size, &f.ModTime, &f.Change, &inode, &f.Checked, &f.Reader, &f.Hash, &f.Skip,
			&f.Doc.ID, &f.Doc.Path, &f.Doc.Type, &date, &f.Doc.Title, &meta); err != nil {
			return nil, err
		}
		f.Inode = uint64(inode)
		f.Doc.Hash = f.Hash
		if date.Valid {
			t, err := parseDate(date.String)
			if err != nil {
				return nil, fmt.Errorf("file %q: bad date %q", f.Path, date.String)
			}
			f.Doc.Date = t
		}
		if meta.Valid {
			f.Doc.Meta = []byte(meta.String)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}
