package material

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/sourcegraph/go-diff/diff"

	"github.com/sotlabs/sot/internal/parallel"
	"github.com/sotlabs/sot/internal/plainfile"
	"github.com/sotlabs/sot/internal/project"
)

// DefaultMaxFileBytes is the default size limit of one file's diff.
const DefaultMaxFileBytes = 1 << 20

// functionContextTokens is the size above which a file's whole-function
// diff is replaced by one with eight lines of context around each change.
const functionContextTokens = 12000

// deletedPreview is the number of removed lines shown for a deleted file.
const deletedPreview = 40

// DiffOptions selects the changes Diff reads.
type DiffOptions struct {
	Dir string // a directory inside the repository (default ".")
	// Range is passed to git diff: "" compares the working tree with HEAD;
	// "A..B", "A...B", a single revision (compared with the working tree)
	// or two revisions separated by a space are accepted.
	Range     string
	Staged    bool // compare the index with HEAD (git diff --cached); conflicts with Range
	Untracked bool // with the default range, also include untracked, non-ignored files as added
	// MaxFileBytes is the largest diff of one file that is reviewed; larger
	// ones are skipped with the reason. Default DefaultMaxFileBytes.
	MaxFileBytes int
	// Exclude names files and directories to leave out of the material
	// entirely, tracked and untracked alike, without listing them in
	// Skipped: sot's own outputs, such as the review's output directory or
	// a file that standard output is redirected to. A path is absolute or
	// relative to the top of the work tree (not to Dir); a directory
	// excludes everything below it. Paths outside the work tree, and the
	// top of the work tree itself, exclude nothing. A renamed file is left
	// out when its new path is excluded, a deleted one when its old path
	// is.
	Exclude []string
	// Only limits the material to these files and directories, named like
	// Exclude's; files elsewhere are left out without a note. Empty, or a
	// path naming the top of the work tree, limits nothing.
	Only []string
	// BaseDirs names directories, like Exclude, whose files at the base of
	// the change the caller will list (Material.FilesAtBase, given the
	// same slice). They are listed while git diffs.
	BaseDirs []string
}

// funcnameAttributes selects git's built-in hunk-header drivers for
// languages whose functions are usually indented (methods), so that
// --function-context shows the enclosing method rather than the whole class.
// Go and other languages keep git's default, which finds top-level
// declarations (git's "golang" driver would also match indented closures).
// It is passed as core.attributesFile for the diff only, in place of the
// user's global attributes file; the repository's own .gitattributes and
// .git/info/attributes take precedence over it.
const funcnameAttributes = `*.py diff=python
*.rb diff=ruby
*.rs diff=rust
*.java diff=java
*.kt diff=kotlin
*.cs diff=csharp
*.php diff=php
*.c diff=cpp
*.h diff=cpp
*.cc diff=cpp
*.cpp diff=cpp
*.hpp diff=cpp
*.md diff=markdown
*.css diff=css
*.html diff=html
*.sh diff=bash
*.pl diff=perl
*.ex diff=elixir
*.exs diff=elixir
`

