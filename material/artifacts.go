package material

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
// by its name or because a line starts a private key, is listed in Skipped
// even when it is named explicitly: it is never sent to a model.
func Artifacts(paths []string) (*Material, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: no artifacts given; name the files or directories to review", ErrEmpty)
	}
	m := &Material{Type: TypeArtifacts}
	seen := make(map[string]bool)
	var coords []string
	for _, p := range paths {
		name := filepath.Clean(p)
		fi, err := os.Stat(name)
		if err != nil {
			return nil, fmt.Errorf("artifact %s: %w", p, err)
		}
		coords = append(coords, filepath.ToSlash(name))
		if !fi.IsDir() {
			rel := filepath.ToSlash(name)
			if seen[rel] {
				continue
			}
			seen[rel] = true
			// A credentials file is not sent even when it is named:
			// it is listed as skipped, like one found in a directory.
			if isSecretName(rel) {
				m.Skipped = append(m.Skipped, Skipped{Path: rel, Reason: reasonSecret})
				continue
			}
			data, err := readText(name, fi.Size(), MaxArtifactBytes)
			if err != nil {
				return nil, fmt.Errorf("artifact %s: %w", rel, err)
			}
			if hasPrivateKey(data, false) {
				m.Skipped = append(m.Skipped, Skipped{Path: rel, Reason: reasonKey})
				continue
			}
			m.Files = append(m.Files, renderText(rel, data))
			continue
		}
		if err := walkArtifacts(m, name, seen); err != nil {
			return nil, err
		}
	}
	if m.Empty() {
		return nil, fmt.Errorf("%w: no files found in %s; name directories that contain text files", ErrEmpty, strings.Join(coords, ", "))
	}
	slices.SortStableFunc(m.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	slices.SortStableFunc(m.Skipped, func(a, b Skipped) int { return strings.Compare(a.Path, b.Path) })
	m.Coordinates = strings.Join(coords, ", ")
	return m, nil
}

// walkArtifacts adds the text files under root to m.
func walkArtifacts(m *Material, root string, seen map[string]bool) error {
	return filepath.WalkDir(root, func(name string, de fs.DirEntry, err error) error {
		rel := filepath.ToSlash(name)
		skip := func(reason string) {
			if !seen[rel] {
				seen[rel] = true
				m.Skipped = append(m.Skipped, Skipped{Path: rel, Reason: reason})
			}
		}
		if err != nil {
			if name == root {
				return fmt.Errorf("artifact %s: %w", rel, err)
			}
			skip("could not be read: " + err.Error())
			if de != nil && de.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		base := de.Name()
		if de.IsDir() {
			if name == root {
				return nil
			}
			switch {
			case vcsDirs[base]:
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
		if seen[rel] {
			return nil
		}
		fi, err := os.Stat(name) // follows symbolic links to files
		if err != nil {
			skip("could not be read: " + err.Error())
			return nil
		}
		if !fi.Mode().IsRegular() {
			return nil // directories behind links (no cycles), devices, sockets
		}
		if strings.HasPrefix(base, ".") {
			skip("hidden file")
			return nil
		}
		if r := pathSkipReason(rel); r != "" {
			skip(r)
			return nil
		}
		data, err := readText(name, fi.Size(), MaxArtifactBytes)
		if err != nil {
			skip(skipReasonOf(err))
			return nil
		}
		if hasPrivateKey(data, false) {
			skip(reasonKey)
			return nil
		}
		if generatedHeader(headLines(data, 5)) {
			skip(reasonGenerated)
			return nil
		}
		seen[rel] = true
		m.Files = append(m.Files, renderText(rel, data))
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
// the text came from; it names the one file of the material.
func Freeform(name string, r io.Reader) (*Material, error) {
	if name == "" {
		name = "stdin"
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
	p := filepath.ToSlash(name)
	f := renderText(p, data)
	return &Material{Type: TypeFreeform, Coordinates: p, Files: []File{f}}, nil
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
	b.WriteString(p)
	b.WriteByte('\n')
	w := newLineWriter(&b, numWidth(len(lines)))
	for i, l := range lines {
		w.plainLine(i+1, l)
	}
	f.Shown = w.shown
	f.Text = b.String()
	return f
}
