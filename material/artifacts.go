package material

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sotlabs/sot/internal/plainfile"
	"github.com/sotlabs/sot/internal/project"
)

// MaxArtifactBytes is the largest artifact file that is reviewed.
const MaxArtifactBytes = 1 << 20

// MaxFreeformBytes is the largest freeform input that is reviewed; larger
// input is split into chunks by Split, so the limit only guards memory.
const MaxFreeformBytes = 16 << 20

// vcsDirs are version-control directories, left out of directory walks
// without a note.
var vcsDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, ".jj": true}

// Artifacts reads files and directories (recursively, in sorted order) as
// documents under review. A file named explicitly that is binary, not UTF-8,
// empty or too large is an error; such a file found in a directory is
// listed in Skipped instead, as are hidden and vendored directories,
// generated and lock files. A file that looks like it holds credentials,
// by its name, the name of the file a symbolic link points to, or what it
// holds (see credentialContent), is listed in Skipped even when it is
// named explicitly: it is never sent to a model. A path named that leads
// through a symbolic link out of its project is an error wrapping
// ErrOutsideProject; such a link found in a directory is listed in Skipped
// and never read.
//
// Files are named relative to the top of the project they lie in, so that
// the material does not depend on the current directory: the top is the
// nearest directory, from the named path upwards, that holds .git, .sot or
// .paw. A path outside any project keeps the spelling it was given (made
// clean); so does a file whose project-relative path would be the same as
// that of a different file named from another project. Paths use forward
// slashes. Coordinates lists the named paths spelled the same way.
//
// Directories that hold sot's own output (a run.json next to a .gitignore
// that ignores everything) are left out of directory walks without a note.
func Artifacts(paths []string) (*Material, error) {
	return ArtifactsExcluding(paths, nil)
}

// ArtifactsExcluding is Artifacts that also leaves out the files and
// directories named in exclude, without listing them in Skipped, when it
// walks a directory: sot's own outputs, such as the review's output
// directory or a file that standard output is redirected to. An exclude
// path is absolute or relative to the current directory; a directory
// excludes everything below it, and a path that does not exist yet is
// accepted. Paths named in paths are always read, even when excluded or
// inside an excluded directory.
func ArtifactsExcluding(paths, exclude []string) (*Material, error) {
	return ArtifactsWith(paths, ArtifactOptions{Exclude: exclude})
}

// ArtifactOptions tune ArtifactsWith.
type ArtifactOptions struct {
	// Exclude is as for ArtifactsExcluding.
	Exclude []string
	// FollowSymlinks reads what a symbolic link out of the project points
	// to (--follow-symlinks), where it would otherwise be refused (a path
	// named) or skipped (a link found in a directory).
	FollowSymlinks bool
}

// ArtifactsWith is Artifacts with options.
func ArtifactsWith(paths []string, opts ArtifactOptions) (*Material, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: no artifacts given; name the files or directories to review", ErrEmpty)
	}
	a := &artifactSet{seen: make(map[string]bool), exclude: excludeSet(opts.Exclude), follow: opts.FollowSymlinks}
	var coords, named []string
	for _, p := range paths {
		given := filepath.Clean(p)
		fi, err := os.Stat(given)
		if err != nil {
			return nil, fmt.Errorf("artifact %s: %w", p, err)
		}
		abs, err := filepath.Abs(given)
		if err != nil {
			return nil, fmt.Errorf("artifact %s: %w", p, err)
		}
		top, inProject := projectTop(abs, fi.IsDir())
		if !inProject {
			top = ""
		}
		if link, target := project.LinkOutside(top, abs); link != "" && !opts.FollowSymlinks {
			return nil, fmt.Errorf("artifact %s: %w: %s points to %s, outside %s; sot does not follow links out of the project it reviews: name %s itself, or pass --follow-symlinks, if you mean to review it",
				p, ErrOutsideProject, link, target, top, target)
		}
		coords = append(coords, displayPath(top, abs, given))
		named = append(named, filepath.ToSlash(given))
		if fi.IsDir() {
			if err := a.walk(given, abs, top); err != nil {
				return nil, err
			}
			continue
		}
		if a.seen[abs] {
			continue
		}
		a.seen[abs] = true
		name := filepath.ToSlash(given)
		// A credentials file is not sent even when it is named: it is
		// listed as skipped, like one found in a directory. A link is
		// judged by what it points to.
		if isSecretName(name) || isSecretName(displayPath(top, abs, given)) || isSecretName(resolvedName(abs)) {
			a.skip(top, abs, given, reasonSecret)
			continue
		}
		data, err := readText(given, fi.Size(), MaxArtifactBytes)
		if err != nil {
			return nil, fmt.Errorf("artifact %s: %w", name, err)
		}
		if r := credentialContent(resolvedName(abs), data, false); r != "" {
			a.skip(top, abs, given, r)
			continue
		}
		a.add(top, abs, given, data)
	}
	m := a.material()
	if m.Empty() {
		return nil, fmt.Errorf("%w: no files found in %s; name directories that contain text files", ErrEmpty, strings.Join(named, ", "))
	}
	m.Coordinates = strings.Join(coords, ", ")
	maskFiles(m.Files)
	return m, nil
}

