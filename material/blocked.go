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

// ErrBlockingFile means a file git reads as it works (a .gitattributes,
// a .gitignore, the repository's info/attributes or info/exclude, the
// user's attributes or ignore file) is a named pipe, a socket or a
// device: git opens it and waits, forever, for something to read.
var ErrBlockingFile = errors.New("git reads this file, and it is a named pipe, socket or device that git would wait on forever; remove or rename it, then run sot again")

// blockedAfter is how long a git command runs before sot looks for a file
// that could keep it waiting: far longer than a command waits on a
// repository of ordinary size, and far shorter than a user waits.
var blockedAfter = 2 * time.Second

// waitGit waits for the git command cmd, started in dir, to end. Once it
// has run blockedAfter, the work tree holding dir is looked at, once, for
// a file that would keep git waiting (blockingFile): a git that is only
// slow, in a very large work tree, is not made slower by a walk of the
// tree again and again. If there is one, git is stopped and the error,
// wrapping ErrBlockingFile, names it.
func waitGit(cmd *exec.Cmd, dir string) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t := time.NewTimer(blockedAfter)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
	}
	if p := blockingFile(dir); p != "" {
		cmd.Process.Kill()
		<-done
		return fmt.Errorf("%s: %w", p, ErrBlockingFile)
	}
	return <-done
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
