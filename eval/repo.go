package eval

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// BaseBranch and ChangeBranch are the branches of a case's repository:
// the state before the change, and the change as one commit on top.
const (
	BaseBranch   = "main"
	ChangeBranch = "change"
)

// Repo writes the case's repository into dir (which must be empty or
// missing): the files before the change committed on main, and the change
// committed on its own branch, which is checked out. The commits' authors
// and dates are fixed, so the same case always makes the same commits.
func (c Case) Repo(ctx context.Context, dir string) error {
	if c.Diff != "" {
		return fmt.Errorf("case %s is a diff without its repository; it is reviewed as text", c.ID)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	git := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.fsmonitor=false", "-c", "commit.gpgSign=false", "-c", "core.hooksPath=/dev/null"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=sot eval", "GIT_AUTHOR_EMAIL=eval@sot.invalid", "GIT_COMMITTER_NAME=sot eval",
			"GIT_COMMITTER_EMAIL=eval@sot.invalid", "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z", "LC_ALL=C")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("case %s: git %s: %v: %s", c.ID, args[0], err, bytes.TrimSpace(stderr.Bytes()))
		}
		return nil
	}
	write := func(files map[string][]byte) error {
		for _, p := range sortedKeys(files) {
			full := filepath.Join(dir, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(full, files[p], 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	if err := git("init", "-q", "-b", BaseBranch); err != nil {
		return err
	}
	if err := write(c.Before); err != nil {
		return err
	}
	if err := git("add", "-A"); err != nil {
		return err
	}
	if err := git("commit", "-q", "--allow-empty", "-m", "before the change"); err != nil {
		return err
	}
	if err := git("checkout", "-q", "-b", ChangeBranch); err != nil {
		return err
	}
	if err := write(c.After); err != nil {
		return err
	}
	for _, p := range c.Deleted {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	if err := git("add", "-A"); err != nil {
		return err
	}
	return git("commit", "-q", "--allow-empty", "-m", cmp.Or(c.Summary, "the change"))
}
