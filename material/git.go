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
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/sotlabs/sot/internal/shell"
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
// a review never contends with the user's own git commands. The
// repository's configuration, which whoever wrote the repository controls,
// chooses no program for git to run: no pager, no filesystem monitor, no
// filter (noFilters); external diffs and text conversions are turned off by
// the diff's own options.
//
// The error is the one reading the configuration met: a command that could
// run a filter is not started without the list of drivers to switch off.
func gitCmd(ctx context.Context, dir string, args ...string) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--no-pager", "-c", "core.fsmonitor=false", "-c", "core.pager=cat"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat")
	cmd.Env = append(cmd.Env, noFetch...)
	if !filterFree(args) {
		env, err := noFilters(ctx, dir)
		if err != nil {
			return nil, err
		}
		cmd.Env = append(cmd.Env, env...)
	}
	return cmd, nil
}

// noFetch keeps git from fetching anything. In a partial clone git fetches
// a missing object from the promisor remote as it needs it, and the
// repository's configuration chooses how: the program that serves a
// file:// remote (remote.NAME.uploadpack, run by the shell), the ssh
// command, a credential helper. GIT_ALLOW_PROTOCOL, set to no protocol,
// overrides every protocol.*.allow the configuration sets, remote helpers
// included; GIT_NO_LAZY_FETCH (git 2.45 and later) stops the fetch before
// it starts.
var noFetch = []string{"GIT_ALLOW_PROTOCOL=", "GIT_NO_LAZY_FETCH=1"}

// NoFetchEnv is the environment that keeps git from fetching anything
// (see noFetch), for a package that starts git itself.
func NoFetchEnv() []string { return slices.Clone(noFetch) }

// filterFree reports whether the git command args is one that reads no
// file of the work tree to compare or store it, and so runs no filter
// driver: such a command need not wait for the list of drivers to switch
// off, which takes a git process of its own. Any command not known to be
// free of them (a diff, hash-object) is given the list.
func filterFree(args []string) bool {
	sub := subcommand(args)
	i := slices.Index(args, sub)
	rest := args[i+1:]
	switch sub {
	case "rev-parse", "ls-tree", "check-attr", "merge-base":
		return true
	case "cat-file":
		// Only --filters, --textconv and --path bring filters in.
		return !slices.ContainsFunc(rest, func(a string) bool {
			return a == "--filters" || a == "--textconv" || strings.HasPrefix(a, "--path")
		})
	case "ls-files":
		// Listing the index and the untracked files compares no content;
		// --modified and its kind check entries against the work tree.
		for _, a := range rest {
			switch a {
			case "-z", "--cached", "-c", "--others", "-o", "--exclude-standard", "--full-name":
			case "--":
				return true // the rest are paths
			default:
				if strings.HasPrefix(a, "-") {
					return false
				}
			}
		}
		return true
	}
	return false
}

// noFilters switches off, through git's environment configuration (whose
// keys, unlike -c's, may hold any character), every filter driver dir's
// configuration defines: git runs a file's clean filter to compare the
// working tree with the index.
func noFilters(ctx context.Context, dir string) ([]string, error) {
	c, err := repoConfig(ctx, dir)
	if err != nil {
		return nil, err
	}
	var env []string
	n := 0
	set := func(k, v string) {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", n, k), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", n, v))
		n++
	}
	for _, name := range c.filters {
		for _, key := range []string{"clean", "smudge", "process"} {
			set("filter."+name+"."+key, "")
		}
		set("filter."+name+".required", "false")
	}
	if n == 0 {
		return nil, nil
	}
	return append(env, fmt.Sprintf("GIT_CONFIG_COUNT=%d", n)), nil
}

// gitConfig is what sot reads of a repository's configuration (the
// user's and the system's included).
type gitConfig struct {
	// filters are the names of the filter drivers it defines.
	filters []string
	// attributesFile is core.attributesFile, when attributesFileSet.
	attributesFile    string
	attributesFileSet bool
	// sparse is core.sparseCheckout set to anything but false.
	sparse bool
}

