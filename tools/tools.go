// Package tools gives a model read-only looks into a project: read a file
// or some of its lines, grep, list a directory, and git log and git show of
// a path. It is scenario-neutral and knows nothing of providers; a caller
// offers Specs to a model and passes the model's calls to Call.
//
// Every look follows the rules the material follows. The project top is
// held open with os.Root, so no path leaves it, through ".." or through a
// symbolic link; nothing is ever written. Files that usually hold
// credentials are refused, and every text returned has its secrets masked
// (see internal/secrets). git runs as a fixed program with options that
// keep the repository's own configuration from choosing a program to run.
// Results are plain text, not fenced: the caller fences them as material.
package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/sotlabs/sot/internal/project"
)

// Limits bound what one call reads and returns. A zero field takes its
// default: 32 KiB and 400 lines a result, 100 matches and 5000 files a
// grep, files up to 1 MiB, 20 commits and 10 seconds a git command.
type Limits struct {
	MaxBytes     int           // bytes of text one result returns
	MaxLines     int           // lines one read or git show returns
	MaxMatches   int           // matching lines one grep returns
	MaxFiles     int           // files one grep reads
	MaxFileBytes int           // files larger than this are not read
	MaxCommits   int           // commits one git log lists
	GitTimeout   time.Duration // how long one git command may run
}

// defaults are the limits a zero Limits field takes.
var defaults = Limits{
	MaxBytes:     32 << 10,
	MaxLines:     400,
	MaxMatches:   100,
	MaxFiles:     5000,
	MaxFileBytes: 1 << 20,
	MaxCommits:   20,
	GitTimeout:   10 * time.Second,
}

// withDefaults returns l with every zero field set to its default.
func (l Limits) withDefaults() Limits {
	d := defaults
	pick := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	pick(&l.MaxBytes, d.MaxBytes)
	pick(&l.MaxLines, d.MaxLines)
	pick(&l.MaxMatches, d.MaxMatches)
	pick(&l.MaxFiles, d.MaxFiles)
	pick(&l.MaxFileBytes, d.MaxFileBytes)
	pick(&l.MaxCommits, d.MaxCommits)
	if l.GitTimeout <= 0 {
		l.GitTimeout = d.GitTimeout
	}
	return l
}

// Result is what one look returns.
type Result struct {
	// Text is the plain text to show the model, its secrets masked.
	Text string
	// Files are the project files (slash paths from the top) whose content
	// Text shows, so that a finding citing one of them can be grounded.
	Files []string
	// Cut is set when a limit left part of the answer out; Text says so too.
	Cut bool
}

// Tools looks into one project. It is safe for concurrent use.
type Tools struct {
	root *os.Root
	top  string
	lim  Limits
}

// Open holds the project whose top directory is top open for looks within
// the limits lim. Close releases it.
func Open(top string, lim Limits) (*Tools, error) {
	abs, err := filepath.Abs(top)
	if err != nil {
		return nil, fmt.Errorf("opening the project %s: %w", top, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("opening the project %s: %w", top, err)
	}
	return &Tools{root: root, top: abs, lim: lim.withDefaults()}, nil
}

// Close releases the project's top directory.
func (t *Tools) Close() error { return t.root.Close() }

// errOutside says that a path leaves the project.
func errOutside(p string) error {
	return fmt.Errorf("path %s is outside the project; give a path relative to the project top, without .. and not through a symbolic link out", p)
}

// clean checks a path a model gave, relative to the project top with
// forward slashes, and returns it cleaned ("." for the top itself). It
// refuses an absolute path, one that climbs out with "..", one through a
// symbolic link out of the project, and one inside .git or .sot.
func (t *Tools) clean(p string) (string, error) {
	if p == "" {
		return ".", nil
	}
	if path.IsAbs(p) || filepath.IsAbs(p) || strings.Contains(p, "\x00") {
		return "", errOutside(p)
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", errOutside(p)
	}
	for _, seg := range strings.Split(c, "/") {
		if hiddenDirs[seg] {
			return "", fmt.Errorf("path %s is inside %s, which the tools do not read; use git_log and git_show for history", p, seg)
		}
	}
	if link, _ := project.LinkOutside(t.top, filepath.Join(t.top, filepath.FromSlash(c))); link != "" {
		return "", errOutside(p)
	}
	return c, nil
}

// hiddenDirs are directories no look enters: git's own and sot's.
var hiddenDirs = map[string]bool{".git": true, ".sot": true}

// rootError turns an error from the os.Root into one a model can act on:
// a path that escapes the top through a symbolic link is outside the
// project, whatever the race with the check in clean.
func (t *Tools) rootError(p string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("path %s does not exist; list_dir shows what does: %w", p, fs.ErrNotExist)
	}
	if strings.Contains(err.Error(), "escapes") {
		return errOutside(p)
	}
	return fmt.Errorf("reading %s: %w", p, err)
}
