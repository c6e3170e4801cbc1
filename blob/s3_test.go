package blob

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// fakeS3 serves an S3-compatible API over HTTP on loopback, with one
// bucket, and returns the store's URL.
func fakeS3(t *testing.T) string {
	t.Helper()
	b := s3mem.New()
	if err := b.CreateBucket("sot-blobs"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(b).Server())
	t.Cleanup(srv.Close)
	return "s3://sot-blobs/team-a?tls=false&region=us-east-1&endpoint=" + strings.TrimPrefix(srv.URL, "http://")
}

func s3Env(k string) string {
	return map[string]string{"AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "example-secret-0123456789"}[k]
}

// The bucket store keeps and returns bytes by reference and records by
// name, as the directory does; what is missing is ErrNotFound.
func TestS3PutGetKeep(t *testing.T) {
	ctx := context.Background()
	s, err := OpenS3(ctx, fakeS3(t), s3Env)
	if err != nil {
		t.Fatal(err)
	}
	big := []byte(strings.Repeat("material ", 300_000))
	ref, err := s.Put(ctx, big)
	if err != nil || ref != RefOf(big) {
		t.Fatalf("put: %v, %v", ref, err)
	}
	if got, err := s.Get(ctx, ref); err != nil || string(got) != string(big) {
		t.Fatalf("get: %d bytes, %v", len(got), err)
	}
	if _, err := s.Get(ctx, RefOf([]byte("never"))); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown ref: %v", err)
	}
	if _, err := s.Kept(ctx, "answer-1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("nothing kept: %v", err)
	}
	if err := s.Keep(ctx, "answer-1", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Kept(ctx, "answer-1"); err != nil || string(got) != "kept" {
		t.Errorf("kept %q, %v", got, err)
	}
	if err := s.Keep(ctx, "../escape", []byte("x")); err == nil {
		t.Error("a name with a path was kept")
	}
}

// A URL that names no bucket, a bucket that does not exist, and missing
// keys are refused with what to do.
func TestOpenS3Refuses(t *testing.T) {
	ctx := context.Background()
	good := fakeS3(t)
	for _, tc := range []struct {
		url  string
		env  func(string) string
		want string
	}{
		{"s3:///nobucket", s3Env, "is not s3://"},
		{"https://example.com/b", s3Env, "is not s3://"},
		{strings.Replace(good, "sot-blobs", "missing", 1), s3Env, "create it first"},
		{good, func(string) string { return "" }, "set AWS_ACCESS_KEY_ID"},
	} {
		if _, err := OpenS3(ctx, tc.url, tc.env); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.url, err, tc.want)
		}
	}
}