// repoConfig reads dir's configuration: once a directory within a Diff
// (see withConfigCache), every time outside one, so that a process that
// lives on (sot mcp) never switches off the filter drivers of a
// configuration that has changed since.
func repoConfig(ctx context.Context, dir string) (gitConfig, error) {
	cache, ok := ctx.Value(configCacheKey{}).(*sync.Map)
	if !ok {
		return readOrAsk(ctx, dir)
	}
	key := dir
	if abs, err := filepath.Abs(dir); err == nil {
		key = abs
	}
	// Asked from several goroutines at once (the diff and the commands
	// that follow it), git runs once.
	v, _ := cache.LoadOrStore(key, sync.OnceValues(func() (gitConfig, error) { return readOrAsk(ctx, dir) }))
	return v.(func() (gitConfig, error))()
}

// configCacheKey is the context key of the configurations one Diff has
// read, by directory, each a func() (gitConfig, error) that reads it once.
type configCacheKey struct{}

// withConfigCache returns ctx holding a cache of configurations for the
// commands of one Diff.
func withConfigCache(ctx context.Context) context.Context {
	return context.WithValue(ctx, configCacheKey{}, new(sync.Map))
}

// readOrAsk reads dir's configuration from its files when quickConfig
// can, and asks git otherwise: the diff then need not wait for a git
// process before it starts.
func readOrAsk(ctx context.Context, dir string) (gitConfig, error) {
	if c, ok := quickConfig(ctx, dir); ok {
		return c, nil
	}
	return readConfig(ctx, dir)
}

// readConfig runs git to read the parts of dir's configuration that
// gitConfig holds. None of them set is no error (git config exits 1); a
// git that fails otherwise, or is stopped (see waitGit), is.
func readConfig(ctx context.Context, dir string) (gitConfig, error) {
	cmd := exec.CommandContext(ctx, "git", "config", "--null", "--get-regexp", `^filter\.|^core\.(attributesfile|sparsecheckout)$`)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_OPTIONAL_LOCKS=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := runGitIn(cmd, dir)
	var exit *exec.ExitError
	switch {
	case err == nil, errors.As(err, &exit) && exit.ExitCode() == 1 && stdout.Len() == 0:
		return parseConfig(stdout.String()), nil
	case ctx.Err() != nil:
		return gitConfig{}, ctx.Err()
	case errors.Is(err, exec.ErrNotFound):
		return gitConfig{}, errNoGit(err)
	case errors.Is(err, ErrBlockingFile):
		return gitConfig{}, err
	}
	return gitConfig{}, &gitError{args: []string{"config"}, stderr: stderr.String(), err: err}
}

// parseConfig reads git config --null --get-regexp's output: entries
// ending in NUL, each a key, then a line break and the value when it has
// one.
func parseConfig(out string) gitConfig {
	var c gitConfig
	for _, entry := range strings.Split(out, "\x00") {
		k, v, hasValue := strings.Cut(entry, "\n")
		switch k {
		case "core.attributesfile":
			c.attributesFile, c.attributesFileSet = v, true
		case "core.sparsecheckout":
			// Without a value, a key is true; git reads a few words as false.
			c.sparse = !hasValue || !slices.Contains([]string{"false", "no", "off", "0", ""}, strings.ToLower(v))
		}
		dot := strings.LastIndexByte(k, '.')
		if !strings.HasPrefix(k, "filter.") || dot <= len("filter.") {
			continue
		}
		if name := k[len("filter."):dot]; !slices.Contains(c.filters, name) {
			c.filters = append(c.filters, name)
		}
	}
	return c
}

// errNoGit says what to do when git cannot be found.
func errNoGit(err error) error {
	return fmt.Errorf("git is not installed or not on PATH: install git, or review files with --artifacts or text with --type freeform: %w", err)
}