// artifactSet collects the documents of one Artifacts call. Files are
// rendered once every path is known, so that paths that would collide can
// fall back to their given spelling first.
type artifactSet struct {
	entries []artifactEntry
	seen    map[string]bool // absolute paths already read, skipped or walked past
	exclude []excludedPath
	follow  bool // read what links out of the project point to
}

// artifactEntry is one document read or skipped.
type artifactEntry struct {
	abs    string // absolute path, which identifies the file
	given  string // slash path as named, or as found below a named directory
	path   string // project-relative slash path, or given outside a project
	data   []byte // the text, for a document that is read
	reason string // the reason, for a path that is skipped
}

func (a *artifactSet) add(top, abs, given string, data []byte) {
	a.entries = append(a.entries, artifactEntry{abs: abs, given: filepath.ToSlash(given), path: displayPath(top, abs, given), data: data})
}

func (a *artifactSet) skip(top, abs, given, reason string) {
	a.entries = append(a.entries, artifactEntry{abs: abs, given: filepath.ToSlash(given), path: displayPath(top, abs, given), reason: reason})
}

// material renders the collected documents, sorted by path. Paths shared
// by different files (named from different projects) go back to the
// spelling they were given, which tells them apart.
func (a *artifactSet) material() *Material {
	owners := make(map[string]string)
	clash := make(map[string]bool)
	for _, e := range a.entries {
		if o, ok := owners[e.path]; ok && o != e.abs {
			clash[e.path] = true
		}
		owners[e.path] = e.abs
	}
	m := &Material{Type: TypeArtifacts}
	for _, e := range a.entries {
		p := e.path
		if clash[p] {
			p = e.given
		}
		if e.reason != "" {
			m.Skipped = append(m.Skipped, Skipped{Path: p, Reason: e.reason})
		} else {
			m.Files = append(m.Files, renderText(p, e.data))
		}
	}
	slices.SortStableFunc(m.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	slices.SortStableFunc(m.Skipped, func(a, b Skipped) int { return strings.Compare(a.Path, b.Path) })
	return m
}

// projectTop returns the top of the project holding the absolute path abs,
// starting from abs if it is a directory and from its parent otherwise. It
// reports false when there is none.
func projectTop(abs string, isDir bool) (string, bool) {
	if !isDir {
		abs = filepath.Dir(abs)
	}
	return project.Top(abs)
}

// displayPath names the absolute path abs relative to top with forward
// slashes, or returns given (cleaned, with forward slashes) when top is
// empty or does not contain abs.
func displayPath(top, abs, given string) string {
	if top != "" {
		if rel, ok := project.Within(top, abs); ok {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(filepath.Clean(given))
}

// reasonLinkOutside is why a symbolic link found in a directory is not
// read.
const reasonLinkOutside = "a symbolic link that points outside the project; never read"

// resolvedName returns abs with its symbolic links resolved, with forward
// slashes, or abs when it cannot be resolved.
func resolvedName(abs string) string {
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	return filepath.ToSlash(abs)
}

// excludedPath is a path to leave out of directory walks, as given (made
// absolute) and with its symbolic links resolved.
type excludedPath struct{ abs, resolved string }

// excludeSet makes the paths given to ArtifactsExcluding absolute.
func excludeSet(paths []string) []excludedPath {
	var out []excludedPath
	for _, p := range paths {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		out = append(out, excludedPath{abs: abs, resolved: resolvePath(abs)})
	}
	return out
}

// within reports whether the path p is dir or lies below it.
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(p, dir)
}

// isOutputDir reports whether dir is a sot output directory: one that holds
// run.json and a .gitignore that ignores everything in it.
func isOutputDir(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "run.json"))
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	ignore, err := plainfile.ReadOwn(filepath.Join(dir, ".gitignore"))
	return err == nil && bytes.Equal(ignore, []byte("*\n"))
}

