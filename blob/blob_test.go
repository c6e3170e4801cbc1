package blob

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Bytes come back by their reference; the same bytes put twice, even at
// once, are one object; an unknown or malformed reference is an error.
func TestDirPutGet(t *testing.T) {
	ctx := context.Background()
	d, err := OpenDir(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	big := []byte(strings.Repeat("material ", 400_000)) // 3.6 MB: more than a Temporal payload
	var wg sync.WaitGroup
	refs := make([]Ref, 8)
	for i := range refs {
		wg.Go(func() {
			r, err := d.Put(ctx, big)
			if err != nil {
				t.Error(err)
			}
			refs[i] = r
		})
	}
	wg.Wait()
	for _, r := range refs {
		if r != refs[0] || r != RefOf(big) {
			t.Fatalf("refs %v differ for the same bytes", refs)
		}
	}
	got, err := d.Get(ctx, refs[0])
	if err != nil || string(got) != string(big) {
		t.Fatalf("get: %d bytes, %v", len(got), err)
	}
	if _, err := d.Get(ctx, RefOf([]byte("never put"))); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown ref: %v, want ErrNotFound", err)
	}
	for _, bad := range []Ref{"", "sha256:../../etc/passwd", "md5:abc"} {
		if _, err := d.Get(ctx, bad); err == nil {
			t.Errorf("ref %q was read", bad)
		}
	}
}

// A damaged object is refused, not handed on; a symbolic link planted
// where an object goes is replaced, never written through.
func TestDirRefusesTamperingAndSymlinks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ref, err := d.Put(ctx, []byte("answer"))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := objectPath(ref)
	if err := os.WriteFile(filepath.Join(dir, p), []byte("forged"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get(ctx, ref); err == nil || !strings.Contains(err.Error(), "other bytes") {
		t.Errorf("a forged object: %v", err)
	}

	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := []byte("second")
	p2, _ := objectPath(RefOf(data))
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p2)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := d.write(p2+".x", data); err != nil { // the directory exists
		t.Fatal(err)
	}
	link := filepath.Join(dir, p2)
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	// Put sees something at the object's path; Get then refuses what
	// the link leads to, which is not the object.
	if _, err := d.Get(ctx, RefOf(data)); err == nil {
		t.Error("an object read through a symlink out of the store")
	}
	if _, err := d.Put(ctx, data); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep" {
		t.Errorf("the file the link pointed at now holds %q", b)
	}
	if got, err := d.Get(ctx, RefOf(data)); err != nil || string(got) != "second" {
		t.Errorf("after the write: %q, %v", got, err)
	}
}

// A record kept by name comes back, is replaced by a later one, and a
// name that would leave the store is refused.
func TestDirKeep(t *testing.T) {
	ctx := context.Background()
	d, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Kept(ctx, "answer-1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("nothing kept yet: %v", err)
	}
	for _, v := range []string{"first", "second"} {
		if err := d.Keep(ctx, "answer-1", []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := d.Kept(ctx, "answer-1"); err != nil || string(got) != "second" {
		t.Errorf("kept %q, %v; want the second", got, err)
	}
	for _, bad := range []string{"", "../x", "a/b", ".hidden"} {
		if err := d.Keep(ctx, bad, []byte("x")); err == nil {
			t.Errorf("name %q was kept", bad)
		}
	}
}
