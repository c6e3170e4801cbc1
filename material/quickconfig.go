package material

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
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
//   - when the repository is not a plain .git directory above dir (a
//     linked worktree, a submodule, a bare repository);
//   - when a file cannot be read as plain text of at most 1 MiB;
//   - when any line of any file mentions an include, core.attributesFile
//     or core.sparseCheckout (which need their values read), or mentions
//     "filter" in any way other than a plain [filter "name"] header.
//
// The words are matched in any ASCII case, anywhere on a line, so a
// comment or a value that mentions them sends the question to git too.
func quickConfig(dir string) (c gitConfig, ok bool) {
	if runtime.GOOS != "linux" || !quietGitEnv(os.Environ()) {
		return c, false
	}
	gitDir, ok := findGitDir(dir)
	if !ok {
		return c, false
	}
	files := []string{filepath.Join(gitDir, "config"), filepath.Join(gitDir, "config.worktree")}
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
		names, ok := filterNames(f)
		if !ok {
			return gitConfig{}, false
		}
		for _, n := range names {
			if !slices.Contains(c.filters, n) {
				c.filters = append(c.filters, n)
			}
		}
	}
	return c, true
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
// holding a .git that is a valid repository directory. Anything git would
// read differently (a .git file, a .git that is a link, one git would pass
// over as invalid, a bare repository, a shared directory named by
// commondir) makes it give up.
func findGitDir(dir string) (string, bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	// git works from the physical directory (getcwd), not the path given.
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return "", false
	}
	for {
		g := filepath.Join(abs, ".git")
		fi, err := os.Lstat(g)
		switch {
		case err == nil && fi.IsDir():
			return g, validGitDir(g)
		case err == nil:
			return "", false // a gitfile, a link, anything else
		case !errors.Is(err, os.ErrNotExist):
			return "", false
		}
		if looksLikeGitDir(abs) {
			return "", false // a bare repository, or inside .git
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return "", false
		}
		abs = parent
	}
}

// validGitDir reports whether g is a repository directory git accepts as
// it is (HEAD naming a ref or a commit, objects and refs present) and keeps
// its objects and configuration itself (no commondir).
func validGitDir(g string) bool {
	for _, d := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(g, d)); err != nil || !fi.IsDir() {
			return false
		}
	}
	if _, err := os.Lstat(filepath.Join(g, "commondir")); !errors.Is(err, os.ErrNotExist) {
		return false
	}
	fi, err := os.Lstat(filepath.Join(g, "HEAD"))
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 256 {
		return false
	}
	b, err := plainfile.Read(filepath.Join(g, "HEAD"))
	if err != nil {
		return false
	}
	head := strings.TrimSpace(string(b))
	if ref, ok := strings.CutPrefix(head, "ref:"); ok {
		return strings.HasPrefix(strings.TrimLeft(ref, " \t"), "refs/")
	}
	return isHex(head) && (len(head) == 40 || len(head) == 64)
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

// filterNames reads a configuration file for the names of the filter
// drivers it defines. A missing file defines none. ok is false when the
// file cannot be read as plain text of at most 1 MiB, or when it holds
// anything quickConfig leaves to git (see there).
func filterNames(name string) (names []string, ok bool) {
	if name == os.DevNull {
		return nil, true
	}
	f, err := plainfile.Open(name)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, true
	}
	if err != nil {
		return nil, false
	}
	defer f.Close()
	const limit = 1 << 20
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil || len(b) > limit {
		return nil, false
	}
	for line := range bytes.Lines(b) {
		lower := asciiLower(line)
		if bytes.Contains(lower, []byte("include")) || bytes.Contains(lower, []byte("attributesfile")) ||
			bytes.Contains(lower, []byte("sparsecheckout")) {
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