// runGit runs git in dir and returns its standard output.
func runGit(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd, err := gitCmd(ctx, dir, args...)
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := runGitIn(cmd, dir); err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, exec.ErrNotFound):
			return nil, errNoGit(err)
		case errors.Is(err, ErrBlockingFile):
			return nil, err
		}
		if m := unsupportedFile.FindStringSubmatch(stderr.String()); m != nil {
			q := shell.Quote(m[1])
			return nil, fmt.Errorf("%s is tracked by git but is a named pipe, a socket or a device in the work tree: %w; restore the file (git checkout -- %s, from the top of the work tree) or stop tracking it (git rm --cached %s), then run sot again", m[1], ErrUnsupportedFile, q, q)
		}
		return nil, &gitError{args: args, stderr: stderr.String(), err: err}
	}
	return stdout.Bytes(), nil
}

// unsupportedFile is git's message for a tracked file that the work tree
// holds as something it cannot read: a named pipe, a socket, a device.
var unsupportedFile = regexp.MustCompile(`(?m)^error: (.+): unsupported file type$`)

// repoInfo is where a directory sits in its repository.
type repoInfo struct {
	top    string // the top directory of the work tree
	prefix string // the directory relative to top, "" or ending in "/"
	common string // the repository's shared directory (.git, most often)
	head   bool   // a commit is checked out
	commit string // the commit checked out, when head
}

// repoTop finds the work tree containing dir: from its files where
// quickRepo can, with one git process otherwise.
func repoTop(ctx context.Context, dir string) (repoInfo, error) {
	if fi, err := os.Stat(dir); err != nil {
		return repoInfo{}, fmt.Errorf("reading %s: %w", dir, err)
	} else if !fi.IsDir() {
		return repoInfo{}, fmt.Errorf("%s is not a directory: %w", dir, ErrNotRepo)
	}
	if info, ok := quickRepo(ctx, dir); ok {
		return info, nil
	}
	return askRepo(ctx, dir)
}

