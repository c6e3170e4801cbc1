package corpus

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sotlabs/sot/internal/parallel"
)

// Reader names this package's way of reading a file into a Source. It
// changes whenever that way changes (parsing, masking, the fields a
// Source has), so that a file read by an older one is read again.
const Reader = "sot-corpus/1"

// RacyWindow is how much older than the reading of a file its
// modification and change times must be for an unchanged stat to be
// trusted. A file written within the same clock tick as it was read can
// change again without its stat changing; file systems keep times in
// steps of up to two seconds (FAT), and the kernel's clock for them lags
// the clock sot reads by a tick.
const RacyWindow = 2*time.Second + 100*time.Millisecond

// Stamp is what a file's stat said: enough to tell, without reading the
// file, that it has not changed since.
type Stamp struct {
	// Path is the file as reached from a path given to Scan: its format,
	// title, date and the secret rules that apply can depend on it.
	Path string
	// Size is in bytes; ModTime and Change (the inode's change time, 0
	// where the system does not say) in nanoseconds since the epoch.
	Size    int64
	ModTime int64
	Change  int64
	// Inode is the file's inode number, 0 where unknown.
	Inode uint64
}

// Known is what a file gave when it was read before, as the caller kept
// it (sot ask keeps it in the corpus index).
type Known struct {
	Stamp Stamp
	// Checked is when the scan that read the file began, in nanoseconds
	// since the epoch; Reader is the Reader that read it.
	Checked int64
	Reader  string
	// Hash is the hex SHA-256 of the file's bytes.
	Hash string
	// Skip is why the file was not read as a source; "" when it gave
	// Source.
	Skip string
	// Source is the source the file gave. Only ID, Format, Title, Type,
	// Date, Metadata and Hash need be set: what selection weighs.
	Source Source
}

// Remembered is what a caller kept of the files it read before (sot ask
// keeps it in the corpus index): Len of them, sorted by their resolved,
// absolute paths, byte by byte. Scan meets them in the order it walks,
// which is theirs nearly everywhere.
type Remembered interface {
	Len() int
	// Real is the resolved, absolute path of the ith file.
	Real(i int) string
	// Known is what the ith file gave.
	Known(i int) Known
}

// fresh reports whether the file, whose stat now says s, can be taken to
// hold what k says without reading it: the same stat (size, times, inode,
// and the path it is reached by), read by this Reader, and modified more
// than RacyWindow before that reading began. A file modified later may
// have been written again within the same tick of its clock, after it was
// read, without its modification time changing; it is read again, and
// once its bytes are found the same its new stat is kept and trusted.
// Writing a file changes its change time too, which nobody can set back,
// so a file whose modification time was set back by hand (cp -p, rsync
// -t, tar) is read again as well.
func (k Known) fresh(s Stamp) bool {
	return k.Reader == Reader && k.Stamp == s && s.ModTime < k.Checked-int64(RacyWindow)
}

// File is a regular file a scan walked, and what it gave.
type File struct {
	// Path is the file as reached from a path given to Scan; Real is the
	// file it resolves to, absolute.
	Path string
	Real string
	// Stamp is its stat as the walk found it.
	Stamp Stamp
	// Read says its bytes were read by this scan; otherwise what it gave
	// is what Options.Known said. A file read again only because its
	// stat changed, whose bytes are the same, is Read and not Changed.
	Read    bool
	Changed bool
	// Hash is the hex SHA-256 of its bytes; "" when they were not read
	// (a file over the size limit, or one that could not be read).
	Hash string
	// Skip is why it gave no source; else it gave Source (the first of
	// several files with the same bytes is the one in Result.Sources).
	Skip   string
	Source Source
}

// Result is what Scan found.
type Result struct {
	// Sources are the sources Load returns, each the Source of its file
	// in Files (the first of several with the same bytes), and Skipped
	// what Load returns.
	Sources []*Source
	Skipped []Skipped
	// Files are the regular files walked, in walk order.
	Files []File
	// Dirs are the directories walked, resolved and absolute: a file in
	// one of them, at any depth, that is not among Files is gone (or is
	// now hidden, or a link that is not followed).
	Dirs []string
	// Checked is when the scan began by Options.Now, in nanoseconds since
	// the epoch (0 without it); Read is how many files it read.
	Checked int64
	Read    int

	known Remembered // what Options.Known gave
	at    []int      // for each of Files, its record in known, or -1
}

