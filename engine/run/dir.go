package run

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/plainfile"
	"github.com/sotlabs/sot/internal/safedir"
	"github.com/sotlabs/sot/llm/middleware"
)

// The files every run keeps in its directory.
const (
	JournalFile = "journal.jsonl" // the finished calls
	LockFile    = "run.lock"      // held while a process runs there
	ignoreFile  = ".gitignore"    // "*": a run's files are never committed
)

// Layout is what a scenario keeps in a run directory besides the engine's
// own files (run.json, journal.jsonl, run.lock, .gitignore, *.tmp).
type Layout struct {
	// Owns reports whether a name is a file the scenario writes.
	Owns func(name string) bool
	// Outputs are the scenario's files that belong to one run whatever it
	// recorded writing (its result, its machine outputs): a different run
	// in the same directory removes them first.
	Outputs []string
	// Adopts reports whether a directory that holds none of sot's marks may
	// still hold a file the scenario writes (a review may replace PAW's
	// REVIEW files in PAW's reviews directory).
	Adopts func(dir, name string) bool
	// Field names the setting that chose the directory in errors
	// ("output_dir").
	Field string
}

func (l Layout) owns(name string) bool {
	switch name {
	case ignoreFile, StateFile, JournalFile, LockFile:
		return true
	}
	return strings.HasSuffix(name, ".tmp") || l.Owns != nil && l.Owns(name)
}

func (l Layout) field() string {
	if l.Field == "" {
		return "output_dir"
	}
	return l.Field
}

// ErrRunInProgress: another process is running into the same directory.
var ErrRunInProgress = errors.New("a run is already under way in this directory")

// Check refuses a directory that holds files sot did not write (the
// repository root, a source directory): sot writes a .gitignore of "*"
// there, which would hide those files from git, and a later run would
// replace what it takes for its own files. It refuses symlinks too, which
// sot never creates: one inside the directory, or one on the way to it from
// top, the project's top, as a repository may hold them to send sot's
// writes anywhere. It creates nothing; Start checks again, and Open checks
// the symlinks again through the directory it holds open.
func Check(top, dir string, l Layout) error {
	if dir == "" {
		return nil
	}
	if fi, err := os.Lstat(dir); err == nil && fi.Mode().IsRegular() {
		return &engine.UserError{Field: l.field(), Msg: fmt.Sprintf("%s is a file; name a directory (it is created if missing)", dir)}
	}
	if err := safedir.Check(top, dir); err != nil {
		var se *safedir.SymlinkError
		if errors.As(err, &se) {
			return dirError(dir, err, l)
		}
		return &engine.UserError{Field: l.field(), Msg: fmt.Sprintf("%s cannot be an output directory: %v", dir, err)}
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &engine.UserError{Field: l.field(), Msg: fmt.Sprintf("%s cannot be read: %v", dir, err)}
	}
	var links []*safedir.SymlinkError
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 {
			path := filepath.Join(dir, e.Name())
			target, _ := os.Readlink(path)
			links = append(links, &safedir.SymlinkError{Path: path, Target: target})
		}
	}
	if len(links) > 0 {
		return symlinksError(dir, links, l)
	}
	// Names alone do not make a directory sot's: a user's own file may
	// look like one a scenario writes. A directory is sot's when it holds a
	// run's record or the ignore file sot writes.
	marked := fileExists(filepath.Join(dir, StateFile)) || isOwnIgnore(filepath.Join(dir, ignoreFile))
	var foreign []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir() || !l.owns(name):
			foreign = append(foreign, name)
		case marked, name == LockFile: // a lock alone: a run stopped before its record
		case l.Adopts != nil && l.Adopts(dir, name):
		default:
			foreign = append(foreign, name)
		}
	}
	if len(foreign) == 0 {
		return nil
	}
	shown := foreign[:min(len(foreign), 3)]
	more := ""
	if len(foreign) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(foreign)-len(shown))
	}
	return &engine.UserError{Field: l.field(), Msg: fmt.Sprintf("%s already holds files sot did not write (%s%s); name a new or empty directory, as sot marks its output directory ignored by git",
		dir, strings.Join(shown, ", "), more)}
}