// walk adds the text files under the named directory root to a; abs is
// root made absolute and top the top of its project, or "".
func (a *artifactSet) walk(root, abs, top string) error {
	// Only exclusions below the named directory apply: a named path is
	// always reviewed.
	resolvedRoot := resolvePath(abs)
	var exclude []excludedPath
	for _, e := range a.exclude {
		if (within(e.abs, abs) && e.abs != abs) || (within(e.resolved, resolvedRoot) && e.resolved != resolvedRoot) {
			exclude = append(exclude, e)
		}
	}
	excluded := func(rel string) bool {
		for _, e := range exclude {
			if within(filepath.Join(abs, rel), e.abs) || within(filepath.Join(resolvedRoot, rel), e.resolved) {
				return true
			}
		}
		return false
	}
	return filepath.WalkDir(root, func(name string, de fs.DirEntry, err error) error {
		rel, rerr := filepath.Rel(root, name)
		if rerr != nil {
			return rerr
		}
		fileAbs := filepath.Join(abs, rel)
		skip := func(reason string) {
			if !a.seen[fileAbs] {
				a.seen[fileAbs] = true
				a.skip(top, fileAbs, name, reason)
			}
		}
		if err != nil {
			if name == root {
				return fmt.Errorf("artifact %s: %w", filepath.ToSlash(name), err)
			}
			skip("could not be read: " + err.Error())
			if de != nil && de.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if name == root {
			return nil
		}
		if excluded(rel) {
			if de.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		base := de.Name()
		if de.IsDir() {
			switch {
			case vcsDirs[base], isOutputDir(name):
				return fs.SkipDir
			case strings.HasPrefix(base, "."):
				skip("hidden directory")
				return fs.SkipDir
			case slices.Contains(vendorDirs, base):
				skip(reasonVendored)
				return fs.SkipDir
			}
			return nil
		}
		if a.seen[fileAbs] {
			return nil
		}
		fi, err := os.Stat(name) // follows symbolic links to files
		if err != nil {
			skip("could not be read: " + err.Error())
			return nil
		}
		// A link is judged by what it points to, and never followed out
		// of the project.
		target := ""
		if de.Type()&fs.ModeSymlink != 0 {
			if link, _ := project.LinkOutside(top, fileAbs); link != "" && !a.follow {
				skip(reasonLinkOutside)
				return nil
			}
			target = resolvedName(fileAbs)
		}
		if !fi.Mode().IsRegular() {
			return nil // directories behind links (no cycles), devices, sockets
		}
		if strings.HasPrefix(base, ".") {
			skip("hidden file")
			return nil
		}
		// The path from the project top decides, whatever the current
		// directory; the path as found may add a credentials directory
		// above the project.
		r := pathSkipReason(displayPath(top, fileAbs, name))
		if r == "" && (isSecretName(filepath.ToSlash(name)) || target != "" && isSecretName(target)) {
			r = reasonSecret
		}
		if r != "" {
			skip(r)
			return nil
		}
		data, err := readText(name, fi.Size(), MaxArtifactBytes)
		if err != nil {
			skip(skipReasonOf(err))
			return nil
		}
		if r := credentialContent(cmp.Or(target, filepath.ToSlash(name)), data, false); r != "" {
			skip(r)
			return nil
		}
		if generatedHeader(headLines(data, 5)) {
			skip(reasonGenerated)
			return nil
		}
		a.seen[fileAbs] = true
		a.add(top, fileAbs, name, data)
		return nil
	})
}

// skipReasonOf turns an error of readText into a skip reason.
func skipReasonOf(err error) string {
	var tl *tooLargeError
	switch {
	case errors.Is(err, ErrBinary):
		return reasonBinary
	case errors.Is(err, ErrNotUTF8):
		return reasonNotUTF8
	case errors.Is(err, ErrEmpty):
		return "empty file"
	case errors.As(err, &tl):
		return fmt.Sprintf("file of %d bytes exceeds the %s limit", tl.size, sizeLimit(tl.max))
	}
	return "could not be read: " + err.Error()
}

// tooLargeError is an ErrTooLarge with the sizes.
type tooLargeError struct {
	size int64
	max  int
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("%s: %d bytes exceeds the %s limit for one file; split it or name a smaller part", ErrTooLarge, e.size, sizeLimit(e.max))
}

func (e *tooLargeError) Unwrap() error { return ErrTooLarge }

// readText reads a text file of the given size and normalises it.
func readText(name string, size int64, max int) ([]byte, error) {
	if size > int64(max) {
		return nil, &tooLargeError{size: size, max: max}
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return checkInput(data)
}

// checkInput rejects binary, non-UTF-8 and empty input and normalises the
// rest (no byte order mark, LF line endings).
func checkInput(data []byte) ([]byte, error) {
	switch checkText(data) {
	case reasonBinary:
		return nil, fmt.Errorf("%w (it contains NUL bytes); give a text file", ErrBinary)
	case reasonNotUTF8:
		return nil, fmt.Errorf("%w; convert it first, e.g. with iconv -t UTF-8", ErrNotUTF8)
	}
	data = normalize(data)
	if strings.TrimSpace(string(data)) == "" {
		return nil, fmt.Errorf("%w: the input is empty", ErrEmpty)
	}
	return data, nil
}

// Freeform reads one text from r under review. name is "stdin" or the path
// the text came from; it names the one file of the material. When r is an
// open directory (an *os.File, or any reader with a Stat method, that is a
// directory), the error wraps ErrNotAFile. A path that leads through a
// symbolic link out of its project is refused (ErrOutsideProject). A text
// that looks like credentials, by its name, the name of the file a link
// points to, or its content, is not sent: the material lists it as skipped
// and holds no file.
func Freeform(name string, r io.Reader) (*Material, error) {
	return FreeformWith(name, r, false)
}

// FreeformWith is Freeform that, with followSymlinks (--follow-symlinks),
// reads a path that leads through a symbolic link out of its project.
func FreeformWith(name string, r io.Reader, followSymlinks bool) (*Material, error) {
	if name == "" {
		name = "stdin"
	}
	if st, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil && fi.IsDir() {
			return nil, fmt.Errorf("%s: %w but a directory; give a file, or use --artifacts %s to review the documents in it", name, ErrNotAFile, name)
		}
	}
	p := filepath.ToSlash(name)
	resolved := p
	if name != "stdin" {
		if abs, err := filepath.Abs(name); err == nil {
			if _, err := os.Lstat(abs); err == nil {
				top, _ := projectTop(abs, false)
				if link, target := project.LinkOutside(top, abs); link != "" && !followSymlinks {
					return nil, fmt.Errorf("%s: %w: %s points to %s, outside %s; sot does not follow links out of the project it reviews: name %s itself, or pass --follow-symlinks, if you mean to review it",
						name, ErrOutsideProject, link, target, top, target)
				}
				resolved = resolvedName(abs)
			}
		}
	}
	skipped := func(reason string) *Material {
		return &Material{Type: TypeFreeform, Coordinates: p, Skipped: []Skipped{{Path: p, Reason: reason}}}
	}
	if name != "stdin" && (isSecretName(p) || isSecretName(resolved)) {
		return skipped(reasonSecret), nil
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxFreeformBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(data) > MaxFreeformBytes {
		return nil, fmt.Errorf("%s: %w", name, &tooLargeError{size: int64(len(data)), max: MaxFreeformBytes})
	}
	data, err = checkInput(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if r := credentialContent(resolved, data, false); r != "" {
		return skipped(r), nil
	}
	m := &Material{Type: TypeFreeform, Coordinates: p, Files: []File{renderText(p, data)}}
	maskFiles(m.Files)
	return m, nil
}

// renderText renders a document: a "## path" header, then every line
// numbered. The caller counts the tokens.
func renderText(p string, data []byte) File {
	f := File{Path: p, Language: Language(p)}
	if p == "stdin" {
		f.Language = ""
	}
	lines := splitLines(string(data))
	var b strings.Builder
	b.Grow(len(data) + len(lines)*8 + len(p) + 8)
	b.WriteString("## ")
	b.WriteString(headerName(p))
	b.WriteByte('\n')
	w := newLineWriter(&b, numWidth(len(lines)))
	for i, l := range lines {
		w.plainLine(i+1, l)
	}
	f.Shown = w.shown
	f.Text = b.String()
	return f
}
