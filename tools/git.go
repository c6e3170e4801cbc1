package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/sotlabs/sot/material"
)

// gitHardening are git's global options for every look: the repository's
// configuration (which whoever wrote the repository controls) must choose
// no program for git to run, no pager, filesystem monitor, attributes
// file, external diff or text conversion.
var gitHardening = []string{
	"--no-pager",
	"-c", "core.fsmonitor=false",
	"-c", "core.pager=cat",
	"-c", "core.attributesFile=",
	"-c", "core.quotepath=off",
	"-c", "log.showSignature=false",
}

// runGit runs git with args in the project, bounded by the git timeout,
// and returns its standard output. The environment keeps no GIT_ variable
// of the caller's, so none points git at another repository or program.
func (t *Tools) runGit(ctx context.Context, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, t.lim.GitTimeout)
	defer cancel()
	full := append([]string{"-C", t.top}, gitHardening...)
	cmd := exec.CommandContext(ctx, "git", append(full, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "LC_ALL=C", "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat")
	// Nothing is fetched: in a partial clone git fetches a missing object
	// as a look needs it, by a program the configuration chooses.
	cmd.Env = append(cmd.Env, material.NoFetchEnv()...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("git %s: %w", args[0], ctx.Err())
		}
		if errors.Is(err, exec.ErrNotFound) {
			return nil, fmt.Errorf("git is not installed, so the git tools cannot run: %w", err)
		}
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return nil, fmt.Errorf("git %s: %s: %w", args[0], maskText("", msg), err)
	}
	return stdout.Bytes(), nil
}

// checkRevision refuses a revision that does not look like one: empty,
// starting with "-" (an option), or holding a character outside
// [A-Za-z0-9_./~^@{}-].
func checkRevision(rev string) error {
	if rev == "" || strings.HasPrefix(rev, "-") {
		return fmt.Errorf("revision %q is not a revision; give a commit id, a branch or tag name, or HEAD~N", rev)
	}
	for _, c := range rev {
		ok := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.ContainsRune("_./~^@{}-", c)
		if !ok {
			return fmt.Errorf("revision %q holds %q, which no revision needs; give a commit id, a branch or tag name, or HEAD~N", rev, c)
		}
	}
	return nil
}

// gitLog lists up to n commits (0 for the limit) that touched p, newest
// first, one line each.
func (t *Tools) gitLog(ctx context.Context, p string, n int) (Result, error) {
	c, err := t.clean(p)
	if err != nil {
		return Result{}, err
	}
	if n <= 0 || n > t.lim.MaxCommits {
		n = t.lim.MaxCommits
	}
	out, err := t.runGit(ctx, "log", "--no-color", "--no-ext-diff", "--no-textconv", "--no-show-signature",
		fmt.Sprintf("--max-count=%d", n+1), "--date=short", "--format=%h %ad %an: %s", "--", ":(literal)"+c)
	if err != nil {
		return Result{}, err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(out) == 0 {
		lines = nil
	}
	r := Result{}
	if len(lines) > n {
		lines, r.Cut = lines[:n], true
	}
	var b strings.Builder
	for i, l := range lines {
		l = cutUTF8(l, maxLineBytes) + "\n"
		if b.Len()+len(l) > t.lim.MaxBytes {
			lines, r.Cut = lines[:i], true
			break
		}
		b.WriteString(l)
	}
	switch {
	case r.Cut:
		fmt.Fprintf(&b, "[cut: showed the %d newest commits]\n", len(lines))
	case len(lines) == 0:
		fmt.Fprintf(&b, "[no commits touch %s]\n", c)
	}
	r.Text = maskText("", b.String())
	return r, nil
}

// gitShow returns lines start to end (as readFile) of the file p as the
// revision rev has it.
func (t *Tools) gitShow(ctx context.Context, p, rev string, start, end int) (Result, error) {
	if err := checkRevision(rev); err != nil {
		return Result{}, err
	}
	c, err := t.clean(p)
	if err != nil {
		return Result{}, err
	}
	if c == "." {
		return Result{}, fmt.Errorf("name a file to show at %s", rev)
	}
	if material.IsSecretName(c) {
		return Result{}, errSecret(c)
	}
	if _, err := t.runGit(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}"); err != nil {
		return Result{}, fmt.Errorf("revision %s is not a commit in this repository; git_log lists the commits of a path: %w", rev, err)
	}
	// cat-file prints the blob as stored: no filter, text conversion or
	// pager runs.
	out, err := t.runGit(ctx, "cat-file", "blob", rev+":"+c)
	if err != nil {
		return Result{}, fmt.Errorf("%s is not a file at %s: %w", c, rev, err)
	}
	if len(out) > t.lim.MaxFileBytes+1 {
		out = out[:t.lim.MaxFileBytes+1]
	}
	return t.render(c, out, start, end)
}