// Dir is a run directory open for writing: every file is reached through
// it, and never through a symlink, even one put there after the checks.
type Dir struct {
	*safedir.Dir
	layout Layout
	key    []byte
	unlock func() // set by Start
}

// Start checks the directory as Check does, opens it as Open does, takes its lock
// (what names the work in the error when another process holds it: "a
// review") and clears the files of an earlier, different run there (see
// ClearStale), whose id it returns, or "". Close releases the lock.
func Start(top, dir string, l Layout, key []byte, what, runID string) (*Dir, string, error) {
	// A scenario checked while planning; the directory may have changed
	// since, and a library caller may not have checked at all.
	if err := Check(top, dir, l); err != nil {
		return nil, "", err
	}
	d, err := Open(top, dir, l, key)
	if err != nil {
		return nil, "", err
	}
	if d.unlock, err = d.Lock(what); err != nil {
		d.Dir.Close()
		return nil, "", err
	}
	old, err := d.ClearStale(runID)
	if err != nil {
		d.Close()
		return nil, "", err
	}
	return d, old, nil
}

// Close releases the directory, and its lock when Start took it.
func (d *Dir) Close() error {
	if d.unlock != nil {
		d.unlock()
		d.unlock = nil
	}
	return d.Dir.Close()
}

// Open opens a run directory, creating it, with Check's checks of
// symlinks; top is the project's top. key signs and checks the run's
// record (see Key).
func Open(top, dir string, l Layout, key []byte) (*Dir, error) {
	d, err := safedir.Open(top, dir)
	if err != nil {
		return nil, dirError(dir, err, l)
	}
	links, err := d.Symlinks()
	if err == nil && len(links) > 0 {
		err = symlinksError(dir, links, l)
	}
	if err != nil {
		d.Close()
		return nil, err
	}
	return &Dir{Dir: d, layout: l, key: key}, nil
}

// dirError explains why the directory cannot be reached: a symlink on the
// way is the caller's to fix; anything else is the file system's.
func dirError(dir string, err error, l Layout) error {
	var se *safedir.SymlinkError
	if !errors.As(err, &se) {
		return fmt.Errorf("create the output directory %s: %w", dir, err)
	}
	where := "the output directory " + se.Error()
	if filepath.Clean(se.Path) != filepath.Clean(dir) {
		where = fmt.Sprintf("%s, on the way to the output directory %s", se, dir)
	}
	return &engine.UserError{Field: l.field(), Msg: where + "; sot writes nothing through a symlink, as one committed to a repository could point anywhere: remove the link, or name a directory whose path holds none"}
}

