// Package run keeps one run of a scenario on disk: its id, its directory
// and the files it owns there, the lock that keeps a second process out,
// its signed record (run.json, with a payload the scenario defines), the
// journal that replays finished calls when the run is resumed, and the
// listing of a project's runs.
//
// A run directory may lie in a repository someone else wrote, so nothing
// here is written through a symlink (see internal/safedir) and a record is
// trusted only when it carries the user's signature (see Key).
package run

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"os"
	"path/filepath"
)

// ID builds a run id from what a run does: the same command on the same
// material gets the same id, so a re-run finds its journal. Parts are
// hashed in order, each ended by a zero byte.
type ID struct {
	h   hash.Hash
	buf [4096]byte // the parts pass through it: a part is not copied whole (a review's is its diff)
}

// NewID starts an id under a recipe version (for a review, "sot-run-v1").
func NewID(version string) *ID {
	id := &ID{h: sha256.New()}
	id.Add(version)
	return id
}

// Add hashes parts into the id.
func (id *ID) Add(parts ...string) {
	for _, s := range parts {
		for len(s) > 0 {
			n := copy(id.buf[:], s)
			id.h.Write(id.buf[:n])
			s = s[n:]
		}
		id.buf[0] = 0
		id.h.Write(id.buf[:1])
	}
}

// String is the id: "r" and ten hex digits.
func (id *ID) String() string { return "r" + hex.EncodeToString(id.h.Sum(nil))[:10] }

// Seed derives a run's random seed from its id, so a re-run shuffles as
// the first run did.
func Seed(runID string) int64 {
	h := sha256.Sum256([]byte("seed:" + runID))
	var s int64
	for _, b := range h[:8] {
		s = s<<8 | int64(b)
	}
	if s < 0 {
		s = -s
	}
	return s
}

// Key is the user's secret, created on first use in the user cache
// directory: run records are signed with it, and nonces derived from it,
// so that material cannot forge either. It is nil when it cannot be kept.
func Key() []byte {
	dir, err := os.UserCacheDir()
	if err != nil {
		return nil
	}
	path := filepath.Join(dir, "sot", "nonce.key")
	if b, err := os.ReadFile(path); err == nil && len(b) >= 32 {
		return b
	}
	key := make([]byte, 24)
	if _, err := rand.Read(key); err != nil {
		return nil
	}
	key = []byte(hex.EncodeToString(key))
	if os.MkdirAll(filepath.Dir(path), 0o700) != nil || os.WriteFile(path, key, 0o600) != nil {
		return nil
	}
	return key
}
