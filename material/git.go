package material

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// emptyTree is the id of git's empty tree, the base of a repository that has
// no commits yet.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// gitError is a failed git command.
type gitError struct {
	args   []string
	stderr string
	err    error
}

func (e *gitError) Error() string {
	msg := firstLine(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	return fmt.Sprintf("git %s: %s", subcommand(e.args), msg)
}

// subcommand returns the git subcommand of args, skipping "-c name=value"
// and other global options.
func subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "-c" || args[i] == "-C":
			i++
		case !strings.HasPrefix(args[i], "-"):
			return args[i]
		}
	}
	return strings.Join(args, " ")
}

func (e *gitError) Unwrap() error { return e.err }

// firstLine returns the first non-empty line of s, trimmed.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// gitCmd prepares a git command in dir. Git's messages are requested in
// English (they are matched below) and optional locks are disabled so that
// a review never contends with the user's own git commands.
func gitCmd(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0")
	return cmd
}

// runGit runs git in dir and returns its standard output.
func runGit(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := gitCmd(ctx, dir, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, exec.ErrNotFound) {
			return nil, fmt.Errorf("git is not installed or not on PATH: install git, or review files with --artifacts or text with --type freeform: %w", err)
		}
		return nil, &gitError{args: args, stderr: stderr.String(), err: err}
	}
	return stdout.Bytes(), nil
}

// repoTop returns the top directory of the work tree containing dir, and
// whether the repository has a commit checked out, with one git process.
func repoTop(ctx context.Context, dir string) (top string, head bool, err error) {
	if fi, err := os.Stat(dir); err != nil {
		return "", false, fmt.Errorf("reading %s: %w", dir, err)
	} else if !fi.IsDir() {
		return "", false, fmt.Errorf("%s is not a directory: %w", dir, ErrNotRepo)
	}
	// With --verify --quiet, a missing HEAD exits 1 after the top directory
	// is printed; any other failure exits 128.
	args := []string{"rev-parse", "--show-toplevel", "--verify", "--quiet", "HEAD^{commit}"}
	cmd := gitCmd(ctx, dir, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var exit *exec.ExitError
	switch {
	case runErr == nil:
		head = true
	case errors.As(runErr, &exit) && exit.ExitCode() == 1:
	case ctx.Err() != nil:
		return "", false, ctx.Err()
	case errors.Is(runErr, exec.ErrNotFound):
		return "", false, fmt.Errorf("git is not installed or not on PATH: install git, or review files with --artifacts or text with --type freeform: %w", runErr)
	default:
		if strings.Contains(stderr.String(), "not a git repository") || strings.Contains(stderr.String(), "must be run in a work tree") {
			return "", false, fmt.Errorf("%s: %w", dir, ErrNotRepo)
		}
		return "", false, &gitError{args: args, stderr: stderr.String(), err: runErr}
	}
	top, _, _ = strings.Cut(stdout.String(), "\n")
	if top = strings.TrimSpace(top); top == "" {
		return "", false, fmt.Errorf("%s: %w", dir, ErrNotRepo)
	}
	return top, head, nil
}

// untracked lists the untracked, non-ignored files of the whole work tree
// containing dir, relative to its top.
func untracked(ctx context.Context, dir string) ([]string, error) {
	out, err := runGit(ctx, dir, "ls-files", "--others", "--exclude-standard", "--full-name", "-z", "--", ":/")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" && !strings.HasSuffix(p, "/") { // "dir/" is a nested repository
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// blobHeads reads the first n lines of each blob in oids with one
// "git cat-file --batch". Blobs git does not have are left out.
func blobHeads(ctx context.Context, top string, oids []string, n int) (map[string][]string, error) {
	heads := make(map[string][]string, len(oids))
	if len(oids) == 0 {
		return heads, nil
	}
	cmd := gitCmd(ctx, top, "cat-file", "--batch")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		w := bufio.NewWriter(stdin)
		for _, o := range oids {
			w.WriteString(o)
			w.WriteByte('\n')
		}
		w.Flush()
		stdin.Close()
	}()
	r := bufio.NewReader(stdout)
	readErr := func() error {
		for range oids {
			hdr, err := r.ReadString('\n')
			if err != nil {
				return err
			}
			f := strings.Fields(hdr)
			if len(f) != 3 { // "<oid> missing", "<oid> ambiguous"
				continue
			}
			size, err := strconv.Atoi(f[2])
			if err != nil {
				return fmt.Errorf("git cat-file: bad header %q", hdr)
			}
			head := make([]byte, min(size, 4096))
			if _, err := io.ReadFull(r, head); err != nil {
				return err
			}
			if _, err := r.Discard(size - len(head) + 1); err != nil {
				return err
			}
			if f[1] == "blob" {
				heads[f[0]] = headLines(head, n)
			}
		}
		return nil
	}()
	io.Copy(io.Discard, r)
	waitErr := cmd.Wait()
	if readErr != nil {
		return nil, fmt.Errorf("git cat-file: %w", readErr)
	}
	if waitErr != nil {
		return nil, &gitError{args: []string{"cat-file", "--batch"}, stderr: stderr.String(), err: waitErr}
	}
	return heads, nil
}

// linguistReasons asks git for the linguist-generated and linguist-vendored
// attributes (the .gitattributes convention GitHub uses to collapse such
// files) of paths, with one git check-attr, and returns the skip reason of
// each path that has one set.
func linguistReasons(ctx context.Context, top string, paths []string) (map[string]string, error) {
	reasons := make(map[string]string)
	if len(paths) == 0 {
		return reasons, nil
	}
	cmd := gitCmd(ctx, top, "check-attr", "-z", "--stdin", "linguist-generated", "linguist-vendored")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		w := bufio.NewWriter(stdin)
		for _, p := range paths {
			w.WriteString(p)
			w.WriteByte(0)
		}
		w.Flush()
		stdin.Close()
	}()
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &gitError{args: []string{"check-attr"}, stderr: stderr.String(), err: err}
	}
	f := strings.Split(stdout.String(), "\x00")
	for i := 0; i+2 < len(f); i += 3 {
		p, attr, val := f[i], f[i+1], f[i+2]
		if val == "unspecified" || val == "unset" || val == "false" {
			continue
		}
		switch attr {
		case "linguist-generated":
			reasons[p] = reasonGenerated
		case "linguist-vendored":
			if reasons[p] == "" {
				reasons[p] = reasonVendored
			}
		}
	}
	return reasons, nil
}
