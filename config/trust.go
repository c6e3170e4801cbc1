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
	"strings"
	"time"

	"github.com/sotlabs/sot/internal/lazyre"
	"github.com/sotlabs/sot/internal/plainfile"
	"github.com/sotlabs/sot/internal/project"
	"github.com/sotlabs/sot/llm"
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
	// Refs are the files of the project that the trusted file makes sot
	// run or read as instructions (a program: script, the script a
	// command: model runs), each with the SHA-256 it had when trusted.
	Refs []TrustRef `json:"refs,omitempty"`
}

// TrustRef is one file a trusted file refers to, as it was when trusted.
type TrustRef struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// TrustStatus is a record checked against the file as it is now.
type TrustStatus struct {
	TrustRecord
	// State is "trusted", "changed" (the content differs from what was
	// trusted, so it is not trusted now), "lapsed" (a file it refers to
	// changed, appeared or went) or "missing".
	State string `json:"state"`
	// Why says what changed, for "changed" and "lapsed".
	Why string `json:"why,omitempty"`
}

// TrustCheck is what the store says of one file as it is now.
type TrustCheck struct {
	Trusted bool
	// Digest is the Digest of the content that was checked (by
	// TrustedFile, which reads it), so a caller holding an earlier read of
	// the file can tell it is the same.
	Digest string
	// Lapsed, when the file was trusted once but is not now, says what
	// changed since: the file itself, or a file it refers to.
	Lapsed string
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
// trusted as it is, and so is every project file it refers to (see
// References), seen from workDir. A nil store trusts nothing.
func (s *TrustStore) Trusted(path string, data []byte, workDir string) bool {
	return s.Check(path, data, workDir).Trusted
}

// Check is Trusted with the reason a trust given once no longer holds.
func (s *TrustStore) Check(path string, data []byte, workDir string) TrustCheck {
	if s == nil || path == "" {
		return TrustCheck{}
	}
	p, err := canonical(path)
	if err != nil {
		return TrustCheck{}
	}
	tf, err := s.load()
	if err != nil {
		return TrustCheck{}
	}
	for _, r := range tf.Files {
		if r.Path != p {
			continue
		}
		if r.SHA256 != Digest(data) {
			return TrustCheck{Lapsed: fmt.Sprintf("%s changed since you trusted it on %s", path, r.Trusted.Format("2006-01-02"))}
		}
		if why := refsChanged(r, References(p, workDir, data), workDir); why != "" {
			return TrustCheck{Lapsed: why}
		}
		return TrustCheck{Trusted: true, Digest: r.SHA256}
	}
	return TrustCheck{}
}

// TrustedFile reads the file at path and checks it (Check).
func (s *TrustStore) TrustedFile(path, workDir string) TrustCheck {
	if s == nil || path == "" {
		return TrustCheck{}
	}
	data, err := plainfile.Read(path)
	if err != nil {
		return TrustCheck{}
	}
	return s.Check(path, data, workDir)
}

// refsChanged compares the files a trusted file refers to now (now, as
// References gives them) with those its record pinned, and says what
// differs, or "".
func refsChanged(r TrustRecord, now []string, workDir string) string {
	show := func(p string) string {
		if workDir != "" {
			if rel, ok := project.Within(workDir, p); ok {
				return rel
			}
		}
		return p
	}
	pinned := map[string]string{}
	for _, ref := range r.Refs {
		pinned[ref.Path] = ref.SHA256
	}
	since := r.Trusted.Format("2006-01-02")
	for _, p := range now {
		want, ok := pinned[p]
		if !ok {
			return fmt.Sprintf("%s now runs or reads %s, which was not part of it when you trusted it on %s", show(r.Path), show(p), since)
		}
		delete(pinned, p)
		data, err := plainfile.Read(p)
		if err != nil {
			return fmt.Sprintf("%s, which %s runs or reads, cannot be read (%v)", show(p), show(r.Path), err)
		}
		if Digest(data) != want {
			return fmt.Sprintf("%s, which %s runs or reads, changed since you trusted it on %s", show(p), show(r.Path), since)
		}
	}
	for p := range pinned {
		return fmt.Sprintf("%s, which %s ran or read when you trusted it on %s, is gone", show(p), show(r.Path), since)
	}
	return ""
}

// Add trusts the file at path with its current content, and the project
// files it refers to (References, seen from workDir) with theirs,
// replacing an earlier record of it, and returns the record.
func (s *TrustStore) Add(path, workDir string) (TrustRecord, error) {
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
	data, err := plainfile.Read(p)
	if err != nil {
		return TrustRecord{}, err
	}
	tf, err := s.load()
	if err != nil {
		return TrustRecord{}, err
	}
	rec := TrustRecord{Path: p, SHA256: Digest(data), Trusted: time.Now().UTC().Truncate(time.Second)}
	for _, ref := range References(p, workDir, data) {
		b, err := plainfile.Read(ref)
		if err != nil {
			return TrustRecord{}, fmt.Errorf("%s runs or reads %s, which cannot be read: %w", path, ref, err)
		}
		rec.Refs = append(rec.Refs, TrustRef{Path: ref, SHA256: Digest(b)})
	}
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

// List returns every record, checked against the files as they are now
// (their references seen from workDir).
func (s *TrustStore) List(workDir string) ([]TrustStatus, error) {
	tf, err := s.load()
	if err != nil {
		return nil, err
	}
	out := make([]TrustStatus, 0, len(tf.Files))
	for _, r := range tf.Files {
		st := TrustStatus{TrustRecord: r, State: "trusted"}
		data, err := plainfile.Read(r.Path)
		switch {
		case err != nil:
			st.State = "missing"
		case Digest(data) != r.SHA256:
			st.State = "changed"
			st.Why = fmt.Sprintf("%s changed since you trusted it", r.Path)
		default:
			if why := refsChanged(r, References(r.Path, workDir, data), workDir); why != "" {
				st.State, st.Why = "lapsed", why
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// refPattern finds where a file names something sot runs: the value of a
// program key, and the command line of a command: model.
var refPattern = lazyre.New(`(?:\bprogram["']?\s*:\s*|\b` + llm.ProviderCommand + `:)([^\n]*)`)

// References lists the files of the project holding the file at path that
// its content (data) makes sot run or read as instructions: each word of a
// program: value or of a command: model's command line that names an
// existing file inside the project, relative to the project's top or to
// workDir. The paths are absolute and clean, sorted, without duplicates.
// A word that names nothing in the project (llm, python3, a flag) is not
// a reference: what is on the user's own PATH is the user's.
func References(path, workDir string, data []byte) []string {
	top, ok := project.Top(filepath.Dir(path))
	if !ok {
		return nil
	}
	self, _ := canonical(path)
	seen := map[string]bool{}
	var out []string
	for _, m := range refPattern.Re().FindAllSubmatch(data, -1) {
		for _, w := range strings.Fields(string(m[1])) {
			w = strings.Trim(w, "\"'`,;|(){}[]")
			if w == "" || strings.HasPrefix(w, "-") {
				continue
			}
			cands := []string{w}
			if !filepath.IsAbs(w) {
				cands = []string{filepath.Join(top, w)}
				if workDir != "" {
					cands = append(cands, filepath.Join(workDir, w))
				}
			}
			for _, c := range cands {
				c = filepath.Clean(c)
				if seen[c] {
					continue
				}
				if _, inside := project.Within(top, c); !inside {
					continue
				}
				if fi, err := os.Stat(c); err != nil || !fi.Mode().IsRegular() {
					continue
				}
				if real, _ := canonical(c); real == self {
					continue
				}
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	sort.Strings(out)
	return out
}
