package material

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// ErrBlockingFile means a file git reads as it works is a named pipe, a
// socket or a device, and git would wait on it forever: a .gitattributes
// or .gitignore, the repository's info/attributes or info/exclude, or a
// file the configuration names (an included configuration file, the
// attributes or ignore file), which /dev/zero, whose reading never ends,
// can be too.
var ErrBlockingFile = errors.New("git reads this file and would wait on it forever: it is a named pipe, a socket or a device. Remove or rename it or, if a git configuration file names it (an include, core.attributesFile or core.excludesFile, in the repository's .git/config or in your own), remove that entry; then run sot again")

// blockedAfter is how long a git command runs before sot, where it cannot
// look at the processes it starts (see watchable), looks for a file that
// could keep it waiting: far longer than a command waits on a repository
// of ordinary size, and far shorter than a user waits.
var blockedAfter = 2 * time.Second

// canWatch is watchable, but for tests of the walk where processes can be
// watched.
var canWatch = watchable

// stuckEvery is how often a running git command is looked at, where it
// can be (see stuckOn): each look reads a few files of /proc.
var stuckEvery = 250 * time.Millisecond

// waitGit waits for the git command cmd, started in dir, to end. Every
// stuckEvery, git and the processes it started are looked at for a file
// they would wait on forever (stuckOn). Where processes cannot be looked
// at, the work tree holding dir is looked at once, when git has run
// blockedAfter, for such a file (blockingFile): a git that is only slow,
// in a very large work tree, is not made slower by walks of the tree
// again and again. If there is one, git is stopped and the error, wrapping
// ErrBlockingFile, names it.
func waitGit(cmd *exec.Cmd, dir string) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	end := func(file string) error {
		stop(cmd.Process)
		<-done
		if file == "" {
			file = blockingFile(dir)
		}
		if file == "" {
			return fmt.Errorf("git is opening a named pipe whose name sot cannot read: %w", ErrBlockingFile)
		}
		return fmt.Errorf("%s: %w", file, ErrBlockingFile)
	}
	if !canWatch() {
		t := time.NewTimer(blockedAfter)
		defer t.Stop()
		select {
		case err := <-done:
			return err
		case <-t.C:
		}
		if p := blockingFile(dir); p != "" {
			return end(p)
		}
		return <-done
	}
	tick := time.NewTicker(stuckEvery)
	defer tick.Stop()
	held := map[string]bool{}
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
		}
		if file, ok := stuckOn(cmd.Process.Pid, held); ok {
			select {
			case err := <-done: // it ended as it was looked at
				return err
			default:
			}
			return end(file)
		}
	}
}

// runGitIn starts cmd, git run in dir, and waits for it with waitGit.
func runGitIn(cmd *exec.Cmd, dir string) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	return waitGit(cmd, dir)
}

// blockingFile returns a file git would read as it works in dir, and
// wait on forever, or "": a .gitattributes or .gitignore of the work tree
// holding dir (the repository's own directory left out), the
// repository's info/attributes and info/exclude, or the user's attributes
// and ignore files, that is a named pipe, a socket or a device.
func blockingFile(dir string) string {
	top := dir
	if abs, err := filepath.Abs(dir); err == nil {
		top = abs
	}
	for {
		if _, err := os.Lstat(filepath.Join(top, ".git")); err == nil {
			break
		}
		parent := filepath.Dir(top)
		if parent == top {
			top = dir // no .git above: the directory itself is walked
			break
		}
		top = parent
	}
	var outside []string
	if fi, err := os.Lstat(filepath.Join(top, ".git")); err == nil && fi.IsDir() {
		outside = append(outside, filepath.Join(top, ".git", "info", "attributes"), filepath.Join(top, ".git", "info", "exclude"))
	}
	outside = append(outside, userGitFile("attributes"), userGitFile("ignore"))
	for _, p := range outside {
		if fi, err := os.Stat(p); err == nil && blocks(fi.Mode()) {
			return p
		}
	}
	found := ""
	filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil // unreadable: git will say so
		case d.IsDir() && d.Name() == ".git" && p != top:
			return filepath.SkipDir
		case (d.Name() == ".gitattributes" || d.Name() == ".gitignore") && blocks(d.Type()):
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// blocks reports whether opening a file of mode m to read it can wait
// forever.
func blocks(m fs.FileMode) bool {
	return m&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice|fs.ModeCharDevice) != 0
}
