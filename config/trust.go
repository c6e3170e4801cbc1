package config

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/sotlabs/sot/internal/project"
)

// TrustStore records the project files a user has trusted explicitly (with
// "sot trust"), each by its real path and the SHA-256 of its content. A file
// whose content changed since it was trusted is untrusted again. The store
// lives in the user's state directory, which a reviewed repository cannot
// write; nothing in the environment trusts a project implicitly.
type TrustStore struct {
	// Path is the JSON file holding the records.
	Path string
}

// TrustRecord is one trusted file.
type TrustRecord struct {
	Path    string    `json:"path"`
	SHA256  string    `json:"sha256"`
	Trusted time.Time `json:"trusted_at"`
}

// TrustStatus is a record checked against the file as it is now.
type TrustStatus struct {
	TrustRecord
	// State is "trusted", "changed" (the content differs from what was
	// trusted, so it is not trusted now) or "missing".
	State string `json:"state"`
}

type trustFile struct {
	Version int           `json:"version"`
	Files   []TrustRecord `json:"files"`
}

// StateDir returns $XDG_STATE_HOME/sot, or ~/.local/state/sot.
func StateDir(getenv func(string) string) string {
	if x := getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "sot")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "state", "sot")
}

// DefaultTrustStore is the store in the user's state directory, or nil when
// there is no such directory (then nothing is trusted).
func DefaultTrustStore(getenv func(string) string) *TrustStore {
	dir := StateDir(getenv)
	if dir == "" {
		return nil
	}
	return &TrustStore{Path: filepath.Join(dir, "trusted.json")}
}

// Digest is the hex SHA-256 of a file's content, as trust records it.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// canonical is the absolute path of a file with symbolic links resolved, so
// that a link cannot borrow the trust of the file it points at under
// another name, and one file has one record.
func canonical(path string) (string, error) { return project.Resolve(path) }

func (s *TrustStore) load() (trustFile, error) {
	var tf trustFile
	b, err := os.ReadFile(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return tf, nil
	}
	if err != nil {
		return tf, fmt.Errorf("read trusted files: %w", err)
	}
	if err := json.Unmarshal(b, &tf); err != nil {
		return tf, fmt.Errorf("%s is damaged (%v); remove it and trust the files again", s.Path, err)
	}
	return tf, nil
}

func (s *TrustStore) save(tf trustFile) error {
	tf.Version = 1
	sort.Slice(tf.Files, func(i, j int) bool { return tf.Files[i].Path < tf.Files[j].Path })
	b, err := json.MarshalIndent(tf, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(s.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("record trust: %w", err)
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, ".trusted-"+hex.EncodeToString(rnd[:])+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("record trust: %w", err)
	}
	_, werr := f.Write(append(b, '\n'))
	if serr := f.Sync(); werr == nil {
		werr = serr
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("record trust: %w", werr)
	}
	if err := os.Rename(tmp, s.Path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("record trust: %w", err)
	}
	return nil
}

// Trusted reports whether the file at path, whose content is data, is
// trusted as it is. A nil store trusts nothing.
func (s *TrustStore) Trusted(path string, data []byte) bool {
	return s.TrustedDigest(path, Digest(data))
}

// TrustedDigest reports whether the file at path is trusted with the
// content whose Digest is d.
func (s *TrustStore) TrustedDigest(path, d string) bool {
	if s == nil || path == "" {
		return false
	}
	p, err := canonical(path)
	if err != nil {
		return false
	}
	tf, err := s.load()
	if err != nil {
		return false
	}
	for _, r := range tf.Files {
		if r.Path == p && r.SHA256 == d {
			return true
		}
	}
	return false
}

// TrustedFile reads the file at path and reports whether it is trusted as
// it is now.
func (s *TrustStore) TrustedFile(path string) bool {
	if s == nil || path == "" {
		return false
	}
	data, err := os.ReadFile(path)
	return err == nil && s.Trusted(path, data)
}

// Add trusts the file at path with its current content, replacing an
// earlier record of it, and returns the record.
func (s *TrustStore) Add(path string) (TrustRecord, error) {
	p, err := canonical(path)
	if err != nil {
		return TrustRecord{}, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return TrustRecord{}, err
	}
	if !fi.Mode().IsRegular() {
		return TrustRecord{}, fmt.Errorf("%s is not a regular file; trust names files (a config, a persona, a context file)", path)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return TrustRecord{}, err
	}
	tf, err := s.load()
	if err != nil {
		return TrustRecord{}, err
	}
	rec := TrustRecord{Path: p, SHA256: Digest(data), Trusted: time.Now().UTC().Truncate(time.Second)}
	kept := tf.Files[:0]
	for _, r := range tf.Files {
		if r.Path != p {
			kept = append(kept, r)
		}
	}
	tf.Files = append(kept, rec)
	return rec, s.save(tf)
}

// Revoke forgets the file at path and reports whether it had a record.
func (s *TrustStore) Revoke(path string) (bool, error) {
	p, err := canonical(path)
	if err != nil {
		return false, err
	}
	tf, err := s.load()
	if err != nil {
		return false, err
	}
	kept := tf.Files[:0]
	found := false
	for _, r := range tf.Files {
		if r.Path == p {
			found = true
			continue
		}
		kept = append(kept, r)
	}
	if !found {
		return false, nil
	}
	tf.Files = kept
	return true, s.save(tf)
}

// List returns every record, checked against the files as they are now.
func (s *TrustStore) List() ([]TrustStatus, error) {
	tf, err := s.load()
	if err != nil {
		return nil, err
	}
	out := make([]TrustStatus, 0, len(tf.Files))
	for _, r := range tf.Files {
		st := TrustStatus{TrustRecord: r, State: "trusted"}
		data, err := os.ReadFile(r.Path)
		switch {
		case err != nil:
			st.State = "missing"
		case Digest(data) != r.SHA256:
			st.State = "changed"
		}
		out = append(out, st)
	}
	return out, nil
}