// symlinksError refuses a directory holding symlinks, which sot never
// creates.
func symlinksError(dir string, links []*safedir.SymlinkError, l Layout) error {
	var shown []string
	for _, link := range links {
		s := filepath.Base(link.Path)
		if link.Target != "" {
			s += " -> " + link.Target
		}
		shown = append(shown, s)
	}
	return &engine.UserError{Field: l.field(), Msg: fmt.Sprintf("%s holds symlinks sot did not create (%s); sot writes nothing through a symlink, as one committed to a repository could point anywhere: remove them, or name a new or empty directory",
		dir, strings.Join(shown, ", "))}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// isOwnIgnore reports whether path is the .gitignore sot writes ("*").
func isOwnIgnore(path string) bool {
	b, err := plainfile.ReadOwn(path)
	return err == nil && string(b) == "*\n"
}

// State reads the run's record, its payload into payload (see
// ParseState); a missing or unreadable record is no run (the zero State).
func (d *Dir) State(payload any) State {
	b, err := d.ReadFile(StateFile)
	if err != nil {
		return State{}
	}
	return ParseState(b, payload, d.key)
}

// Save signs and writes the run's record, after the directory's ignore
// file: a run's files must never show up as changes in the next run's
// material, or an interrupted run could not resume under the same id.
func (d *Dir) Save(st State) error {
	if err := d.EnsureIgnore(); err != nil {
		return err
	}
	st.Sign(d.key)
	b, err := jsonIndent(st)
	if err != nil {
		return err
	}
	if err := d.WriteFile(StateFile, b, 0o644); err != nil {
		return fmt.Errorf("record the run's state: %w", err)
	}
	return nil
}

// EnsureIgnore writes a .gitignore of "*" unless one is there: a run's
// files are local scratch, never to be committed.
func (d *Dir) EnsureIgnore() error {
	f, err := d.OpenFile(ignoreFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err == nil {
		_, err = f.WriteString("*\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("write the output directory's .gitignore: %w", err)
	}
	return nil
}

// ClearStale removes the files of an earlier, different run before a new
// run writes there, so that nothing of the old run sits next to the new
// one's: the files the old run recorded as written (of kinds the scenario
// writes) and the names only runs use, never anything else. A record that
// is not the user's (no valid signature) is an earlier run even under the
// same id. It returns the old run's id, or "" when there was none.
func (d *Dir) ClearStale(runID string) (string, error) {
	old := d.State(nil)
	if old.RunID == "" || old.RunID == runID && old.Authentic {
		return "", nil
	}
	names := append([]string{JournalFile}, d.layout.Outputs...)
	for _, w := range old.Written {
		if filepath.Base(w) == w && d.layout.owns(w) { // a plain name in the directory, of a kind sot writes
			names = append(names, w)
		}
	}
	for _, name := range names {
		if err := d.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("clear the earlier run's files: %w", err)
		}
	}
	return old.RunID, nil
}

// RecordWritten adds the base names of files to the run's record of what
// it wrote, when the record on disk is the user's.
func (d *Dir) RecordWritten(files []string) error {
	st := d.State(nil)
	if st.RunID == "" || !st.Authentic {
		return nil
	}
	for _, f := range files {
		if name := filepath.Base(f); !slices.Contains(st.Written, name) {
			st.Written = append(st.Written, name)
		}
	}
	return d.Save(st)
}

// OpenJournal records st as the run's state and opens its journal. The
// same run (the record on disk has st's id and the user's signature)
// resumes: its journal is replayed and its creation time and written files
// kept. A new run, or a fresh one, starts an empty journal in the
// background, and the record is written before its first entry.
func (d *Dir) OpenJournal(st State, fresh bool) (*middleware.Journal, error) {
	return d.openJournal(st, fresh, time.Time{})
}

// openJournal is OpenJournal keeping only the records made before the
// time given (see middleware.OpenJournalBefore).
func (d *Dir) openJournal(st State, fresh bool, before time.Time) (*middleware.Journal, error) {
	old := d.State(nil)
	path := filepath.Join(d.Path(), JournalFile)
	same := old.RunID == st.RunID && old.Authentic
	if same {
		st.Written = old.Written // the same run: its files are the same files
	}
	if same && !fresh {
		if !old.Created.IsZero() {
			st.Created = old.Created
		}
		if err := d.Save(st); err != nil {
			return nil, err
		}
		return middleware.OpenJournalBefore(path, before)
	}
	return middleware.CreateJournal(path, func() error { return d.Save(st) }), nil
}

// Resumer takes a run's journal: the provider stack (llm/stack.Stack),
// which puts it in front of its calls and counts what it recorded toward
// the budget.
type Resumer interface {
	Resume(*middleware.Journal)
}

// journalEnd is a Resumer that takes only the records made before a time
// (llm/stack.Stack under a durable executor's workflow, whose own calls'
// records come again from its history).
type journalEnd interface {
	JournalBefore() time.Time
}

// Begin starts the run that state names in dir as Start does (with the
// user's key; what names the work), records state and opens the run's
// journal as Dir.OpenJournal does, and hands the journal to r. old is the
// earlier run whose files were cleared from dir, or "". Close the Dir when
// the run is done.
func Begin(top, dir string, l Layout, what string, state State, fresh bool, r Resumer) (d *Dir, j *middleware.Journal, old string, err error) {
	d, old, err = Start(top, dir, l, Key(), what, state.RunID)
	if err != nil {
		return nil, nil, "", err
	}
	var before time.Time
	if e, ok := r.(journalEnd); ok {
		before = e.JournalBefore()
	}
	if j, err = d.openJournal(state, fresh, before); err != nil {
		d.Close()
		return nil, nil, "", err
	}
	r.Resume(j)
	return d, j, old, nil
}
