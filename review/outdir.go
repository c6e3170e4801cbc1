package review

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
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
// replace what it takes for its own files.
func checkOutputDir(dir string) error {
	if dir == "" {
		return nil
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return &FieldError{"output_dir", fmt.Sprintf("%s is a file; name a directory (it is created if missing)", dir)}
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &FieldError{"output_dir", fmt.Sprintf("%s cannot be read: %v", dir, err)}
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

// clearStale removes the files of an earlier, different run from the output
// directory before a new run writes there, so that no REVIEW file or
// machine output of the old run sits next to the new synthesis. It removes
// the files the old run recorded as written and the names only sot uses
// (journal, result, machine outputs, resolutions, moderator record), never
// anything else: a REVIEW-*.md the old run did not write stays. It returns
// the old run's id, or "" when there was none.
func clearStale(dir, runID string) (string, error) {
	old := loadState(dir)
	if old.RunID == "" || old.RunID == runID {
		return "", nil
	}
	names := append([]string{journalFile, resultFile, resolutionsFile, moderatorFile}, machineFiles()...)
	for _, w := range old.Written {
		if filepath.Base(w) == w && ownFile(w) { // a plain name in the directory, of a kind sot writes
			names = append(names, w)
		}
	}
	for _, name := range names {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("clear the earlier run's files: %w", err)
		}
	}
	return old.RunID, nil
}

// recordWritten adds the base names of files to the run's record of what it
// wrote in dir.
func recordWritten(dir string, files []string) error {
	st := loadState(dir)
	if st.RunID == "" {
		return nil
	}
	for _, f := range files {
		if name := filepath.Base(f); !slices.Contains(st.Written, name) {
			st.Written = append(st.Written, name)
		}
	}
	return st.save(dir)
}
