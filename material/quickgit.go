package material

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/sotlabs/sot/internal/plainfile"
)

// quickConfig reads what gitConfig holds straight from the files git
// would read for dir, without starting git, when it can be sure of the
// answer; ok is false whenever it cannot, and git config must be asked.
//
// The answer decides which filter drivers the diff switches off, so it
// must never miss one. It may name more than there are (switching off a
// driver that does not exist does nothing), never fewer. So it declines
// on anything it does not read the way git would:
//   - outside Linux, where the system file's place varies;
//   - with any GIT_ variable set that could change which repository or
//     which files git reads (GIT_DIR, GIT_CONFIG_PARAMETERS, ...);
//   - when the repository is not a plain .git directory above dir, owned
//     by this user (a linked worktree, a submodule, a bare repository,
//     one git would refuse as another user's);
//   - when a file cannot be read as plain text of at most 1 MiB;
//   - when any line of any file mentions an include, core.attributesFile
//     or core.sparseCheckout (which need their values read), or mentions
//     "filter" in any way other than a plain [filter "name"] header;
//   - when the repository's own files mention anything that moves or
//     replaces its work tree or its refs (see filterNames).
//
// The words are matched in any ASCII case, anywhere on a line, so a
// comment or a value that mentions them sends the question to git too.
func quickConfig(ctx context.Context, dir string) (c gitConfig, ok bool) {
	r := lookAtRepo(ctx, dir)
	if !r.ok {
		return c, false
	}
	c.filters = slices.Clone(r.filters)
	var files []string
	if f, set := os.LookupEnv("GIT_CONFIG_GLOBAL"); set {
		files = append(files, f)
	} else {
		home, err := os.UserHomeDir()
		if err != nil {
			return c, false
		}
		files = append(files, filepath.Join(home, ".gitconfig"))
		if f := userGitFile("config"); f != "" {
			files = append(files, f)
		}
	}
	if !envTrue(os.Getenv("GIT_CONFIG_NOSYSTEM")) {
		if f, set := os.LookupEnv("GIT_CONFIG_SYSTEM"); set {
			files = append(files, f)
		} else {
			files = append(files, systemFiles("gitconfig")...)
		}
	}
	for _, f := range files {
		if !filepath.IsAbs(f) {
			return gitConfig{}, false // git would read it from dir, not from here
		}
		names, ok := filterNames(f, false)
		if !ok {
			return gitConfig{}, false
		}
		c.filters = addNew(c.filters, names)
	}
	return c, true
}

// addNew appends to list the names it does not hold yet.
func addNew(list, names []string) []string {
	for _, n := range names {
		if !slices.Contains(list, n) {
			list = append(list, n)
		}
	}
	return list
}

// repoLook is what quickConfig and quickRepo both need of a repository,
// read once: where its .git directory is (findGitDir), and what its own
// configuration files say.
type repoLook struct {
	gitDir, phys string
	filters      []string // the filter drivers its own files define
	ok           bool     // all of it was read as git reads it
}

// lookAtRepo reads the repoLook of dir: once within a Diff, whose
// commands ask from several goroutines at once (see withConfigCache), and
// every time outside one.
func lookAtRepo(ctx context.Context, dir string) repoLook {
	cache, ok := ctx.Value(configCacheKey{}).(*sync.Map)
	if !ok {
		return readRepoLook(dir)
	}
	key := repoLookKey(dir)
	if abs, err := filepath.Abs(dir); err == nil {
		key = repoLookKey(abs)
	}
	v, _ := cache.LoadOrStore(key, sync.OnceValue(func() repoLook { return readRepoLook(dir) }))
	return v.(func() repoLook)()
}

// repoLookKey keys a repoLook in a Diff's cache, apart from the
// configurations kept there by directory.
type repoLookKey string

// readRepoLook reads the repoLook of dir. It is not ok outside Linux,
// with a GIT_ variable that moves the repository or its configuration,
// without a plain .git directory (findGitDir), or when the repository's
// own files hold anything filterNames leaves to git.
func readRepoLook(dir string) repoLook {
	if runtime.GOOS != "linux" || !quietGitEnv(os.Environ()) {
		return repoLook{}
	}
	gitDir, phys, ok := findGitDir(dir)
	if !ok {
		return repoLook{}
	}
	r := repoLook{gitDir: gitDir, phys: phys}
	for _, f := range []string{filepath.Join(gitDir, "config"), filepath.Join(gitDir, "config.worktree")} {
		names, ok := filterNames(f, true)
		if !ok {
			return repoLook{}
		}
		r.filters = addNew(r.filters, names)
	}
	r.ok = true
	return r
}

