package blob

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
)

// Pruned counts what Prune removed.
type Pruned struct {
	Objects int
	Bytes   int64
}

// refreshAfter is how old a stored object must be before a Put that finds
// it marks it as used again: a project's unchanged file, sent with every
// run, must not look unused to Prune.
const refreshAfter = time.Hour

// Prune removes the objects and kept records last written or used before
// before, and the temporary files of writes that never finished.
func (d *Dir) Prune(ctx context.Context, before time.Time) (Pruned, error) {
	var p Pruned
	for _, top := range []string{"objects", "kept"} {
		err := fs.WalkDir(d.root.FS(), top, func(name string, e fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) && name == top {
				return fs.SkipDir
			}
			if err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if e.IsDir() || !e.Type().IsRegular() {
				return nil
			}
			fi, err := e.Info()
			if err != nil || !fi.ModTime().Before(before) {
				return nil
			}
			if err := d.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			p.Objects++
			p.Bytes += fi.Size()
			return nil
		})
		if err != nil {
			return p, fmt.Errorf("blob store: %w", err)
		}
	}
	return p, nil
}

// Prune removes the objects of the bucket's prefix last written or used
// before before.
func (s *S3) Prune(ctx context.Context, before time.Time) (Pruned, error) {
	var p Pruned
	prefix := s.prefix
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return p, fmt.Errorf("blob store: %w", obj.Err)
		}
		rel := strings.TrimPrefix(obj.Key, prefix)
		if !strings.HasPrefix(rel, "objects/") && !strings.HasPrefix(rel, "kept/") || !obj.LastModified.Before(before) {
			continue
		}
		if err := s.client.RemoveObject(ctx, s.bucket, obj.Key, minio.RemoveObjectOptions{}); err != nil {
			return p, fmt.Errorf("blob store: %w", err)
		}
		p.Objects++
		p.Bytes += obj.Size
	}
	return p, nil
}
