package blob

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Pruning a directory store removes what was last written or used before
// the cut-off, and keeps an old object a later Put used again: a
// project's unchanged file, sent with every run, stays.
func TestDirPrune(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	old, _ := s.Put(ctx, []byte("old and unused"))
	reused, _ := s.Put(ctx, []byte("old, sent again"))
	fresh, _ := s.Put(ctx, []byte("fresh"))
	if err := s.Keep(ctx, "answer-old", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-10 * 24 * time.Hour)
	for _, p := range []string{objectFile(t, old), objectFile(t, reused), filepath.Join("kept", "answer-old")} {
		if err := os.Chtimes(filepath.Join(dir, p), long, long); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Put(ctx, []byte("old, sent again")); err != nil {
		t.Fatal(err)
	}
	got, err := s.Prune(ctx, time.Now().Add(-7*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if got.Objects != 2 || got.Bytes != int64(len("old and unused")+len("{}")) {
		t.Errorf("pruned %+v, want the old object and the old record", got)
	}
	if _, err := s.Get(ctx, old); !errors.Is(err, ErrNotFound) {
		t.Errorf("the old object is still there: %v", err)
	}
	for _, r := range []Ref{reused, fresh} {
		if _, err := s.Get(ctx, r); err != nil {
			t.Errorf("%s was pruned: %v", r, err)
		}
	}
}

func objectFile(t *testing.T, r Ref) string {
	t.Helper()
	p, err := objectPath(r)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.FromSlash(p)
}

// Pruning a bucket removes, under the store's prefix only, what was last
// written before the cut-off; an old object found held marks it used.
func TestS3Prune(t *testing.T) {
	ctx := context.Background()
	clock := gofakes3.FixedTimeSource(time.Now().Add(-10 * 24 * time.Hour))
	b := s3mem.New(s3mem.WithTimeSource(clock))
	if err := b.CreateBucket("sot-blobs"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(b, gofakes3.WithTimeSource(clock), gofakes3.WithTimeSkewLimit(0)).Server())
	t.Cleanup(srv.Close)
	base := "s3://sot-blobs/%s?tls=false&region=us-east-1&endpoint=" + strings.TrimPrefix(srv.URL, "http://")
	s, err := OpenS3(ctx, strings.Replace(base, "%s", "team-a", 1), s3Env)
	if err != nil {
		t.Fatal(err)
	}
	other, err := OpenS3(ctx, strings.Replace(base, "%s", "team-b", 1), s3Env)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := s.Put(ctx, []byte("old and unused"))
	reused, _ := s.Put(ctx, []byte("old, sent again"))
	theirs, _ := other.Put(ctx, []byte("another team's"))
	clock.Advance(10 * 24 * time.Hour)
	// Sent again with a project: found held, and marked as used.
	if !s.Held(ctx, reused, int64(len("old, sent again"))) {
		t.Fatal("the bucket does not hold an object it was given")
	}
	if s.Held(ctx, RefOf([]byte("never sent")), 10) {
		t.Error("the bucket holds an object it was never given")
	}
	got, err := s.Prune(ctx, time.Now().Add(-7*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if got.Objects != 1 {
		t.Errorf("pruned %+v, want the one old object", got)
	}
	if _, err := s.Get(ctx, old); !errors.Is(err, ErrNotFound) {
		t.Errorf("the old object is still there: %v", err)
	}
	if _, err := s.Get(ctx, reused); err != nil {
		t.Errorf("the object sent again was pruned: %v", err)
	}
	if _, err := other.Get(ctx, theirs); err != nil {
		t.Errorf("another prefix's object was pruned: %v", err)
	}
}
