package index

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// packFiles are files with every field set, and with the ones that can be
// missing (date, meta, skip) missing; an ID that starts the hash and one
// that does not, a shown path that ends the path and one that does not,
// readers, skip reasons and types as the file before's and not, times
// that go back (a change before the modification, a check before the one
// before), and paths that share more or less of the one before.
func packFiles() []File {
	const hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	return []File{
		{Path: "/c/a.md", Size: 120, ModTime: 1_700_000_000_123_456_789, Change: 1_700_000_001_000_000_000, Inode: 1 << 40,
			Checked: 1_700_000_002_000_000_000, Reader: "r/1", Hash: "h-a",
			Doc: Doc{ID: "a", Path: "notes/a.md", Title: "Prícing — ünïcode", Type: "meeting", Hash: "h-a",
				Date: time.Date(2025, 1, 10, 9, 30, 0, 123, time.UTC), Meta: json.RawMessage(`{"people":["Ana"]}`)}},
		{Path: "/c/b.md", Size: 0, ModTime: -5, Reader: "r/1", Hash: "h-b", Doc: Doc{ID: "b", Path: "b.md", Hash: "h-b"}},
		{Path: "/c/big.bin", Size: 1 << 30, Reader: "r/1", Hash: "h-c", Skip: "binary", Doc: Doc{Path: "big.bin", Hash: "h-c"}},
		{Path: "/c/big.bin.d/2025/x.md", Size: 3, ModTime: 10, Change: 9, Checked: 5, Reader: "r/2", Hash: hash, Skip: "binary",
			Doc: Doc{ID: hash[:16], Path: "2025/x.md", Type: "memo", Title: "X", Hash: hash}},
		{Path: "/d/ü.md", Size: 3, ModTime: 10, Change: 10, Checked: 5, Reader: "r/2", Hash: hash + "!",
			Doc: Doc{ID: hash[:16], Path: "/d/ü.md", Type: "memo", Title: "Ü", Hash: hash + "!"}},
	}
}

// TestFilesComeFromThePack: what UpdateFiles records, Files gives back
// from the pack exactly as from the rows; a write to files by any other
// way (removing a source by hand) drops the pack, Files then reads the
// rows, and the next update packs them again, even an empty one.
func TestFilesComeFromThePack(t *testing.T) {
	ctx := context.Background()
	x, _ := openTemp(t)
	files := packFiles()
	if _, err := x.UpdateFiles(ctx, FileUpdate{Put: files}); err != nil {
		t.Fatal(err)
	}
	packed, ok, err := readPack(ctx, x.r)
	if err != nil || !ok {
		t.Fatalf("no pack after UpdateFiles: %v", err)
	}
	rows, err := fileRows(ctx, x.r)
	if err != nil {
		t.Fatal(err)
	}
	byPath := cmpopts.SortSlices(func(a, b File) bool { return a.Path < b.Path })
	if d := cmp.Diff(rows, packed, byPath); d != "" {
		t.Errorf("the pack differs from the rows (-rows +pack):\n%s", d)
	}
	if d := cmp.Diff(files, packed, byPath); d != "" {
		t.Errorf("the pack differs from what was recorded (-recorded +pack):\n%s", d)
	}

	if _, err := x.Remove(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := readPack(ctx, x.r); ok {
		t.Fatal("the pack outlived a write to files")
	}
	got, err := x.Files(ctx)
	if err != nil || len(got) != 4 {
		t.Fatalf("Files without a pack = %d files, %v; want all but a.md", len(got), err)
	}
	if _, err := x.UpdateFiles(ctx, FileUpdate{}); err != nil {
		t.Fatal(err)
	}
	if packed, ok, _ := readPack(ctx, x.r); !ok || len(packed) != 4 {
		t.Errorf("after an empty update: pack %v with %d files; want the four files packed", ok, len(packed))
	}
}

// TestFilesOutliveTheirRow: the files Files gives share the pack's bytes
// as the driver read them (readPack), so they must stay as they were
// after more reads, a new pack and the index's close, whatever the driver
// does with its memory then.
func TestFilesOutliveTheirRow(t *testing.T) {
	ctx := context.Background()
	x, _ := openTemp(t)
	if _, err := x.UpdateFiles(ctx, FileUpdate{Put: packFiles()}); err != nil {
		t.Fatal(err)
	}
	got, err := x.Files(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other := packFiles()
	for i := range other {
		other[i].Hash, other[i].Doc.Title = strings.Repeat("x", len(other[i].Hash)), strings.Repeat("y", len(other[i].Doc.Title))
	}
	for range 3 {
		if _, err := x.Files(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := x.UpdateFiles(ctx, FileUpdate{Put: other}); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Files(ctx); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	byPath := cmpopts.SortSlices(func(a, b File) bool { return a.Path < b.Path })
	if d := cmp.Diff(packFiles(), got, byPath); d != "" {
		t.Errorf("the files changed after their row was read (-recorded +now):\n%s", d)
	}
}

// TestDamagedPackIsReadPast: a pack that does not decode (cut short, a
// byte changed, another layout) never panics and never gives files; Files
// reads the rows instead.
func TestDamagedPackIsReadPast(t *testing.T) {
	good := pack(packFiles())
	if _, err := unpack(good); err != nil {
		t.Fatal(err)
	}
	for n := range len(good) {
		if _, err := unpack(good[:n]); !errors.Is(err, errPack) {
			t.Fatalf("a pack cut at %d of %d bytes: %v", n, len(good), err)
		}
	}
	for i := len(packMagic); i < len(good); i++ {
		bad := append([]byte(nil), good...)
		bad[i] ^= 0xff
		unpack(bad) // decodes to something or fails; never panics
	}
	lying := binary.AppendUvarint([]byte(packMagic), 1<<40) // a count no slice should be sized by
	if _, err := unpack(append(lying, make([]byte, 64)...)); !errors.Is(err, errPack) {
		t.Errorf("a pack that claims 2^40 files in 64 bytes: %v", err)
	}
	if _, err := unpack(append(good, 0)); !errors.Is(err, errPack) {
		t.Errorf("a pack with a byte after its end: %v", err)
	}
	older := append([]byte("sot-files/1\n"), good[len(packMagic):]...)
	if _, err := unpack(older); !errors.Is(err, errPack) {
		t.Errorf("a pack in the first layout: %v; want it read past (the rows are read, and packed anew)", err)
	}

	ctx := context.Background()
	x, _ := openTemp(t)
	if _, err := x.UpdateFiles(ctx, FileUpdate{Put: packFiles()}); err != nil {
		t.Fatal(err)
	}
	if _, err := x.w.ExecContext(ctx, "UPDATE files_pack SET data = x'00ff'"); err != nil {
		t.Fatal(err)
	}
	got, err := x.Files(ctx)
	if err != nil || len(got) != 5 {
		t.Errorf("Files over a damaged pack = %d files, %v; want the 5 rows", len(got), err)
	}
}

func FuzzUnpack(f *testing.F) {
	f.Add(pack(packFiles()))
	f.Add([]byte(packMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		files, err := unpack(data)
		if err != nil {
			return
		}
		// What decodes packs again to the same bytes, but for a
		// varint written longer than it needs to be.
		if again, err := unpack(pack(files)); err != nil || len(again) != len(files) {
			t.Fatalf("repacked: %d files, %v; want %d", len(again), err, len(files))
		}
	})
}