// quickRepo answers repoTop's questions without starting git, when it can
// be sure of the answers: the top of the work tree is the directory
// holding the .git that findGitDir finds, and HEAD is read from its file
// and the refs, loose or packed. ok is false when anything is read
// differently from git: outside Linux, a GIT_ variable that moves the
// repository, a repository configuration that moves or replaces its work
// tree or its refs (see filterNames), a ref that is itself symbolic.
//
// A branch is taken to name a commit, as git keeps it: quickRepo does
// not open the object to look.
func quickRepo(ctx context.Context, dir string) (info repoInfo, ok bool) {
	r := lookAtRepo(ctx, dir)
	if !r.ok {
		return info, false
	}
	gitDir := r.gitDir
	info.top = filepath.Dir(gitDir)
	// findGitDir found the top above the physical directory.
	if rel, err := filepath.Rel(info.top, r.phys); err == nil && rel != "." {
		info.prefix = filepath.ToSlash(rel) + "/"
	}
	info.common = gitDir
	if info.commit, ok = readHead(gitDir); !ok {
		return repoInfo{}, false
	}
	info.head = info.commit != ""
	return info, true
}

// readHead reads the commit HEAD names in gitDir: a detached HEAD's own,
// or its branch's, from the branch's file or packed-refs. "" is a branch
// with no commit yet. ok is false for anything else.
func readHead(gitDir string) (commit string, ok bool) {
	head, ok := refFile(filepath.Join(gitDir, "HEAD"))
	if !ok || head == "" {
		return "", false
	}
	ref, symbolic := strings.CutPrefix(head, "ref:")
	if !symbolic {
		return head, isObjectName(head)
	}
	ref = strings.TrimLeft(ref, " \t")
	if !strings.HasPrefix(ref, "refs/heads/") || !validRefName(ref) {
		return "", false
	}
	switch oid, ok := refFile(filepath.Join(gitDir, filepath.FromSlash(ref))); {
	case !ok:
		return "", false
	case oid != "":
		return oid, isObjectName(oid)
	}
	return packedRef(filepath.Join(gitDir, "packed-refs"), ref)
}

// packedRef finds ref in the packed-refs file name: its object, "" when
// the file does not list it or there is no file; ok is false when the
// file is not a plain one, or a line of it is not as git writes them.
func packedRef(name, ref string) (oid string, ok bool) {
	f, ok := openPlain(name)
	if f == nil {
		return "", ok
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<10)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue // the header, a peeled tag's object
		}
		o, r, found := strings.Cut(line, " ")
		if !found || !isObjectName(o) {
			return "", false
		}
		if r == ref {
			return o, true
		}
	}
	return "", sc.Err() == nil
}

// isObjectName reports whether s is an object name as git writes it: 40
// (SHA-1) or 64 (SHA-256) lower-case hexadecimal digits.
func isObjectName(s string) bool {
	return (len(s) == 40 || len(s) == 64) && isHex(s)
}

// validRefName reports whether ref is a plain ref name: letters, digits,
// "/", "_", "-" and ".", with no empty part, no part that starts with a
// dot or ends in ".lock", and no "..". git allows more; a ref sot does not
// read this plainly is left to git.
func validRefName(ref string) bool {
	for _, r := range ref {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("/_-.", r)) {
			return false
		}
	}
	for part := range strings.SplitSeq(ref, "/") {
		if part == "" || part[0] == '.' || strings.HasSuffix(part, ".lock") || strings.Contains(part, "..") {
			return false
		}
	}
	return true
}

// refFile reads a small ref file, trimmed: "" when there is none; ok is
// false when it is not a plain file of at most 64 KiB, or is empty, which
// git takes for a broken ref.
func refFile(name string) (string, bool) {
	b, exists, ok := readPlain(name, 64<<10)
	if !exists || !ok {
		return "", ok
	}
	s := strings.TrimSpace(string(b))
	return s, s != ""
}

// openPlain opens name if it is a plain file: f is nil, with ok true,
// when there is no such file, and with ok false when it is not plain.
func openPlain(name string) (f *os.File, ok bool) {
	f, err := plainfile.Open(name)
	switch {
	case err == nil:
		return f, true
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return nil, true
	}
	return nil, false
}

// readPlain reads name if it is a plain file of at most limit bytes; ok
// is false when it is another kind of file, or a longer one.
func readPlain(name string, limit int) (b []byte, exists, ok bool) {
	f, ok := openPlain(name)
	if f == nil {
		return nil, false, ok
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	return b, true, err == nil && len(b) <= limit
}

// quietGitEnv reports whether none of the GIT_ variables in env could
// change which repository git finds or which configuration it reads. Only
// variables known to leave both alone are allowed.
func quietGitEnv(env []string) bool {
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "GIT_") {
			continue
		}
		switch {
		case strings.HasPrefix(k, "GIT_AUTHOR_"), strings.HasPrefix(k, "GIT_COMMITTER_"),
			strings.HasPrefix(k, "GIT_SSL_"), strings.HasPrefix(k, "GIT_TRACE"):
		default:
			switch k {
			case "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_ATTR_NOSYSTEM",
				"GIT_TERMINAL_PROMPT", "GIT_OPTIONAL_LOCKS", "GIT_PAGER", "GIT_EDITOR", "GIT_ASKPASS",
				"GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_PROTOCOL_FROM_USER":
			default:
				return false
			}
		}
	}
	return true
}

