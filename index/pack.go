package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
	"unsafe"
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

// packMagic starts a pack; a pack in another layout (sot-files/1, before
// the paths were written as they differ from the one before) is read past.
const packMagic = "sot-files/2\n"

// minPackedFile is the fewest bytes a packed file takes: one for each of
// its sixteen parts (numbers, lengths of strings, and flags).
const minPackedFile = 16

// errPack is what a pack that does not decode gives: Files reads the rows
// instead.
var errPack = errors.New("the packed files do not decode")

// readPack returns the files the pack holds, or ok false when there is
// none, or none that decodes. The pack's bytes are taken where the driver
// put them (sql.RawBytes) and kept: the strings of the files point into
// them. modernc's driver copies a blob out of SQLite into a new slice for
// each row and never writes to it again; TestFilesOutliveTheirRow fails
// if a version of it starts to.
func readPack(ctx context.Context, q queryer) (files []File, ok bool, err error) {
	rows, err := q.QueryContext(ctx, "SELECT data FROM files_pack WHERE k = 1")
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, false, rows.Err()
	}
	var data sql.RawBytes
	if err := rows.Scan(&data); err != nil {
		return nil, false, err
	}
	files, err = unpack(data)
	if err != nil {
		return nil, false, nil // the rows are the truth
	}
	return files, true, rows.Close()
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
// turn; numbers as varints, strings as a length and their bytes. What
// files of one corpus share is written once (the rows come sorted by
// path):
//   - the path as the length of the prefix it shares with the path before
//     it, and the rest;
//   - the change time after the modification time, and the checked time
//     after the one before, as differences;
//   - the reader, the skip reason and the type as a flag that says they
//     are the file before's, or the flag and the string;
//   - the ID as its length plus one when it starts the hash (it is the
//     hash's first digits), else 0 and the string; the shown path likewise
//     when it ends the path;
//   - the date as seconds and nanoseconds after a flag that says it is
//     set, and the meta likewise.
func pack(files []File) []byte {
	size := len(packMagic) + binary.MaxVarintLen64
	for i := range files {
		f := &files[i]
		size += 13*binary.MaxVarintLen64 + len(f.Path) + len(f.Reader) + len(f.Hash) + len(f.Skip) + len(f.Doc.ID) +
			len(f.Doc.Path) + len(f.Doc.Type) + len(f.Doc.Title) + len(f.Doc.Meta) + 6
	}
	b := make([]byte, 0, size)
	b = append(b, packMagic...)
	b = binary.AppendUvarint(b, uint64(len(files)))
	str := func(s string) { b = binary.AppendUvarint(b, uint64(len(s))); b = append(b, s...) }
	same := func(before, s string) {
		if s == before {
			b = append(b, 1)
			return
		}
		b = append(b, 0)
		str(s)
	}
	part := func(s string, ok bool) { // a part of another string, by its length plus one
		if ok {
			b = binary.AppendUvarint(b, uint64(len(s))+1)
			return
		}
		b = append(b, 0)
		str(s)
	}
	var prev File
	for i := range files {
		f := &files[i]
		k := sharedPrefix(prev.Path, f.Path)
		b = binary.AppendUvarint(b, uint64(k))
		str(f.Path[k:])
		b = binary.AppendVarint(b, f.Size)
		b = binary.AppendVarint(b, f.ModTime)
		b = binary.AppendVarint(b, f.Change-f.ModTime)
		b = binary.AppendUvarint(b, f.Inode)
		b = binary.AppendVarint(b, f.Checked-prev.Checked)
		same(prev.Reader, f.Reader)
		str(f.Hash)
		same(prev.Skip, f.Skip)
		part(f.Doc.ID, strings.HasPrefix(f.Hash, f.Doc.ID))
		part(f.Doc.Path, strings.HasSuffix(f.Path, f.Doc.Path))
		same(prev.Doc.Type, f.Doc.Type)
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
		prev = *f
	}
	return b
}

// sharedPrefix is the length of the longest prefix a and b share.
func sharedPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// unpack decodes what pack encoded. Its strings point into data, which
// the caller gives up (it is never written again), and the paths into one
// buffer of their own. Anything but a whole pack, read to its last byte,
// is errPack.
func unpack(data []byte) ([]File, error) {
	// At 10,000 files a copy of the pack is 2.7 MB of fresh memory, which
	// a process that prepares with the collector held off pays for a page
	// at a time.
	s := unsafe.String(unsafe.SliceData(data), len(data))
	if len(s) < len(packMagic) || s[:len(packMagic)] != packMagic {
		return nil, errPack
	}
	d := packDecoder{s: s, at: len(packMagic)}
	n := d.uvarint()
	if d.err != nil || n > uint64(len(s))/minPackedFile {
		return nil, errPack // more files than the bytes could hold: no slice sized by a count that lies
	}
	files := make([]File, n)
	// The paths are put together in one buffer, each from the one before
	// it and what follows the prefix they share, and made strings once
	// they are all there, with the shown paths that end them. The buffer
	// starts at the pack's size, which the paths seldom pass, so that it
	// is not grown a path at a time.
	paths := make([]byte, 0, len(s))
	ends := make([]int, n)
	shown := make([]int, n) // the length of the shown path that ends the path, plus one; 0 when it is its own
	start, prevChecked := 0, int64(0)
	var reader, skip, typ string
	for i := range files {
		f := &files[i]
		k := d.uvarint()
		rest := d.str()
		if d.err != nil || k > uint64(len(paths)-start) {
			return nil, errPack
		}
		before := len(paths)
		paths = append(paths, paths[start:start+int(k)]...)
		paths = append(paths, rest...)
		start, ends[i] = before, len(paths)
		f.Size, f.ModTime = d.varint(), d.varint()
		f.Change = f.ModTime + d.varint()
		f.Inode = d.uvarint()
		f.Checked = prevChecked + d.varint()
		prevChecked = f.Checked
		reader = d.same(reader)
		f.Reader, f.Hash = reader, d.str()
		skip = d.same(skip)
		f.Skip = skip
		if id := d.uvarint(); id > 0 {
			if id-1 > uint64(len(f.Hash)) {
				return nil, errPack
			}
			f.Doc.ID = f.Hash[:id-1]
		} else {
			f.Doc.ID = d.str()
		}
		shown[i] = int(min(d.uvarint(), uint64(len(paths)-start)+2)) // past the path's length is an error below
		if shown[i] == 0 {
			f.Doc.Path = d.str()
		}
		typ = d.same(typ)
		f.Doc.Type, f.Doc.Title = typ, d.str()
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
	all, from := unsafe.String(unsafe.SliceData(paths), len(paths)), 0 // paths is not written again
	for i := range files {
		f := &files[i]
		f.Path = all[from:ends[i]]
		from = ends[i]
		if k := shown[i]; k > 0 {
			if k-1 > len(f.Path) {
				return nil, errPack
			}
			f.Doc.Path = f.Path[len(f.Path)-(k-1):]
		}
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

// same reads a string written after a flag that says it is before, the
// string of the file before.
func (d *packDecoder) same(before string) string {
	if d.flag() {
		return before
	}
	return d.str()
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
		id, shown, type, date, title, meta FROM files ORDER BY path`)
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