// Diff reads the changes selected by o from git and renders them. Binary,
// generated, vendored, too large and non-UTF-8 files are listed in Skipped;
// besides the naming conventions, the linguist-generated and
// linguist-vendored attributes of .gitattributes mark files as generated or
// vendored. So are files that look like they hold credentials, never sent
// to a model: by their name, or their old name for a rename or a copy
// (.env, .netrc, .aws/credentials, id_rsa, *.pem, *.tfstate, ...), or by
// what they hold (see credentialContent: a private key, plain or in base64,
// a kubeconfig, Terraform state, a Yarn registry token), judged from the
// lines the diff shows and, where those hint at it, from the whole file.
// Files under o.Exclude are left out without a note. A range that makes git
// compare a merge commit with all its parents is an error wrapping
// ErrCombinedDiff. An empty diff gives a Material for which Empty reports
// true.
func Diff(ctx context.Context, o DiffOptions) (*Material, error) {
	dir := o.Dir
	if dir == "" {
		dir = "."
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	ctx = withConfigCache(ctx) // the configuration is read once for the whole diff
	revs := strings.Fields(o.Range)
	if o.Staged && len(revs) > 0 {
		return nil, fmt.Errorf("%w %q: --staged compares the index with HEAD and cannot be combined with a range; drop one of them", ErrBadRange, o.Range)
	}
	for _, r := range revs {
		if strings.HasPrefix(r, "-") {
			return nil, fmt.Errorf("%w %q: %q looks like an option, not a revision; give revisions such as main..feature", ErrBadRange, o.Range, r)
		}
	}
	// git works on three fronts at once: rev-parse finds the top of the
	// work tree and whether HEAD exists, while the diff (assuming HEAD
	// exists, which is nearly always so) and the listing of untracked files
	// (piped into check-attr) run from dir. Only a repository without
	// commits diffs a second time.
	var repo repoInfo
	var repoErr error
	var atBase *baseListing
	var absent []string // o.BaseDirs, relative to the top, when none is in the work tree
	var ends func() resolvedRange
	repoDone := make(chan struct{})
	go func() {
		defer close(repoDone)
		repo, repoErr = repoTop(ctx, dir)
		if repoErr == nil && len(revs) > 0 {
			// The ends of the range are resolved while git diffs, and the
			// files BaseDirs names are then listed at its base.
			ends = parallel.Go(func() resolvedRange {
				var r resolvedRange
				r.base, r.head, r.err = rangeEnds(ctx, repo.top, revs)
				if r.err == nil && len(o.BaseDirs) > 0 {
					r.atBase = listAtBase(ctx, repo.top, r.base, o.BaseDirs)
				}
				return r
			})
		}
		if repoErr != nil || len(revs) > 0 || repo.commit == "" || len(o.BaseDirs) == 0 {
			return
		}
		if !o.Staged {
			absent = absentDirs(repo.top, o.BaseDirs)
		}
		if len(absent) == 0 {
			atBase = listAtBase(ctx, repo.top, repo.commit, o.BaseDirs)
		}
	}()

	d := &differ{dir: dir, max: o.MaxFileBytes, m: &Material{Type: TypeDiff}}
	attrFile, cleanup := attributesFile()
	defer cleanup()
	d.attrFile = attrFile
	switch {
	case o.Staged:
		d.revArgs = []string{"--cached"}
	case len(revs) > 0:
		d.revArgs = revs
		d.m.Coordinates = "git diff " + strings.Join(revs, " ")
		// One revision is compared with the working tree.
		d.worktree = len(revs) == 1 && !strings.Contains(revs[0], "..") && !strings.Contains(revs[0], "^!")
	default:
		d.worktree = true
		d.revArgs = []string{"HEAD"}
	}

	// Untracked files are listed while git diffs the tracked ones.
	type listing struct {
		paths []string
		err   error
	}
	var others chan listing
	if o.Untracked && len(revs) == 0 && !o.Staged {
		others = make(chan listing, 1)
		go func() {
			var l listing
			l.paths, l.err = untracked(ctx, dir)
			others <- l
		}()
	}
	out, err := runGit(ctx, dir, d.args("--function-context")...)
	<-repoDone
	if repoErr != nil {
		return nil, repoErr
	}
	d.top = repo.top
	if len(absent) > 0 && err == nil && !mentionsDirs(out, absent) {
		// The directories are not in the work tree, and the diff from HEAD
		// deletes nothing from them: HEAD has no file there either.
		atBase = listedEmpty(repo.commit, o.BaseDirs)
	}
	d.exclude = excludePaths(d.top, o.Exclude)
	if only := excludePaths(d.top, o.Only); len(only) == len(o.Only) {
		d.only = only // a path outside the tree or at its top would keep everything
	}
	switch {
	case o.Staged && repo.head:
		d.m.Coordinates = "git diff --cached (staged changes)"
	case o.Staged:
		d.revArgs = append(d.revArgs, emptyTreeID(ctx, d.top))
		d.m.Coordinates = "git diff --cached (staged changes; no commits yet)"
		out, err = runGit(ctx, d.top, d.args("--function-context")...)
	case len(revs) > 0:
	case repo.head:
		d.m.Coordinates = "git diff HEAD (working tree)"
	default:
		d.revArgs = []string{emptyTreeID(ctx, d.top)}
		d.m.Coordinates = "git diff (working tree; no commits yet)"
		out, err = runGit(ctx, d.top, d.args("--function-context")...)
	}
	if len(d.only) > 0 {
		d.m.Coordinates += " -- " + strings.Join(d.only, " ")
	}
	// More than two revisions, or a merge commit's "M^!", make git compare
	// a merge with all its parents: a combined diff, which is empty when
	// every change came cleanly from one parent.
	if err == nil && (isCombined(out) || len(revs) > 2 || len(bytes.TrimSpace(out)) == 0 && isMergeBang(ctx, dir, revs)) {
		return nil, combinedDiffError(o.Range, revs)
	}
	var fds []*fileDiff
	if err == nil {
		fds = d.parseDiff(out)
	}
	var l listing
	if others != nil {
		l = <-others
	}
	if err != nil {
		var ge *gitError
		if len(revs) > 0 && errors.As(err, &ge) && slices.Contains(ge.args, "diff") {
			hint := "check that the revisions exist (git log --oneline); in a shallow clone (CI checkouts often are), fetch them first, e.g. git fetch --unshallow or fetch-depth: 0"
			switch {
			case strings.Contains(ge.stderr, "no merge base"):
				hint = "A...B needs a common ancestor; in a shallow clone (CI checkouts often are) fetch more history, e.g. git fetch --unshallow or fetch-depth: 0, or compare with A..B"
			case strings.Contains(ge.stderr, "promisor remote"):
				hint = "this is a partial clone that lacks objects the diff needs, and sot fetches nothing (the repository's configuration would choose the program that fetches); fetch them first, e.g. run git diff --stat " + strings.Join(revs, " ") + " once yourself, or clone without --filter"
			}
			return nil, fmt.Errorf("%w %q: %s; %s", ErrBadRange, o.Range, firstLine(ge.stderr), hint)
		}
		return nil, err
	}
	if l.err != nil {
		return nil, l.err
	}
	// The files of the diff and the untracked ones are asked about their
	// linguist attributes together, when any file could set them.
	var news []string
	for _, p := range l.paths {
		if p := repo.fromTop(p); !d.excluded(p) {
			news = append(news, p)
		}
	}
	asked := make([]string, 0, len(fds)+len(news))
	for _, fd := range fds {
		asked = append(asked, fd.path())
	}
	attrs, err := d.linguist(ctx, append(asked, news...), repo, out)
	if err != nil {
		return nil, err
	}
	if err := d.addDiff(ctx, fds, attrs); err != nil {
		return nil, err
	}
	var read []string
	for _, p := range news {
		if r := attrs[p]; r != "" {
			d.m.Skipped = append(d.m.Skipped, Skipped{Path: p, Reason: r})
			continue
		}
		read = append(read, p)
	}
	d.addUntracked(read)
	slices.SortStableFunc(d.m.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	slices.SortStableFunc(d.m.Skipped, func(a, b Skipped) int { return strings.Compare(a.Path, b.Path) })
	maskFiles(d.m.Files)
	d.m.Top = d.top
	switch {
	case len(revs) == 0 && repo.commit != "":
		// The working tree or the index against HEAD, which repoTop read.
		d.m.Base, d.m.Head, d.m.Worktree = repo.commit, repo.commit, d.worktree || o.Staged
		d.m.atBase = atBase
	case len(revs) > 0:
		e := ends()
		if e.err != nil {
			return nil, e.err
		}
		d.m.Base, d.m.Head, d.m.Worktree = e.base, e.head, d.worktree || o.Staged
		d.m.atBase = e.atBase
	}
	return d.m, nil
}

// headOf is the commit of the new side of a diff of the range revs: B of
// A..B and A...B (HEAD when B is left out), the second of two revisions,
// R of R^!, and HEAD for the working tree, the index or one revision
// compared with the working tree.
func headOf(ctx context.Context, top string, revs []string) (string, error) {
	spec := headSpec(revs)
	out, err := runGit(ctx, top, "rev-parse", "--verify", "--quiet", spec+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("the head of the diff, %s: %w", spec, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// headSpec names the commit headOf resolves.
func headSpec(revs []string) string {
	switch {
	case len(revs) == 2:
		return revs[1]
	case len(revs) == 1 && strings.Contains(revs[0], ".."):
		_, b, _ := strings.Cut(strings.Replace(revs[0], "...", "..", 1), "..")
		return cmp.Or(b, "HEAD")
	case len(revs) == 1 && strings.HasSuffix(revs[0], "^!"):
		return strings.TrimSuffix(revs[0], "^!")
	}
	return "HEAD"
}

// rangeEnds resolves the base and the head of the range revs (see baseOf
// and headOf) with one git process, or two at once for A...B, whose base
// is a merge base.
func rangeEnds(ctx context.Context, top string, revs []string) (base, head string, err error) {
	bs := baseSpec(revs)
	if bs == "" {
		h := parallel.Go(func() rangeEnd {
			c, err := headOf(ctx, top, revs)
			return rangeEnd{c, err}
		})
		if base, err = baseOf(ctx, top, revs); err != nil {
			return "", "", err
		}
		return base, h().commit, h().err
	}
	out, err := runGit(ctx, top, "rev-parse", bs+"^{commit}", headSpec(revs)+"^{commit}", "--")
	if f := strings.Fields(string(out)); err == nil && len(f) == 3 && f[2] == "--" { // the -- is echoed
		return f[0], f[1], nil
	}
	// One at a time, the error says which end git could not resolve.
	if base, err = baseOf(ctx, top, revs); err != nil {
		return "", "", err
	}
	head, err = headOf(ctx, top, revs)
	return base, head, err
}

// rangeEnd is one end of a range, resolved.
type rangeEnd struct {
	commit string
	err    error
}

// resolvedRange is what Diff learns of a range while git diffs: its ends,
// and the listing at its base that DiffOptions.BaseDirs asked for.
type resolvedRange struct {
	base, head string
	err        error
	atBase     *baseListing
}

// HeadOf is the commit of the new side of a diff of rng (as DiffOptions
// takes it): see Material.Head.
func HeadOf(ctx context.Context, dir, rng string) (string, error) {
	revs := strings.Fields(rng)
	for _, r := range revs {
		if strings.HasPrefix(r, "-") {
			return "", fmt.Errorf("%w %q: %q looks like an option, not a revision", ErrBadRange, rng, r)
		}
	}
	return headOf(ctx, dir, revs)
}

// Resolve is the full object id of the commit rev names.
func Resolve(ctx context.Context, dir, rev string) (string, error) {
	if strings.HasPrefix(rev, "-") {
		return "", fmt.Errorf("%w %q: it looks like an option, not a revision", ErrBadRange, rev)
	}
	out, err := runGit(ctx, dir, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("%s is not a commit: %w", rev, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// ChangedPaths lists the paths (relative to the top, forward slashes) a
// diff of rng changes, without reading the changes: a re-review limits its
// smaller diff to the files of the whole change with them.
func ChangedPaths(ctx context.Context, dir, rng string) ([]string, error) {
	revs := strings.Fields(rng)
	for _, r := range revs {
		if strings.HasPrefix(r, "-") {
			return nil, fmt.Errorf("%w %q: %q looks like an option, not a revision", ErrBadRange, rng, r)
		}
	}
	if len(revs) == 0 {
		revs = []string{"HEAD"}
	}
	args := append([]string{"diff", "--name-only", "-z", "--no-renames"}, submoduleArgs...)
	out, err := runGit(ctx, dir, append(append(args, revs...), "--")...)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// IsAncestor reports whether commit a is an ancestor of commit b (or b
// itself).
func IsAncestor(ctx context.Context, dir, a, b string) bool {
	_, err := runGit(ctx, dir, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

// baseOf is the commit a diff of the range revs compares against: HEAD
// for the working tree or the index, A for A..B, the merge base for A...B,
// R^ for R^!, and the first of two revisions, or the one revision compared
// with the working tree.
func baseOf(ctx context.Context, top string, revs []string) (string, error) {
	spec := baseSpec(revs)
	if spec == "" {
		a, b, _ := strings.Cut(revs[0], "...")
		out, err := runGit(ctx, top, "merge-base", cmp.Or(a, "HEAD"), cmp.Or(b, "HEAD"))
		if err != nil {
			return "", fmt.Errorf("the base of %s: %w", revs[0], err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	out, err := runGit(ctx, top, "rev-parse", "--verify", "--quiet", spec+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("the base of the diff, %s: %w", spec, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// baseSpec names the commit baseOf resolves: "" for A...B, whose base is
// the merge base of A and B.
func baseSpec(revs []string) string {
	switch {
	case len(revs) == 0:
		return "HEAD"
	case len(revs) == 2:
		return revs[0]
	case strings.Contains(revs[0], "..."):
		return ""
	case strings.Contains(revs[0], ".."):
		a, _, _ := strings.Cut(revs[0], "..")
		return cmp.Or(a, "HEAD")
	case strings.HasSuffix(revs[0], "^!"):
		return strings.TrimSuffix(revs[0], "^!") + "^"
	}
	return revs[0]
}

// AtBase reads the file at path (relative to the top of the work tree,
// with forward slashes) as the commit base has it; ok is false when the
// file is not there.
func AtBase(ctx context.Context, top, base, path string) (data []byte, ok bool, err error) {
	if base == "" {
		return nil, false, nil
	}
	obj := base + ":" + path
	if _, err := runGit(ctx, top, "cat-file", "-e", obj); err != nil {
		var ge *gitError
		if errors.As(err, &ge) {
			return nil, false, nil
		}
		return nil, false, err
	}
	out, err := runGit(ctx, top, "cat-file", "blob", obj)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// ReadAtBase reads the files at paths (relative to the top of the work
// tree, with forward slashes) as the commit m.Base has them, with one git
// process for them all; a file the base does not have, or has as no
// file, is left out.
func (m *Material) ReadAtBase(ctx context.Context, paths []string) (map[string][]byte, error) {
	if m.Base == "" || len(paths) == 0 {
		return map[string][]byte{}, nil
	}
	var names, odd []string
	for _, p := range paths {
		if strings.ContainsAny(p, "\n\r") {
			odd = append(odd, p) // cat-file --batch reads names by the line
			continue
		}
		names = append(names, m.Base+":"+p)
	}
	blobs, err := catObjects(ctx, m.Top, names, -1)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(paths))
	for name, b := range blobs {
		out[name[len(m.Base)+1:]] = b
	}
	for _, p := range odd {
		b, ok, err := AtBase(ctx, m.Top, m.Base, p)
		if err != nil {
			return nil, err
		}
		if ok {
			out[p] = b
		}
	}
	return out, nil
}

// baseListing is a listing of the files under some directories at a
// commit, started before anyone asks for it.
type baseListing struct {
	base  string
	asked []string // the directories, as DiffOptions.BaseDirs named them
	done  chan struct{}
	files []string
	err   error
}

// listAtBase starts listing the files under dirs (named as
// DiffOptions.BaseDirs names them) in the commit base.
func listAtBase(ctx context.Context, top, base string, dirs []string) *baseListing {
	l := &baseListing{base: base, asked: dirs, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		l.files, l.err = filesUnder(ctx, top, base, dirs)
	}()
	return l
}

// listedEmpty is a listing of no file, known without git.
func listedEmpty(base string, dirs []string) *baseListing {
	l := &baseListing{base: base, asked: dirs, done: make(chan struct{})}
	close(l.done)
	return l
}

// absentDirs returns dirs (named as DiffOptions.BaseDirs names them)
// relative to top when none of them is in the work tree: a working tree
// without them, compared with HEAD, shows every file HEAD has under them
// as deleted, so the diff says whether listing HEAD's is worth a git
// process (mentionsDirs). It returns nil when one is there, may be, or
// has a name git quotes in a diff.
func absentDirs(top string, dirs []string) []string {
	rel := excludePaths(top, dirs)
	if len(rel) == 0 {
		return nil
	}
	for _, r := range rel {
		if strings.ContainsFunc(r, func(c rune) bool { return c < 0x20 || c == 0x7f || c == '"' || c == '\\' }) {
			return nil
		}
		if _, err := os.Lstat(filepath.Join(top, filepath.FromSlash(r))); !errors.Is(err, fs.ErrNotExist) {
			return nil
		}
	}
	return rel
}

// mentionsDirs reports whether git's diff output names a path under one
// of dirs (relative to the top), or holds their names anywhere else.
func mentionsDirs(out []byte, dirs []string) bool {
	for _, d := range dirs {
		if bytes.Contains(out, []byte(d+"/")) {
			return true
		}
	}
	return false
}

// filesUnder lists the files in the commit base under dirs, named as
// DiffOptions.BaseDirs names them. A directory outside the work tree, or
// the top of the work tree itself, holds none.
func filesUnder(ctx context.Context, top, base string, dirs []string) ([]string, error) {
	rel := excludePaths(top, dirs)
	if len(rel) == 0 {
		return nil, nil
	}
	return FilesAtBase(ctx, top, base, rel...)
}

// FilesAtBase lists the files, relative to the top of the work tree with
// forward slashes, that the commit m.Base has under the directories dirs.
// They are named as DiffOptions.BaseDirs names them: absolute, or
// relative to the top; one outside the work tree holds none. The listing
// DiffOptions.BaseDirs asked for, when dirs are those, was started while
// the diff was taken, and is waited for.
func (m *Material) FilesAtBase(ctx context.Context, dirs ...string) ([]string, error) {
	if l := m.atBase; l != nil && l.base == m.Base && slices.Equal(l.asked, dirs) {
		select {
		case <-l.done:
			return slices.Clone(l.files), l.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return filesUnder(ctx, m.Top, m.Base, dirs)
}

// FilesAtBase lists the files under the directories dirs (relative to the
// top, forward slashes) in the commit base.
func FilesAtBase(ctx context.Context, top, base string, dirs ...string) ([]string, error) {
	if base == "" {
		return nil, nil
	}
	out, err := runGit(ctx, top, append([]string{"ls-tree", "-r", "--name-only", "-z", base, "--"}, dirs...)...)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}

// isCombined reports whether git diff printed a combined diff, the format
// it uses to compare a merge commit with all its parents at once.
func isCombined(out []byte) bool {
	for _, h := range []string{"diff --cc ", "diff --combined "} {
		if bytes.HasPrefix(out, []byte(h)) || bytes.Contains(out, []byte("\n"+h)) {
			return true
		}
	}
	return false
}

// isMergeBang reports whether revs is one revision "M^!" that names a
// merge commit.
func isMergeBang(ctx context.Context, dir string, revs []string) bool {
	if len(revs) != 1 || !strings.HasSuffix(revs[0], "^!") {
		return false
	}
	_, err := runGit(ctx, dir, "rev-parse", "--verify", "--quiet", strings.TrimSuffix(revs[0], "^!")+"^2")
	return err == nil
}

// combinedDiffError says why a range that makes git print a combined diff
// cannot be reviewed, and which range to give instead.
func combinedDiffError(rng string, revs []string) error {
	merge := "M"
	switch {
	case len(revs) == 1 && strings.HasSuffix(revs[0], "^!"):
		merge = strings.TrimSuffix(revs[0], "^!")
	case len(revs) > 2:
		merge = revs[0]
	}
	return fmt.Errorf("%w: %q compares a merge commit with all its parents at once, and a review needs one base; "+
		"review what the merge brought in against its first parent, --diff %s^1..%s, or give two revisions", ErrCombinedDiff, rng, merge, merge)
}

// emptyTreeID returns the id of the empty tree in the repository's object
// format (SHA-1 or SHA-256).
func emptyTreeID(ctx context.Context, top string) string {
	cmd, err := gitCmd(ctx, top, "hash-object", "-t", "tree", "--stdin")
	if err != nil {
		return emptyTree
	}
	cmd.Stdin = strings.NewReader("")
	var out bytes.Buffer
	cmd.Stdout = &out
	if runGitIn(cmd, top) == nil {
		if id := strings.TrimSpace(out.String()); id != "" {
			return id
		}
	}
	return emptyTree
}

// attributesFile returns the path of a file holding funcnameAttributes and
// a function that removes it if it is temporary. The file is kept in the
// user cache directory under a name derived from its content, so a run
// normally finds it there and writes nothing.
func attributesFile() (string, func()) {
	sum := sha256.Sum256([]byte(funcnameAttributes))
	if dir, err := os.UserCacheDir(); err == nil {
		path := filepath.Join(dir, "sot", "funcname-"+hex.EncodeToString(sum[:6])+".gitattributes")
		if b, err := os.ReadFile(path); err == nil && string(b) == funcnameAttributes {
			return path, func() {}
		}
		// Written under a temporary name and renamed, so a concurrent run
		// never reads half of it.
		if os.MkdirAll(filepath.Dir(path), 0o700) == nil {
			if tmp, err := writeTemp(filepath.Dir(path), "funcname-*.tmp"); err == nil {
				if os.Rename(tmp, path) == nil {
					return path, func() {}
				}
				os.Remove(tmp)
			}
		}
	}
	tmp, err := writeTemp("", "sot-attributes-*")
	if err != nil {
		return "", func() {} // git's default hunk headers
	}
	return tmp, func() { os.Remove(tmp) }
}

// writeTemp writes funcnameAttributes to a new temporary file in dir and
// returns its name.
func writeTemp(dir, pattern string) (string, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	_, werr := f.WriteString(funcnameAttributes)
	if cerr := f.Close(); werr != nil || cerr != nil {
		os.Remove(f.Name())
		return "", errors.Join(werr, cerr)
	}
	return f.Name(), nil
}

// excludePaths turns DiffOptions.Exclude into slash-separated paths
// relative to top, dropping those outside the work tree and top itself.
func excludePaths(top string, paths []string) []string {
	var out []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		rel := filepath.Clean(p)
		if filepath.IsAbs(rel) {
			var ok bool
			if rel, ok = relativeTo(top, rel); !ok {
				continue
			}
		}
		rel = filepath.ToSlash(rel)
		if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		out = append(out, rel)
	}
	return out
}

// relativeTo returns the absolute path p relative to the directory top, if
// p lies inside it. Either may be reached through symbolic links (git
// reports top with them resolved; /tmp is a link on macOS), so the paths
// are compared resolved when they do not match as given.
func relativeTo(top, p string) (string, bool) {
	if rel, ok := project.Within(top, p); ok {
		return rel, true
	}
	return project.Within(resolvePath(top), resolvePath(p))
}

// resolvePath resolves the symbolic links of p's longest existing leading
// directories: an excluded output file or directory may not exist yet.
func resolvePath(p string) string {
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// differ builds the Material of one Diff call.
type differ struct {
	dir      string // where git diffs (DiffOptions.Dir)
	top      string
	revArgs  []string
	worktree bool // the new side of the diff is the working tree
	max      int
	attrFile string
	exclude  []string // paths relative to top, from DiffOptions.Exclude
	only     []string // paths relative to top, from DiffOptions.Only
	m        *Material
}

// excluded reports whether the path p, relative to the top of the work
// tree, is or lies under one of the excluded paths.
func (d *differ) excluded(p string) bool {
	if len(d.only) > 0 && !under(p, d.only) {
		return true
	}
	return under(p, d.exclude)
}

// under reports whether the slash path p is or lies under one of paths.
func under(p string, paths []string) bool {
	for _, e := range paths {
		if p == e || (strings.HasPrefix(p, e) && p[len(e)] == '/') {
			return true
		}
	}
	return false
}

// args returns the git diff command line with the given context option
// and optional path specs.
func (d *differ) args(context string, paths ...string) []string {
	a := []string{"-c", "core.quotepath=off", "-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false", "-c", "diff.relative=false"}
	if d.attrFile != "" {
		a = append(a, "-c", "core.attributesFile="+d.attrFile)
	}
	a = append(a, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--find-renames", "--full-index",
		"--src-prefix=a/", "--dst-prefix=b/", context)
	a = append(a, submoduleArgs...)
	a = append(a, d.revArgs...)
	a = append(a, "--")
	for _, p := range paths {
		a = append(a, ":(literal)"+p)
	}
	return a
}

// submoduleArgs keep a diff out of the repository's submodules. To tell
// whether a submodule's work tree is dirty, git runs git status inside it,
// under the submodule's own configuration, which can define a filter
// driver sot never listed, and git status runs it; diff.submodule=diff has
// git diff the submodule's commits in the same way. A review shows a
// submodule as the commit it moved to, as git diff does by default.
var submoduleArgs = []string{"--ignore-submodules=dirty", "--submodule=short"}

// fileDiff is one file's part of a git diff.
type fileDiff struct {
	oldPath, newPath string
	status           string
	binary           bool
	oldMode, newMode string
	oldOID, newOID   string
	hunks            []*diff.Hunk
	size             int   // bytes of the file's diff
	err              error // the diff could not be parsed
}

// path is the file's path in the material: the new path, or the old one
// for a deletion.
func (fd *fileDiff) path() string {
	if fd.status == StatusDeleted {
		return fd.oldPath
	}
	return fd.newPath
}

// parseDiff parses git's output: the files it shows that are neither
// excluded nor skipped (the skipped ones are noted).
func (d *differ) parseDiff(out []byte) []*fileDiff {
	segs := splitSegments(out)
	parsed := make([]*fileDiff, len(segs))
	parallel.For(len(segs), func(i int) { parsed[i] = parseSegment(segs[i]) })
	var fds []*fileDiff
	for _, fd := range parsed {
		if d.excluded(fd.path()) {
			continue
		}
		if reason := d.skipReason(fd); reason != "" {
			d.m.Skipped = append(d.m.Skipped, Skipped{Path: fd.path(), Reason: reason})
			continue
		}
		fds = append(fds, fd)
	}
	return fds
}

// linguist returns the skip reason the linguist attributes give each of
// paths (relative to the top) that has one, with one git check-attr for
// them all, and none when no attribute file could set them (see
// attrSources.linguistMayApply).
func (d *differ) linguist(ctx context.Context, paths []string, repo repoInfo, diffOut []byte) (map[string]string, error) {
	c, err := d.config(ctx)
	if err != nil {
		return nil, err
	}
	s := attrSources{top: d.top, commonDir: repo.common, config: c}
	if !s.linguistMayApply(paths, diffOut) {
		return nil, nil
	}
	return linguistReasons(ctx, d.top, paths)
}

// config is the repository's configuration, which the diff has read.
func (d *differ) config(ctx context.Context) (gitConfig, error) { return repoConfig(ctx, d.dir) }

// addDiff adds the files of the diff parseDiff kept, given the skip
// reasons their linguist attributes give.
func (d *differ) addDiff(ctx context.Context, fds []*fileDiff, attrs map[string]string) error {
	fds = slices.DeleteFunc(fds, func(fd *fileDiff) bool {
		if r := attrs[fd.path()]; r != "" {
			d.m.Skipped = append(d.m.Skipped, Skipped{Path: fd.path(), Reason: r})
			return true
		}
		return false
	})
	creds, err := d.credentialFiles(ctx, fds)
	if err != nil {
		return err
	}
	fds = slices.DeleteFunc(fds, func(fd *fileDiff) bool {
		if r := creds[fd]; r != "" {
			d.m.Skipped = append(d.m.Skipped, Skipped{Path: fd.path(), Reason: r})
			return true
		}
		return false
	})
	generated, err := d.generated(ctx, fds)
	if err != nil {
		return err
	}
	var kept []*fileDiff
	for _, fd := range fds {
		if generated[fd] {
			d.m.Skipped = append(d.m.Skipped, Skipped{Path: fd.path(), Reason: reasonGenerated})
			continue
		}
		kept = append(kept, fd)
	}
	files := make([]File, len(kept))
	parallel.For(len(kept), func(i int) { files[i] = renderFileDiff(kept[i], "") })
	// Only a file longer in bytes than the limit can be over it in tokens
	// (a token is at least one byte), so small files are not tokenized.
	var big []int
	for i, fd := range kept {
		if len(files[i].Text) > functionContextTokens && narrowable(fd, files[i]) {
			big = append(big, i)
		}
	}
	counts := countAll(len(big), func(k int) string { return files[big[k]].Text })
	for k, i := range big {
		files[i].Tokens = counts[k]
		if counts[k] > functionContextTokens {
			if f2, ok := d.narrow(ctx, kept[i]); ok {
				files[i] = f2
			}
		}
	}
	d.m.Files = append(d.m.Files, files...)
	return nil
}

// narrowable reports whether a file's diff shows enough unchanged lines
// (at least a quarter) for a diff with less context to be much smaller.
func narrowable(fd *fileDiff, f File) bool {
	if fd.status != StatusModified && fd.status != StatusRenamed && fd.status != StatusCopied {
		return false
	}
	shown := 0
	for _, r := range f.Shown {
		shown += r.End - r.Start + 1
	}
	context := shown - f.Additions
	return 4*context >= shown+f.Deletions
}

// narrow re-reads one file's diff with eight lines of context instead of
// whole functions.
func (d *differ) narrow(ctx context.Context, fd *fileDiff) (File, bool) {
	paths := []string{fd.newPath}
	if fd.oldPath != fd.newPath {
		paths = append(paths, fd.oldPath)
	}
	out, err := runGit(ctx, d.top, d.args("-U8", paths...)...)
	if err != nil {
		return File{}, false
	}
	for _, seg := range splitSegments(out) {
		nfd := parseSegment(seg)
		if nfd.err == nil && nfd.newPath == fd.newPath && nfd.oldPath == fd.oldPath {
			note := fmt.Sprintf("context: 8 lines around each change (whole functions would exceed %d tokens)", functionContextTokens)
			return renderFileDiff(nfd, note), true
		}
	}
	return File{}, false
}

// skipReason returns why a file of the diff is not reviewed, or "".
func (d *differ) skipReason(fd *fileDiff) string {
	if r := pathSkipReason(fd.path()); r != "" {
		return r
	}
	// A credentials file renamed or copied to an innocent name still
	// holds the credentials.
	if fd.oldPath != fd.path() && isSecretName(fd.oldPath) {
		return reasonSecret
	}
	if fd.binary {
		return reasonBinary
	}
	if fd.err != nil {
		return "diff could not be parsed: " + fd.err.Error()
	}
	if fd.size > d.max && fd.status != StatusDeleted {
		return fmt.Sprintf("diff of %d bytes exceeds the %s limit", fd.size, sizeLimit(d.max))
	}
	for _, h := range fd.hunks {
		if !utf8.Valid(h.Body) {
			return reasonNotUTF8
		}
	}
	// Every line the diff would show is checked, removed and context lines
	// too: a key that is being deleted is still a key.
	var shown []byte
	for _, h := range fd.hunks {
		shown = append(shown, h.Body...)
		if len(shown) > 0 && shown[len(shown)-1] != '\n' {
			shown = append(shown, '\n')
		}
	}
	return credentialContent(fd.path(), shown, true)
}

// credentialFiles reads whole each file whose diff hints at credentials
// that the lines it shows do not prove (see credentialHint), and returns
// why each of them that does hold some is never sent. The new side is read
// (the old one for a deleted file), from git's objects or, for a
// working-tree diff, from disk.
func (d *differ) credentialFiles(ctx context.Context, fds []*fileDiff) (map[*fileDiff]string, error) {
	reasons := make(map[*fileDiff]string)
	var need []*fileDiff
	var oids []string
	for _, fd := range fds {
		var shown []byte
		for _, h := range fd.hunks {
			shown = append(shown, h.Body...)
		}
		if !credentialHint(fd.path(), shown) {
			continue
		}
		need = append(need, fd)
		if oid := fd.sideOID(); oid != "" {
			oids = append(oids, oid)
		}
	}
	if len(need) == 0 {
		return reasons, nil
	}
	blobs, err := catObjects(ctx, d.top, oids, d.max)
	if err != nil {
		return nil, err
	}
	for _, fd := range need {
		data, ok := blobs[fd.sideOID()]
		if !ok && d.worktree && fd.status != StatusDeleted {
			data, ok = readLimited(filepath.Join(d.top, filepath.FromSlash(fd.newPath)), d.max)
		}
		if ok {
			reasons[fd] = credentialContent(fd.path(), normalize(data), false)
		}
	}
	return reasons, nil
}

// sideOID is the blob of the side of the file the material shows: the old
// one for a deletion, the new one otherwise; "" when git named none.
func (fd *fileDiff) sideOID() string {
	oid := fd.newOID
	if fd.status == StatusDeleted {
		oid = fd.oldOID
	}
	if strings.Trim(oid, "0") == "" {
		return ""
	}
	return oid
}

// readLimited reads up to max bytes of the file name.
func readLimited(name string, max int) ([]byte, bool) {
	f, err := os.Open(name)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(max)))
	return b, err == nil
}

// generated finds the files whose first lines mark them as generated. The
// first lines come from the diff when its first hunk starts at line 1,
// otherwise from the new blob (one git cat-file for all files) or, for a
// working-tree diff, from the file on disk.
func (d *differ) generated(ctx context.Context, fds []*fileDiff) (map[*fileDiff]bool, error) {
	gen := make(map[*fileDiff]bool)
	var need []*fileDiff
	var oids []string
	for _, fd := range fds {
		if head, ok := diffHead(fd); ok {
			gen[fd] = generatedHeader(head)
			continue
		}
		if len(fd.hunks) == 0 {
			continue // a pure rename or mode change: nothing is shown anyway
		}
		need = append(need, fd)
		if fd.newOID != "" && strings.Trim(fd.newOID, "0") != "" {
			oids = append(oids, fd.newOID)
		}
	}
	if len(need) == 0 {
		return gen, nil
	}
	heads, err := blobHeads(ctx, d.top, oids, 5)
	if err != nil {
		return nil, err
	}
	for _, fd := range need {
		head, ok := heads[fd.newOID]
		if !ok && d.worktree {
			head, ok = fileHead(filepath.Join(d.top, filepath.FromSlash(fd.newPath)), 5)
		}
		if ok {
			gen[fd] = generatedHeader(head)
		}
	}
	return gen, nil
}

// diffHead returns the first lines of the file from its diff, when the
// first hunk starts at the first line: the old side for a deletion, the new
// side otherwise.
func diffHead(fd *fileDiff) ([]string, bool) {
	if len(fd.hunks) == 0 {
		return nil, false
	}
	h := fd.hunks[0]
	skip := byte(markRemoved)
	if fd.status == StatusDeleted {
		if h.OrigStartLine > 1 {
			return nil, false
		}
		skip = markAdded
	} else if h.NewStartLine > 1 {
		return nil, false
	}
	var head []string
	for line := range bodyLines(h.Body) {
		if len(head) == 5 {
			break
		}
		if line != "" && line[0] == skip {
			continue
		}
		if line != "" {
			line = strings.TrimSuffix(line[1:], "\r")
		}
		head = append(head, line)
	}
	return head, true
}

// fileHead reads the first n lines of a file.
func fileHead(name string, n int) ([]string, bool) {
	f, err := os.Open(name)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	buf := make([]byte, 4096)
	k, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, false
	}
	return headLines(buf[:k], n), true
}

// splitSegments splits git diff output into one segment per file, at the
// "diff --git " lines. Hunk lines always start with ' ', '+', '-' or '\',
// so such a line can only be a file header.
func splitSegments(out []byte) [][]byte {
	var segs [][]byte
	marker := []byte("\ndiff --git ")
	start := 0
	if !bytes.HasPrefix(out, marker[1:]) {
		i := bytes.Index(out, marker)
		if i < 0 {
			return nil
		}
		start = i + 1
	}
	for start < len(out) {
		i := bytes.Index(out[start+1:], marker)
		if i < 0 {
			segs = append(segs, out[start:])
			break
		}
		end := start + 1 + i + 1
		segs = append(segs, out[start:end])
		start = end
	}
	return segs
}

// parseSegment parses one file's diff with go-diff and interprets git's
// extended headers (new, deleted, renamed and copied files, mode changes,
// binary files).
func parseSegment(seg []byte) *fileDiff {
	fd := &fileDiff{size: len(seg), status: StatusModified}
	// Carriage returns are kept, so that a change of line endings can be
	// told; renderFileDiff removes them from the rendered lines.
	pd, err := diff.ParseFileDiffOptions(seg, diff.ParseOptions{KeepCR: true})
	var ext []string
	if pd != nil {
		ext = pd.Extended
		fd.hunks = pd.Hunks
		fd.oldPath = stripPrefix(pd.OrigName, "a/")
		fd.newPath = stripPrefix(pd.NewName, "b/")
	} else {
		// go-diff does not know every combination of extended headers
		// without hunks (e.g. a binary file with a mode change); read the
		// headers directly.
		for _, l := range splitLines(string(seg)) {
			if strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "@@ ") {
				fd.err = err
				break
			}
			ext = append(ext, l)
		}
	}
	for _, l := range ext {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			if fd.oldPath == "" && fd.newPath == "" {
				fd.oldPath, fd.newPath = gitArgsPaths(strings.TrimPrefix(l, "diff --git "))
			}
		case strings.HasPrefix(l, "new file mode "):
			fd.status = StatusAdded
			fd.newMode = strings.TrimPrefix(l, "new file mode ")
		case strings.HasPrefix(l, "deleted file mode "):
			fd.status = StatusDeleted
			fd.oldMode = strings.TrimPrefix(l, "deleted file mode ")
		case strings.HasPrefix(l, "old mode "):
			fd.oldMode = strings.TrimPrefix(l, "old mode ")
		case strings.HasPrefix(l, "new mode "):
			fd.newMode = strings.TrimPrefix(l, "new mode ")
		case strings.HasPrefix(l, "rename from "):
			fd.status, fd.oldPath = StatusRenamed, unquote(strings.TrimPrefix(l, "rename from "))
		case strings.HasPrefix(l, "rename to "):
			fd.newPath = unquote(strings.TrimPrefix(l, "rename to "))
		case strings.HasPrefix(l, "copy from "):
			fd.status, fd.oldPath = StatusCopied, unquote(strings.TrimPrefix(l, "copy from "))
		case strings.HasPrefix(l, "copy to "):
			fd.newPath = unquote(strings.TrimPrefix(l, "copy to "))
		case strings.HasPrefix(l, "index "):
			ids, _, _ := strings.Cut(strings.TrimPrefix(l, "index "), " ")
			fd.oldOID, fd.newOID, _ = strings.Cut(ids, "..")
		case strings.HasPrefix(l, "Binary files ") || l == "GIT binary patch":
			fd.binary = true
		}
	}
	// go-diff spells the missing side of an added or deleted file /dev/null.
	if fd.oldPath == "/dev/null" || fd.oldPath == "dev/null" {
		fd.oldPath = ""
		if fd.status == StatusModified {
			fd.status = StatusAdded
		}
	}
	if fd.newPath == "/dev/null" || fd.newPath == "dev/null" {
		fd.newPath = ""
		if fd.status == StatusModified {
			fd.status = StatusDeleted
		}
	}
	if fd.status == StatusAdded && fd.newPath == "" {
		fd.newPath = fd.oldPath
	}
	if fd.status == StatusDeleted && fd.oldPath == "" {
		fd.oldPath = fd.newPath
	}
	if fd.newPath == "" {
		fd.newPath = fd.oldPath
	}
	if fd.oldPath == "" {
		fd.oldPath = fd.newPath
	}
	return fd
}

// gitArgsPaths extracts the two paths of a "diff --git a/X b/Y" line. With
// unquoted names containing spaces the line is ambiguous; the common case
// of equal names is resolved, otherwise the split is at " b/".
func gitArgsPaths(s string) (string, string) {
	if strings.HasPrefix(s, `"`) || strings.HasSuffix(s, `"`) {
		if a, b, ok := splitQuoted(s); ok {
			return stripPrefix(a, "a/"), stripPrefix(b, "b/")
		}
	}
	if n := len(s); n%2 == 1 {
		a, b := s[:n/2], s[n/2+1:]
		if strings.HasPrefix(a, "a/") && strings.HasPrefix(b, "b/") && a[2:] == b[2:] {
			return a[2:], b[2:]
		}
	}
	if i := strings.Index(s, " b/"); i > 0 {
		return stripPrefix(s[:i], "a/"), s[i+3:]
	}
	return s, s
}

// splitQuoted splits two space-separated names, either of them quoted.
func splitQuoted(s string) (string, string, bool) {
	var names []string
	for s != "" && len(names) < 2 {
		if s[0] == '"' {
			end := 1
			for end < len(s) && s[end] != '"' {
				if s[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(s) {
				return "", "", false
			}
			names = append(names, unquote(s[:end+1]))
			s = strings.TrimPrefix(s[end+1:], " ")
		} else {
			i := strings.IndexByte(s, ' ')
			if i < 0 || len(names) == 1 {
				names = append(names, s)
				s = ""
			} else {
				names = append(names, s[:i])
				s = s[i+1:]
			}
		}
	}
	if len(names) != 2 || s != "" {
		return "", "", false
	}
	return names[0], names[1], true
}

// unquote decodes a name git quoted C-style ("a\tb", octal escapes).
func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}

func stripPrefix(s, prefix string) string {
	if s == "/dev/null" {
		return s
	}
	return strings.TrimPrefix(s, prefix)
}

// bodyLines yields the lines of a hunk body.
func bodyLines(body []byte) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for len(body) > 0 {
			i := bytes.IndexByte(body, '\n')
			var line []byte
			if i < 0 {
				line, body = body, nil
			} else {
				line, body = body[:i], body[i+1:]
			}
			if !yield(string(line)) {
				return
			}
		}
	}
}

// renderFileDiff renders one file of a diff. note, if set, is added below
// the header. The caller counts the tokens.
func renderFileDiff(fd *fileDiff, note string) File {
	f := File{Path: fd.path(), Status: fd.status, Language: Language(fd.path())}
	if fd.status == StatusRenamed || fd.status == StatusCopied {
		f.OldPath = fd.oldPath
	}
	for _, h := range fd.hunks {
		for line := range bodyLines(h.Body) {
			if line == "" {
				continue
			}
			switch line[0] {
			case '+':
				f.Additions++
			case '-':
				f.Deletions++
			}
		}
	}

	var b strings.Builder
	b.Grow(len(f.Path) + 64 + bodySize(fd.hunks))
	b.WriteString("## ")
	b.WriteString(headerName(f.Path))
	switch {
	case fd.status == StatusDeleted:
		fmt.Fprintf(&b, " (deleted, -%d)\n", f.Deletions)
	case (fd.status == StatusRenamed || fd.status == StatusCopied) && len(fd.hunks) == 0:
		fmt.Fprintf(&b, " (%s from %s, content unchanged)\n", fd.status, headerName(fd.oldPath))
	case fd.status == StatusAdded && len(fd.hunks) == 0:
		b.WriteString(" (added, empty file)\n")
	default:
		fmt.Fprintf(&b, " (%s, +%d -%d)\n", fd.status, f.Additions, f.Deletions)
		if fd.status == StatusRenamed || fd.status == StatusCopied {
			fmt.Fprintf(&b, "%s from %s\n", fd.status, headerName(fd.oldPath))
		}
	}
	if fd.oldMode != "" && fd.newMode != "" && fd.status != StatusAdded && fd.status != StatusDeleted {
		fmt.Fprintf(&b, "mode changed from %s to %s\n", fd.oldMode, fd.newMode)
	}
	var markCR bool
	if fd.status != StatusAdded && fd.status != StatusDeleted {
		var notes []string
		notes, markCR = scanEndings(fd.hunks).notes()
		for _, n := range notes {
			b.WriteString(n)
			b.WriteByte('\n')
		}
	}
	if note != "" {
		b.WriteString(note)
		b.WriteByte('\n')
	}

	if fd.status == StatusDeleted {
		renderDeleted(&b, fd, f.Deletions)
	} else {
		max := 0
		for _, h := range fd.hunks {
			max = int(h.NewStartLine + h.NewLines - 1)
		}
		w := newLineWriter(&b, numWidth(max))
		for _, h := range fd.hunks {
			b.WriteString("@@")
			if h.Section != "" {
				b.WriteByte(' ')
				b.WriteString(h.Section)
			}
			b.WriteByte('\n')
			n := int(h.NewStartLine)
			for line := range bodyLines(h.Body) {
				mark, text := byte(markContext), ""
				if line != "" {
					mark, text = line[0], strings.TrimPrefix(line[1:], "\ufeff")
				}
				if t, ok := strings.CutSuffix(text, "\r"); ok {
					text = t
					if markCR && mark != markContext {
						text += crMark
					}
				}
				switch mark {
				case '+':
					w.diffLine(markAdded, n, text)
					n++
				case '-':
					w.diffLine(markRemoved, 0, text)
				case '\\': // git's "\ No newline at end of file": go-diff drops it (see scanEndings)
				default:
					w.diffLine(markContext, n, text)
					n++
				}
			}
		}
		f.Changed, f.Shown = w.changed, w.shown
	}
	f.Text = b.String()
	return f
}

// renderDeleted writes the note and the first removed lines of a deleted
// file.
func renderDeleted(b *strings.Builder, fd *fileDiff, removed int) {
	fmt.Fprintf(b, "deleted file, %d lines removed", removed)
	if removed > deletedPreview {
		fmt.Fprintf(b, "; the first %d follow", deletedPreview)
	}
	b.WriteString(", numbered as in the old file\n")
	w := newLineWriter(b, numWidth(min(removed, deletedPreview)))
	shown := 0
	for _, h := range fd.hunks {
		n := int(h.OrigStartLine)
		for line := range bodyLines(h.Body) {
			if shown == deletedPreview {
				return
			}
			if line != "" && line[0] == '-' {
				w.oldLine(n, strings.TrimSuffix(line[1:], "\r"))
				n++
				shown++
			}
		}
	}
}

// crMark stands for a carriage return at the end of a changed line when a
// file's line endings are mixed (U+240D, SYMBOL FOR CARRIAGE RETURN).
const crMark = "\u240d"

// endings counts the line endings of the lines a file's diff shows, on the
// old side (context and removed lines) and the new side (context and added
// lines), and records which side's last line lacks a newline.
type endings struct {
	oldCRLF, oldLF, newCRLF, newLF int
	// oldNoEOL and newNoEOL are set when a removed or added line is the
	// last line of its side and has no newline. A context line without a
	// newline leaves the end of the file as it was and sets neither.
	oldNoEOL, newNoEOL bool
}

// scanEndings reads the line endings of hunks parsed with KeepCR. git
// follows a line without a newline with "\ No newline at end of file";
// go-diff records that for the old side in OrigNoNewlineAt (the offset
// just after that line in the body) and, for the new side or a context
// line, leaves the body without its final newline.
func scanEndings(hunks []*diff.Hunk) endings {
	var e endings
	for _, h := range hunks {
		body := h.Body
		for off := 0; off < len(body); {
			line, newline := body[off:], false
			if i := bytes.IndexByte(line, '\n'); i >= 0 {
				line, newline = line[:i], true
				off += i + 1
			} else {
				off = len(body)
			}
			if len(line) == 0 {
				continue
			}
			cr := len(line) > 1 && line[len(line)-1] == '\r'
			switch line[0] {
			case '-':
				switch {
				case h.OrigNoNewlineAt > 0 && off == int(h.OrigNoNewlineAt):
					e.oldNoEOL = true
				case cr:
					e.oldCRLF++
				default:
					e.oldLF++
				}
			case '+':
				switch {
				case !newline:
					e.newNoEOL = true
				case cr:
					e.newCRLF++
				default:
					e.newLF++
				}
			case ' ':
				switch {
				case !newline:
				case cr:
					e.oldCRLF++
					e.newCRLF++
				default:
					e.oldLF++
					e.newLF++
				}
			}
		}
	}
	return e
}

// endingKind names the line endings of one side: "CRLF", "LF", "mixed" or
// "" when the side shows no complete line.
func endingKind(crlf, lf int) string {
	switch {
	case crlf > 0 && lf > 0:
		return "mixed"
	case crlf > 0:
		return "CRLF"
	case lf > 0:
		return "LF"
	}
	return ""
}

// notes returns the note lines that make a change of line endings or of
// the final newline visible, since the rendered lines show neither. When a
// side mixes CRLF and LF, markCR is true: the changed lines that end in
// CRLF are then marked with crMark, as the note says.
func (e endings) notes() (notes []string, markCR bool) {
	old, cur := endingKind(e.oldCRLF, e.oldLF), endingKind(e.newCRLF, e.newLF)
	switch {
	case old == cur && old != "mixed", old == "" && cur != "mixed", cur == "" && old != "mixed":
		// The same endings on both sides, or one kind on the only side
		// shown: nothing to tell.
	case old != "mixed" && cur != "mixed":
		notes = append(notes, fmt.Sprintf("line endings changed from %s to %s", old, cur))
	default:
		describe := func(k string) string {
			if k == "mixed" {
				return "mixed CRLF and LF"
			}
			if k == "" {
				return "none shown"
			}
			return k
		}
		notes = append(notes, fmt.Sprintf("line endings: %s before, %s after; removed and added lines that end in CRLF are marked %s",
			describe(old), describe(cur), crMark))
		markCR = true
	}
	switch {
	case e.oldNoEOL && e.newNoEOL:
		notes = append(notes, "no newline at end of file (both sides)")
	case e.oldNoEOL:
		notes = append(notes, "no newline at end of file (old side)")
	case e.newNoEOL:
		notes = append(notes, "no newline at end of file (new side)")
	}
	return notes, markCR
}

func bodySize(hunks []*diff.Hunk) int {
	n := 0
	for _, h := range hunks {
		n += len(h.Body) + 32 + int(h.NewLines+h.OrigLines)*8
	}
	return n
}

// addUntracked adds untracked files (paths relative to the top) as added
// files, with the same skip rules as the diff. They are read at once.
func (d *differ) addUntracked(paths []string) {
	type result struct {
		f    File
		skip string // why the file is left out, or ""
		ok   bool   // f is reviewed
	}
	got := make([]result, len(paths))
	parallel.For(len(paths), func(i int) {
		f, skip, ok := readUntracked(d.top, d.max, paths[i])
		got[i] = result{f, skip, ok}
	})
	for i, r := range got {
		switch {
		case r.skip != "":
			d.m.Skipped = append(d.m.Skipped, Skipped{Path: paths[i], Reason: r.skip})
		case r.ok:
			d.m.Files = append(d.m.Files, r.f)
		}
	}
}

// readUntracked reads and renders the untracked file p (relative to top),
// of at most limit bytes. It returns why the file is left out instead, or
// ok false for what git would not track either (a socket, a pipe, a
// nested repository).
func readUntracked(top string, limit int, p string) (f File, skip string, ok bool) {
	if r := pathSkipReason(p); r != "" {
		return File{}, r, false
	}
	name := filepath.Join(top, filepath.FromSlash(p))
	fi, err := os.Lstat(name)
	if err != nil {
		return File{}, "could not be read: " + err.Error(), false
	}
	var data []byte
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		target, err := os.Readlink(name)
		if err != nil {
			return File{}, "could not be read: " + err.Error(), false
		}
		data = []byte(target)
	case !fi.Mode().IsRegular():
		return File{}, "", false // sockets, pipes, nested repositories: git does not track them either
	case fi.Size() > int64(limit):
		return File{}, fmt.Sprintf("file of %d bytes exceeds the %s limit", fi.Size(), sizeLimit(limit)), false
	default:
		data, err = os.ReadFile(name)
		if err != nil {
			return File{}, "could not be read: " + err.Error(), false
		}
	}
	if r := checkText(data); r != "" {
		return File{}, r, false
	}
	data = normalize(data)
	if r := credentialContent(p, data, false); r != "" {
		return File{}, r, false
	}
	if generatedHeader(headLines(data, 5)) {
		return File{}, reasonGenerated, false
	}
	// The file's bytes are read as the text rendered from them without a
	// copy: nothing changes them once read (a 50,000-line review's new
	// files are 3.8 MB of them).
	return renderAdded(p, unsafe.String(unsafe.SliceData(data), len(data))), "", true
}

// renderAdded renders a new file that git has not seen. The caller counts
// the tokens.
func renderAdded(p, content string) File {
	f := File{Path: p, Status: StatusAdded, Language: Language(p)}
	// The lines as splitLines cuts them, read one by one.
	content = strings.TrimSuffix(content, "\n")
	if content != "" {
		f.Additions = strings.Count(content, "\n") + 1
	}
	var b strings.Builder
	b.Grow(len(content) + f.Additions*10 + len(p) + 32)
	b.WriteString("## ")
	b.WriteString(headerName(p))
	if f.Additions == 0 {
		b.WriteString(" (added, empty file)\n")
	} else {
		fmt.Fprintf(&b, " (added, +%d -0)\n@@\n", f.Additions)
		w := newLineWriter(&b, numWidth(f.Additions))
		i := 0
		for l := range strings.SplitSeq(content, "\n") {
			i++
			w.diffLine(markAdded, i, l)
		}
		f.Changed, f.Shown = w.changed, w.shown
	}
	f.Text = b.String()
	return f
}

// NewSideLines counts the lines of the new side of paths (relative to the
// top of the work tree, slash-separated): the files in the work tree when
// worktree, else the blobs prefix+path names (":" for the index, "B:" for
// revision B), read with one git cat-file, which fetches nothing and runs
// nothing the repository chooses. A file that is not a regular one, that
// is larger than newSideLimit, or that cannot be read is left out.
func (m *Material) NewSideLines(ctx context.Context, prefix string, worktree bool, paths []string) map[string]int {
	if len(paths) == 0 || m.Top == "" {
		return nil
	}
	out := map[string]int{}
	if worktree {
		root, err := os.OpenRoot(m.Top)
		if err != nil {
			return nil
		}
		defer root.Close()
		for _, p := range paths {
			name := filepath.FromSlash(p)
			// Only a regular file: a link could lead anywhere, and a pipe
			// would never end.
			if fi, err := root.Lstat(name); err != nil || !fi.Mode().IsRegular() || fi.Size() > newSideLimit {
				continue
			}
			if b, err := plainfile.ReadIn(root, name); err == nil {
				out[p] = countLines(b)
			}
		}
		return out
	}
	var names []string
	for _, p := range paths {
		if !strings.ContainsAny(p, "\n\r") {
			names = append(names, prefix+p)
		}
	}
	blobs, err := catObjects(ctx, m.Top, names, newSideLimit+1)
	if err != nil {
		return out
	}
	for _, p := range paths {
		if b, ok := blobs[prefix+p]; ok && len(b) <= newSideLimit {
			out[p] = countLines(b)
		}
	}
	return out
}

// newSideLimit is the largest file NewSideLines counts the lines of.
const newSideLimit = 64 << 20

// countLines counts the lines of a file's content: a last line without a
// newline counts too.
func countLines(b []byte) int {
	n := bytes.Count(b, []byte("\n"))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}
