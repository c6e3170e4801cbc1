package review

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/sotlabs/sot/internal/safedir"
)

// ownFile reports whether a name in an output directory is one sot writes:
// the review files, the machine outputs, the run's state and journal, the
// resolutions and moderator records, the ignore file and temporary files.
func ownFile(name string) bool {
	switch name {
	case ".gitignore", stateFile, resultFile, journalFile, resolutionsFile, moderatorFile, lockFile:
		return true
	}
	if slices.Contains(machineFiles(), name) || strings.HasSuffix(name, ".tmp") {
		return true
	}
	return strings.HasPrefix(name, "REVIEW-") && strings.HasSuffix(name, ".md")
}

// lockFile holds the lock of the run writing into an output directory.
const lockFile = "run.lock"

// ErrRunInProgress: another process is running a review into the same
// output directory.
var ErrRunInProgress = errors.New("a review is already running in this output directory")

func machineFiles() []string {
	out := make([]string, 0, len(Formats))
	for _, name := range Formats {
		out = append(out, name)
	}
	return out
}

// checkOutputDir refuses an output directory that holds files sot did not
// write (the repository root, a source directory): sot writes a .gitignore
// of "*" there, which would hide those files from git, and a later run would
// replace what it takes for its own files. It refuses symlinks too, which
// sot never creates: one inside the directory, or one on the way to it from
// the top of the project holding the working directory, as a repository
// under review may hold them to send sot's writes anywhere. It creates
// nothing; Execute makes the same checks again, from the plan's project
// top, when it opens the directory.
func checkOutputDir(dir string) error {
	return checkOutputDirIn(projectRoot("."), dir)
}

// checkOutputDirIn is checkOutputDir for a directory of the project whose
// top is given.
func checkOutputDirIn(top, dir string) error {
	if dir == "" {
		return nil
	}
	if fi, err := os.Lstat(dir); err == nil && fi.Mode().IsRegular() {
		return &FieldError{"output_dir", fmt.Sprintf("%s is a file; name a directory (it is created if missing)", dir)}
	}
	if err := safedir.Check(top, dir); err != nil {
		var se *safedir.SymlinkError
		if errors.As(err, &se) {
			return outputDirError(dir, err)
		}
		return &FieldError{"output_dir", fmt.Sprintf("%s cannot be an output directory: %v", dir, err)}
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &FieldError{"output_dir", fmt.Sprintf("%s cannot be read: %v", dir, err)}
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
		return symlinksError(dir, links)
	}
	// Names alone do not make a directory sot's: a user's own
	// REVIEW-CHECKLIST.md looks like a review file. A directory is sot's when
	// it holds a run's state or the ignore file sot writes; otherwise only
	// PAW's reviews directory may already hold REVIEW files (PAW's own
	// review, which this one replaces).
	marked := fileExists(filepath.Join(dir, stateFile)) || isOwnIgnore(filepath.Join(dir, ".gitignore"))
	pawReviews := pawReviewsDir.MatchString(filepath.ToSlash(filepath.Clean(dir)))
	var foreign []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir() || !ownFile(name):
			foreign = append(foreign, name)
		case marked, name == lockFile: // a lock alone: a run stopped before its state
		case pawReviews && strings.HasPrefix(name, "REVIEW-") && strings.HasSuffix(name, ".md"):
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
	return &FieldError{"output_dir", fmt.Sprintf("%s already holds files sot did not write (%s%s); name a new or empty directory, as sot marks its output directory ignored by git",
		dir, strings.Join(shown, ", "), more)}
}

// openOutputDir opens a run's output directory for writing, creating it,
// with checkOutputDir's checks of symlinks; top is the project's top. The
// files sot writes there are then never reached through a symlink, even one
// put there after the checks.
func openOutputDir(top, dir string) (*safedir.Dir, error) {
	d, err := safedir.Open(top, dir)
	if err != nil {
		return nil, outputDirError(dir, err)
	}
	links, err := d.Symlinks()
	if err == nil && len(links) > 0 {
		err = symlinksError(dir, links)
	}
	if err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// outputDirError explains why the output directory cannot be reached: a
// symlink on the way is the caller's to fix (a usage error); anything else
// is the file system's.
func outputDirError(dir string, err error) error {
	var se *safedir.SymlinkError
	if !errors.As(err, &se) {
		return fmt.Errorf("create the output directory %s: %w", dir, err)
	}
	where := "the output directory " + se.Error()
	if filepath.Clean(se.Path) != filepath.Clean(dir) {
		where = fmt.Sprintf("%s, on the way to the output directory %s", se, dir)
	}
	return &FieldError{"output_dir", where + "; sot writes nothing through a symlink, as one committed to a repository could point anywhere: remove the link, or name a directory whose path holds none"}
}

// symlinksError refuses an output directory holding symlinks, which sot
// never creates.
func symlinksError(dir string, links []*safedir.SymlinkError) error {
	var shown []string
	for _, l := range links {
		s := filepath.Base(l.Path)
		if l.Target != "" {
			s += " -> " + l.Target
		}
		shown = append(shown, s)
	}
	return &FieldError{"output_dir", fmt.Sprintf("%s holds symlinks sot did not create (%s); sot writes nothing through a symlink, as one committed to a repository could point anywhere: remove them, or name a new or empty directory",
		dir, strings.Join(shown, ", "))}
}

// pawReviewsDir matches PAW's final-review directory, .paw/work/<id>/reviews.
var pawReviewsDir = regexp.MustCompile(`(^|/)\.paw/work/[^/]+/reviews$`)

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// isOwnIgnore reports whether path is the .gitignore sot writes ("*").
func isOwnIgnore(path string) bool {
	b, err := os.ReadFile(path)
	return err == nil && string(b) == "*\n"
}

// readState reads the state recorded in an output directory; a missing or
// unreadable record is no run.
func readState(d *safedir.Dir) state {
	b, err := d.ReadFile(stateFile)
	if err != nil {
		return state{}
	}
	return parseState(b)
}

// clearStale removes the files of an earlier, different run from the output
// directory before a new run writes there, so that no REVIEW file or
// machine output of the old run sits next to the new synthesis. It removes
// the files the old run recorded as written and the names only sot uses
// (journal, result, machine outputs, resolutions, moderator record), never
// anything else: a REVIEW-*.md the old run did not write stays. It returns
// the old run's id, or "" when there was none.
func clearStale(d *safedir.Dir, runID string) (string, error) {
	old := readState(d)
	if old.RunID == "" || old.RunID == runID && old.authentic {
		return "", nil
	}
	names := append([]string{journalFile, resultFile, resolutionsFile, moderatorFile}, machineFiles()...)
	for _, w := range old.Written {
		if filepath.Base(w) == w && ownFile(w) { // a plain name in the directory, of a kind sot writes
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

// recordWritten adds the base names of files to the run's record of what it
// wrote in d.
func recordWritten(d *safedir.Dir, files []string) error {
	st := readState(d)
	if st.RunID == "" || !st.authentic {
		return nil
	}
	for _, f := range files {
		if name := filepath.Base(f); !slices.Contains(st.Written, name) {
			st.Written = append(st.Written, name)
		}
	}
	return st.save(d)
}