// askRepo is repoTop's answer from git rev-parse.
func askRepo(ctx context.Context, dir string) (repoInfo, error) {
	// With --verify --quiet, a missing HEAD exits 1 after the top directory
	// and the prefix are printed; any other failure exits 128.
	args := []string{"rev-parse", "--show-toplevel", "--show-prefix", "--git-common-dir", "--verify", "--quiet", "HEAD^{commit}"}
	cmd, err := gitCmd(ctx, dir, args...)
	if err != nil {
		return repoInfo{}, err
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := runGitIn(cmd, dir)
	var info repoInfo
	var exit *exec.ExitError
	switch {
	case runErr == nil:
		info.head = true
	case errors.As(runErr, &exit) && exit.ExitCode() == 1:
	case ctx.Err() != nil:
		return info, ctx.Err()
	case errors.Is(runErr, exec.ErrNotFound):
		return info, errNoGit(runErr)
	default:
		if strings.Contains(stderr.String(), "not a git repository") || strings.Contains(stderr.String(), "must be run in a work tree") {
			return info, fmt.Errorf("%s: %w", dir, ErrNotRepo)
		}
		return info, &gitError{args: args, stderr: stderr.String(), err: runErr}
	}
	lines := strings.SplitN(stdout.String(), "\n", 4)
	if info.top = strings.TrimSpace(lines[0]); info.top == "" || len(lines) < 3 {
		return info, fmt.Errorf("%s: %w", dir, ErrNotRepo)
	}
	info.prefix = lines[1]
	if info.common = lines[2]; info.common != "" && !filepath.IsAbs(info.common) {
		// Relative to the physical directory git ran in: joined to a path
		// through a link, a ".." would be taken lexically.
		phys, err := filepath.EvalSymlinks(dir)
		if err != nil {
			phys = dir
		}
		info.common = filepath.Join(phys, info.common)
	}
	if info.head && len(lines) == 4 {
		info.commit = strings.TrimSpace(lines[3])
	}
	return info, nil
}

// fromTop turns a path relative to the directory into one relative to the
// top of the work tree.
func (r repoInfo) fromTop(p string) string { return path.Clean(r.prefix + p) }

// untracked lists the untracked, non-ignored files of the whole work tree
// containing dir, relative to dir.
func untracked(ctx context.Context, dir string) ([]string, error) {
	out, err := runGit(ctx, dir, "ls-files", "--others", "--exclude-standard", "-z", "--", ":/")
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
	blobs, err := catObjects(ctx, top, oids, 4096)
	if err != nil {
		return nil, err
	}
	heads := make(map[string][]string, len(blobs))
	for oid, b := range blobs {
		heads[oid] = headLines(b, n)
	}
	return heads, nil
}

// catObjects reads up to limit bytes (all of them, when limit is
// negative) of each blob git names names (an object id, or rev:path),
// with one "git cat-file --batch", by name. A name that is no blob is left
// out; none may hold a line break.
func catObjects(ctx context.Context, top string, names []string, limit int) (map[string][]byte, error) {
	blobs := make(map[string][]byte, len(names))
	if len(names) == 0 {
		return blobs, nil
	}
	cmd, err := gitCmd(ctx, top, "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
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
		if errors.Is(err, exec.ErrNotFound) {
			return nil, errNoGit(err)
		}
		return nil, err
	}
	go func() {
		w := bufio.NewWriter(stdin)
		for _, o := range names {
			w.WriteString(o)
			w.WriteByte('\n')
		}
		w.Flush()
		stdin.Close()
	}()
	r := bufio.NewReader(stdout)
	readErr := func() error {
		for _, name := range names { // git answers in order
			hdr, err := r.ReadString('\n')
			if err != nil {
				return err
			}
			f := strings.Fields(hdr)
			if len(f) != 3 { // "<name> missing", "<name> ambiguous"
				continue
			}
			size, err := strconv.Atoi(f[2])
			if err != nil {
				return fmt.Errorf("git cat-file: bad header %q", hdr)
			}
			n := size
			if limit >= 0 {
				n = min(size, limit)
			}
			data := make([]byte, n)
			if _, err := io.ReadFull(r, data); err != nil {
				return err
			}
			if _, err := r.Discard(size - len(data) + 1); err != nil {
				return err
			}
			if f[1] == "blob" {
				blobs[name] = data
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
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &gitError{args: []string{"cat-file", "--batch"}, stderr: stderr.String(), err: waitErr}
	}
	return blobs, nil
}

// attrArgs asks git check-attr for the attributes that mark files as
// generated or vendored (the .gitattributes convention GitHub uses to
// collapse such files), for NUL-separated paths on standard input.
var attrArgs = []string{"check-attr", "-z", "--stdin", "linguist-generated", "linguist-vendored"}

// linguistReasons asks git for the linguist-generated and linguist-vendored
// attributes of paths, with one git check-attr, and returns the skip reason
// of each path that has one set.
func linguistReasons(ctx context.Context, top string, paths []string) (map[string]string, error) {
	if len(paths) == 0 {
		return map[string]string{}, nil
	}
	cmd, err := gitCmd(ctx, top, attrArgs...)
	if err != nil {
		return nil, err
	}
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
	if err := waitGit(cmd, top); err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, ErrBlockingFile):
			return nil, err
		}
		return nil, &gitError{args: []string{"check-attr"}, stderr: stderr.String(), err: err}
	}
	return parseAttrs(stdout.String()), nil
}

// parseAttrs reads git check-attr -z output: the skip reason of each path
// with an attribute set.
func parseAttrs(out string) map[string]string {
	reasons := make(map[string]string)
	f := strings.Split(out, "\x00")
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
	return reasons
}