// findGitDir finds the .git directory git would use for dir, the way git
// looks for it: the physical directory and each parent in turn, the first
// holding a .git that is a valid repository directory. phys is dir's
// physical path, from which git works. Anything git would read
// differently (a .git file, a .git that is a link, one git would pass over
// as invalid, a bare repository, a shared directory named by commondir, a
// repository another user owns, which git refuses) makes it give up.
func findGitDir(dir string) (gitDir, phys string, ok bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", false
	}
	// git works from the physical directory (getcwd), not the path given.
	if phys, err = filepath.EvalSymlinks(abs); err != nil {
		return "", "", false
	}
	for d := phys; ; {
		g := filepath.Join(d, ".git")
		fi, err := os.Lstat(g)
		switch {
		case err == nil && fi.IsDir():
			top, err := os.Lstat(d)
			if err != nil || !ownedByUs(fi) || !ownedByUs(top) || !validGitDir(g) {
				return "", "", false
			}
			return g, phys, true
		case err == nil:
			return "", "", false // a gitfile, a link, anything else
		case !errors.Is(err, os.ErrNotExist):
			return "", "", false
		}
		if looksLikeGitDir(d) {
			return "", "", false // a bare repository, or inside .git
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", false
		}
		d = parent
	}
}

// validGitDir reports whether g is a repository directory git accepts as
// it is (HEAD naming a ref or a commit, objects and refs present) and keeps
// its objects and configuration itself (no commondir), with its refs in
// files (no reftable).
func validGitDir(g string) bool {
	for _, d := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(g, d)); err != nil || !fi.IsDir() {
			return false
		}
	}
	for _, n := range []string{"commondir", "reftable"} {
		if _, err := os.Lstat(filepath.Join(g, n)); !errors.Is(err, os.ErrNotExist) {
			return false
		}
	}
	head, ok := refFile(filepath.Join(g, "HEAD"))
	if !ok {
		return false
	}
	if ref, ok := strings.CutPrefix(head, "ref:"); ok {
		return strings.HasPrefix(strings.TrimLeft(ref, " \t"), "refs/")
	}
	return isObjectName(head)
}

// looksLikeGitDir reports whether d has any of a repository directory's
// marks: git would take it for one.
func looksLikeGitDir(d string) bool {
	for _, n := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Lstat(filepath.Join(d, n)); err == nil {
			return true
		}
	}
	return false
}

func isHex(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return s != ""
}

// systemFiles is where a git built with the default layout keeps its
// system file name (gitconfig, gitattributes): /etc, and etc under the
// prefix of the git on the PATH, the link followed and not.
func systemFiles(name string) []string {
	files := []string{filepath.Join("/etc", name)}
	bin, err := exec.LookPath("git")
	if err != nil {
		return files
	}
	add := func(bin string) {
		if prefix := filepath.Dir(filepath.Dir(bin)); prefix != "/usr" {
			files = append(files, filepath.Join(prefix, "etc", name))
		}
	}
	add(bin)
	if r, err := filepath.EvalSymlinks(bin); err == nil && r != bin {
		add(r)
	}
	return files
}

// filterHeader is a section header that names a filter driver in the
// plainest form: [filter "name"], the name free of quotes and escapes,
// perhaps followed by a setting on the same line.
var filterHeader = regexp.MustCompile(`^\s*\[filter\s+"([^"\\\n]*)"\s*\]`)

// repoSetting is a line of the repository's own configuration that leaves
// the work tree where it is: git init writes "bare = false" into every
// repository, and a worktree configuration is switched on or off.
var repoSetting = regexp.MustCompile(`^\s*(bare\s*=\s*false|worktreeconfig\s*=\s*(true|false))\s*$`)

// filterNames reads a configuration file for the names of the filter
// drivers it defines. A missing file defines none. ok is false when the
// file cannot be read as plain text of at most 1 MiB, or when it holds
// anything quickConfig leaves to git (see there). In the repository's own
// files (repo), so is any mention of what moves or replaces the work tree
// or the refs (core.bare but "bare = false", core.worktree,
// extensions.refStorage).
func filterNames(name string, repo bool) (names []string, ok bool) {
	if name == os.DevNull {
		return nil, true
	}
	b, _, ok := readPlain(name, 1<<20)
	if !ok {
		return nil, false
	}
	for line := range bytes.Lines(b) {
		lower := asciiLower(line)
		if bytes.Contains(lower, []byte("include")) || bytes.Contains(lower, []byte("attributesfile")) ||
			bytes.Contains(lower, []byte("sparsecheckout")) {
			return nil, false
		}
		if repo && (bytes.Contains(lower, []byte("bare")) || bytes.Contains(lower, []byte("worktree")) ||
			bytes.Contains(lower, []byte("refstorage"))) && !repoSetting.Match(lower) {
			return nil, false
		}
		if !bytes.Contains(lower, []byte("filter")) {
			continue
		}
		m := filterHeader.FindSubmatchIndex(lower)
		if m == nil {
			return nil, false
		}
		// The name as written: case is lowered only for the match, and a
		// subsection's name keeps its own.
		names = append(names, string(line[m[2]:m[3]]))
	}
	return names, true
}

// asciiLower lowers the ASCII letters of b only, as git compares section
// and key names.
func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}
