package middleware

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/sotlabs/sot/llm"
)

// Cache is a content-addressed store of answers on disk, keyed on the whole
// request (provider, model, prompts, parameters and schema).
type Cache struct {
	dir  string
	hits atomic.Int64
}

// DefaultCacheDir is sot's directory under the user's cache directory.
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find the user cache directory: %w", err)
	}
	return filepath.Join(d, "sot", "responses"), nil
}

// NewCache opens (creating if needed) a cache in dir.
func NewCache(dir string) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create response cache: %w", err)
	}
	return &Cache{dir: dir}, nil
}

// Hits is how many answers the cache has served.
func (c *Cache) Hits() int { return int(c.hits.Load()) }

type cacheEntry struct {
	Key      string        `json:"key"`
	Response *llm.Response `json:"response"`
}

func (c *Cache) path(key string) string { return filepath.Join(c.dir, key[:2], key+".json") }

// Get returns the cached answer for a request key.
func (c *Cache) Get(key string) (*llm.Response, bool) {
	b, err := os.ReadFile(c.path(key))
	if err != nil {
		return nil, false
	}
	var e cacheEntry
	if json.Unmarshal(b, &e) != nil || e.Key != key || e.Response == nil {
		return nil, false // a damaged entry is a miss; Put overwrites it
	}
	return e.Response, true
}

// Put stores an answer, atomically.
func (c *Cache) Put(key string, resp *llm.Response) error {
	p := c.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(cacheEntry{Key: key, Response: resp})
	if err != nil {
		return err
	}
	return writeFileAtomic(p, b)
}

// Wrap answers from the cache when it can and stores every fresh answer.
func (c *Cache) Wrap(next llm.Provider) llm.Provider {
	return llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		key := req.Key()
		if r, ok := c.Get(key); ok {
			c.hits.Add(1)
			r.Source = llm.SourceCache
			return r, nil
		}
		resp, err := next.Complete(ctx, req)
		if err != nil {
			return nil, err
		}
		if resp.Source == llm.SourceLive {
			if err := c.Put(key, resp); err != nil {
				// A cache that cannot be written costs money later, not
				// correctness now: carry on.
				slog.Warn("could not write the response cache", "err", err)
			}
		}
		return resp, nil
	})
}

func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if werr != nil || cerr != nil {
		os.Remove(f.Name())
		if werr != nil {
			return werr
		}
		return cerr
	}
	return os.Rename(f.Name(), path)
}
