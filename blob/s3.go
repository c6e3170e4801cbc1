package blob

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3 is a Store in a bucket of an S3-compatible service (AWS S3, MinIO,
// Ceph, R2, ...), for workers far apart. Objects are checked against
// their hash when read, as in Dir.
type S3 struct {
	client *minio.Client
	bucket string
	prefix string
}

// OpenS3 opens the store a URL names:
//
//	s3://BUCKET[/PREFIX][?endpoint=HOST:PORT&region=REGION&tls=false]
//
// The endpoint defaults to AWS S3 (s3.amazonaws.com) over TLS. Keys come
// from getenv: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and, when set,
// AWS_SESSION_TOKEN.
func OpenS3(ctx context.Context, rawURL string, getenv func(string) string) (*S3, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return nil, fmt.Errorf("blob store: %q is not s3://BUCKET[/PREFIX][?endpoint=HOST:PORT&region=REGION&tls=false]", rawURL)
	}
	q := u.Query()
	endpoint := q.Get("endpoint")
	if endpoint == "" {
		endpoint = "s3.amazonaws.com"
	}
	id, secret := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")
	if id == "" || secret == "" {
		return nil, fmt.Errorf("blob store %s: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY to the bucket's keys", rawURL)
	}
	c, err := minio.New(endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(id, secret, getenv("AWS_SESSION_TOKEN")),
		Secure: q.Get("tls") != "false",
		Region: q.Get("region"),
	})
	if err != nil {
		return nil, fmt.Errorf("blob store %s: %w", rawURL, err)
	}
	s := &S3{client: c, bucket: u.Host, prefix: strings.Trim(u.Path, "/")}
	ok, err := c.BucketExists(ctx, s.bucket)
	if err != nil {
		return nil, fmt.Errorf("blob store %s: %w", rawURL, err)
	}
	if !ok {
		return nil, fmt.Errorf("blob store %s: the bucket %s does not exist; create it first", rawURL, s.bucket)
	}
	return s, nil
}

// Close releases nothing; it is here to match Dir.
func (s *S3) Close() error { return nil }

func (s *S3) key(p string) string { return path.Join(s.prefix, p) }

// Put stores data under its hash.
func (s *S3) Put(ctx context.Context, data []byte) (Ref, error) {
	ref := RefOf(data)
	p, _ := objectPath(ref)
	if _, err := s.client.PutObject(ctx, s.bucket, s.key(p), bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		return "", fmt.Errorf("blob store: %w", err)
	}
	return ref, nil
}

// Held reports whether the bucket holds ref's object of size bytes (Get
// checks its hash), marking an old one as used so that Prune keeps it: a
// project's unchanged file is not uploaded again with every run. A call's
// request, new each time, is Put without asking first.
func (s *S3) Held(ctx context.Context, ref Ref, size int64) bool {
	p, err := objectPath(ref)
	if err != nil {
		return false
	}
	fi, err := s.client.StatObject(ctx, s.bucket, s.key(p), minio.StatObjectOptions{})
	if err != nil || fi.Size != size {
		return false
	}
	if time.Since(fi.LastModified) <= refreshAfter {
		return true
	}
	src := minio.CopySrcOptions{Bucket: s.bucket, Object: s.key(p)}
	dst := minio.CopyDestOptions{Bucket: s.bucket, Object: s.key(p), ReplaceMetadata: true, UserMetadata: map[string]string{"Used": time.Now().UTC().Format(time.RFC3339)}}
	_, err = s.client.CopyObject(ctx, dst, src)
	return err == nil
}

// Get reads ref's bytes and checks them against it.
func (s *S3) Get(ctx context.Context, ref Ref) ([]byte, error) {
	p, err := objectPath(ref)
	if err != nil {
		return nil, err
	}
	data, err := s.read(ctx, p, string(ref))
	if err != nil {
		return nil, err
	}
	if RefOf(data) != ref {
		return nil, fmt.Errorf("blob store: %s holds other bytes than its hash says (a damaged or tampered store)", ref)
	}
	return data, nil
}

// Keep records data under name, replacing what was kept there before.
func (s *S3) Keep(ctx context.Context, name string, data []byte) error {
	p, err := keptPath(name)
	if err != nil {
		return err
	}
	if _, err := s.client.PutObject(ctx, s.bucket, s.key(p), bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		return fmt.Errorf("blob store: %w", err)
	}
	return nil
}

// Kept returns what was kept under name, or ErrNotFound.
func (s *S3) Kept(ctx context.Context, name string) ([]byte, error) {
	p, err := keptPath(name)
	if err != nil {
		return nil, err
	}
	return s.read(ctx, p, name)
}

// read returns the object at p; what names it in errors.
func (s *S3) read(ctx context.Context, p, what string) ([]byte, error) {
	obj, err := s.client.GetObject(ctx, s.bucket, s.key(p), minio.GetObjectOptions{})
	if err == nil {
		var data []byte
		data, err = io.ReadAll(obj)
		obj.Close()
		if err == nil {
			return data, nil
		}
	}
	if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
		return nil, fmt.Errorf("blob store: %s: %w", what, ErrNotFound)
	}
	return nil, fmt.Errorf("blob store: %w", err)
}