// ErrChanged is the error Reread returns for a file whose bytes are not
// those Scan found.
var ErrChanged = errors.New("the file changed since the corpus was scanned")

// Scan is Load, for a caller that remembers what files gave when they
// were read: a file whose stat is the one Options.Known has for it, and
// older than that reading by RacyWindow, is not read; its Source is
// Known's, with Path as it is reached now and no Text or Parts (Reread
// reads it in full). A file whose stat changed is read and hashed; when
// its bytes are the ones Known has, what Known says stands, and the file
// is neither parsed nor masked again. Every other file is read as Load
// reads it. The walk is Load's, with its rules for links and hidden
// files, whatever Known says.
func Scan(paths []string, opts Options) (*Result, error) {
	res := &Result{}
	if opts.Now != nil {
		res.Checked = opts.Now().UnixNano()
	}
	w := walker{seenDirs: map[string]bool{}, follow: opts.FollowSymlinks}
	for i, p := range paths {
		if i > 0 {
			w.mayRevisit()
		}
		w.walkRoot(p)
	}
	res.Dirs = w.dirs
	if opts.Known != nil {
		res.known = opts.Known()
	}
	res.at = match(w.files, res.known)

	// Each file's result goes straight into its place in Files: a
	// Source is large, and a slice of results copied into Files cost
	// more at 10,000 files than deciding what changed.
	res.Files = make([]File, len(w.files))
	errAt := make([]error, len(w.files))
	parallel.For(len(w.files), func(i int) {
		f := &w.files[i]
		rec := &res.Files[i]
		rec.Path, rec.Real, rec.Stamp = f.path, f.real, f.stamp
		if j := res.at[i]; j >= 0 {
			known := res.known.Known(j)
			errAt[i] = scanFile(rec, f, &known, opts)
		} else {
			errAt[i] = scanFile(rec, f, nil, opts)
		}
	})

	var errs []error
	errs = append(errs, w.errs...)
	byHash := make(map[string]string, len(res.Files))
	res.Sources = make([]*Source, 0, len(res.Files))
	// Walk problems and file results are merged in walk order.
	si := 0
	for i := range res.Files {
		for si < len(w.skips) && w.skips[si].before <= i {
			res.Skipped = append(res.Skipped, w.skips[si].Skipped)
			si++
		}
		rec := &res.Files[i]
		if rec.Read {
			res.Read++
		}
		switch {
		case errAt[i] != nil:
			errs = append(errs, errAt[i])
			rec.Hash = ""
		case rec.Skip != "":
			res.Skipped = append(res.Skipped, Skipped{Path: rec.Path, Reason: rec.Skip})
		default:
			if first, ok := byHash[rec.Source.Hash]; ok {
				res.Skipped = append(res.Skipped, Skipped{Path: rec.Source.Path, Reason: "same content as " + first})
			} else {
				byHash[rec.Source.Hash] = rec.Source.Path
				res.Sources = append(res.Sources, &rec.Source)
			}
		}
	}
	for ; si < len(w.skips); si++ {
		res.Skipped = append(res.Skipped, w.skips[si].Skipped)
	}
	return res, errors.Join(errs...)
}

// match gives, for each file walked, the index of what known remembers
// of it, or -1; all -1 without known. The walk lists each directory's
// entries sorted, so its order is known's except where a name that sorts
// before "/" follows a directory whose name it starts with ("2024" and
// "2024-notes.md"): the records are met by a cursor, and searched for
// only where the orders part. A map of 10,000 paths cost more to build
// and to ask than this. A known that is not sorted is looked at through a
// sorted order of its own.
func match(files []file, known Remembered) []int {
	at := make([]int, len(files))
	if known == nil || known.Len() == 0 {
		for i := range at {
			at[i] = -1
		}
		return at
	}
	n := known.Len()
	order := func(i int) int { return i }
	for i := 1; i < n; i++ {
		if known.Real(i-1) > known.Real(i) {
			perm := make([]int, n)
			for j := range perm {
				perm[j] = j
			}
			slices.SortFunc(perm, func(a, b int) int { return strings.Compare(known.Real(a), known.Real(b)) })
			order = func(i int) int { return perm[i] }
			break
		}
	}
	pathAt := func(i int) string { return known.Real(order(i)) }
	cur := 0
	for i := range files {
		p := files[i].real
		for cur < n && pathAt(cur) < p {
			cur++
		}
		if cur < n && pathAt(cur) == p {
			at[i] = order(cur)
			cur++
			continue
		}
		// A new file, or one out of the order that the cursor went past.
		at[i] = -1
		if j, ok := sort.Find(n, func(j int) int { return strings.Compare(p, pathAt(j)) }); ok {
			at[i] = order(j)
		}
	}
	return at
}

// scanFile gives what one file walked holds: from k, what was known of
// it, when its stat says it has not changed, else by reading it.
// scanFile fills in what the file f gave into rec, whose path and stamp
// are set: from k, what was known of it, when its stamp says it is
// unchanged, and else by reading it. It is written in place because a
// File is large: at 10,000 unchanged files the copies of a result on its
// way into Files cost more than deciding that they were unchanged.
func scanFile(rec *File, f *file, k *Known, opts Options) error {
	limit := opts.MaxFileBytes
	if limit == 0 {
		limit = DefaultMaxFileBytes
	}
	if limit > 0 && f.size > limit {
		rec.Skip = fmt.Sprintf("larger than %d bytes (%d)", limit, f.size)
		return nil
	}
	if k != nil && k.fresh(f.stamp) {
		fromKnown(rec, k)
		return nil
	}
	r := readSource(*f, opts)
	rec.Read = r.hash != ""
	if k != nil && r.hash == k.Hash && k.Reader == Reader && k.Stamp.Path == f.path {
		fromKnown(rec, k)
		return nil
	}
	rec.Changed = rec.Read
	rec.Hash, rec.Skip, rec.Source = r.hash, r.skip, r.src
	return r.err
}

// fromKnown sets what rec's file gave as k says, reached as rec.Path now.
func fromKnown(rec *File, k *Known) {
	rec.Hash = k.Hash
	if k.Skip != "" {
		rec.Skip = k.Skip
		return
	}
	rec.Source = k.Source
	rec.Source.Path, rec.Source.Hash = rec.Path, k.Hash
	rec.Source.Text, rec.Source.Parts = "", nil
}

// Reread reads in full a file Scan walked, as Load reads it: its Source
// with Text and Parts. When its bytes are no longer those Scan found it
// returns an error wrapping ErrChanged, and a file that is no longer a
// source one wrapping ErrChanged too.
func Reread(f File, opts Options) (Source, error) {
	r := readSource(file{path: f.Path, real: f.Real, size: f.Stamp.Size}, opts)
	switch {
	case r.hash != f.Hash:
		return Source{}, fmt.Errorf("%s: %w", f.Path, ErrChanged)
	case r.err != nil:
		return Source{}, r.err
	case r.skip != "":
		return Source{}, fmt.Errorf("%s: %w (%s)", f.Path, ErrChanged, r.skip)
	}
	return r.src, nil
}

// hashOf is the hex SHA-256 of data.
func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// readFile reads a file's bytes with opts.ReadFile, else os.ReadFile.
func (o Options) readFile(name string) ([]byte, error) {
	if o.ReadFile != nil {
		return o.ReadFile(name)
	}
	return os.ReadFile(name)
}

// inDirs reports whether path lies below one of dirs (a set of resolved,
// absolute directories).
func inDirs(dirs map[string]bool, path string) bool {
	for d := filepath.Dir(path); ; {
		if dirs[d] {
			return true
		}
		next := filepath.Dir(d)
		if next == d {
			return false
		}
		d = next
	}
}

// Gone returns, of the files Options.Known remembered, the resolved
// paths of those this scan found no longer there or no longer readable as
// they were: files below a directory it walked that it did not find
// (deleted, moved away, or now left out of the walk), and files it found
// but did not hash (now over the size limit, or unreadable).
func (r *Result) Gone() []string {
	if r.known == nil {
		return nil
	}
	const (
		unseen = iota
		hashed
		unhashed
	)
	seen := make([]uint8, r.known.Len())
	for i, j := range r.at {
		if j >= 0 {
			seen[j] = hashed
			if r.Files[i].Hash == "" {
				seen[j] = unhashed
			}
		}
	}
	var dirs map[string]bool
	var gone []string
	for j, s := range seen {
		p := r.known.Real(j)
		switch s {
		case unhashed:
			gone = append(gone, p)
		case unseen:
			if dirs == nil {
				dirs = make(map[string]bool, len(r.Dirs))
				for _, d := range r.Dirs {
					dirs[d] = true
				}
			}
			if inDirs(dirs, p) {
				gone = append(gone, p)
			}
		}
	}
	return gone
}
