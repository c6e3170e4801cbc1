// Package material gathers what a review looks at: the files of a git diff
// (parsed hunks with whole-function context), a set of documents, or one
// freeform text. Every file is rendered with new-file line numbers so that
// models can cite lines precisely; files that cannot or should not be
// reviewed (binary, generated, vendored, too large, not UTF-8, credentials)
// are listed as skipped with a reason, never dropped silently. Secrets in
// the files that are sent (keys, tokens, passwords; see package
// internal/secrets) are masked in their text before any prompt can see it,
// keeping every line and line number. Material that exceeds a
// model's budget is split into chunks of whole files (or of hunks or lines
// when one file alone is too large), so that nothing is truncated. Analyze
// and IsTrivial describe the change for specialist and lens selection.
package material

import (
	"errors"
	"path"
	"strconv"
	"strings"

	"github.com/sotlabs/sot/internal/tokens"
)

// Material types.
const (
	TypeDiff      = "diff"
	TypeArtifacts = "artifacts"
	TypeFreeform  = "freeform"
)

// File statuses of a diff.
const (
	StatusAdded    = "added"
	StatusModified = "modified"
	StatusDeleted  = "deleted"
	StatusRenamed  = "renamed"
	StatusCopied   = "copied"
)

// Errors returned by Diff, Artifacts and Freeform. They are wrapped with
// details; test for them with errors.Is.
var (
	// ErrNotRepo means Diff was asked to read a directory outside any git
	// work tree.
	ErrNotRepo = errors.New("not a git repository: run sot inside a git work tree, or review files with --artifacts or text with --type freeform")
	// ErrBadRange means git rejected the range or revision given to Diff.
	ErrBadRange = errors.New("bad diff range")
	// ErrBinary means a file or input named explicitly is binary.
	ErrBinary = errors.New("binary content cannot be reviewed")
	// ErrNotUTF8 means a file or input named explicitly is not UTF-8 text.
	ErrNotUTF8 = errors.New("not UTF-8 text")
	// ErrEmpty means the input contains nothing to review.
	ErrEmpty = errors.New("nothing to review")
	// ErrTooLarge means a file or input named explicitly exceeds the size
	// limit for one file.
	ErrTooLarge = errors.New("too large to review")
	// ErrNotAFile means a path that should name one file, such as the
	// input of a freeform review, names a directory.
	ErrNotAFile = errors.New("not a file")
	// ErrUnsupportedFile means a file git tracks is, in the work tree, a
	// named pipe, a socket or a device, which git cannot compare.
	ErrUnsupportedFile = errors.New("git cannot compare it (unsupported file type)")
	// ErrCombinedDiff means the range makes git compare a merge commit
	// with all its parents at once (a combined diff, "diff --cc"), while a
	// review needs a change against one base. It also matches ErrBadRange.
	ErrCombinedDiff error = &aliasError{"a combined diff (git diff --cc) cannot be reviewed", ErrBadRange}
	// ErrOutsideProject means a file or directory named for review, or
	// the input of a freeform review, leads through a symbolic link inside
	// a project to a place outside it. It also matches ErrNotAFile.
	ErrOutsideProject error = &aliasError{"symbolic link out of the project", ErrNotAFile}
)

// aliasError is a sentinel error that also matches an older, broader one,
// so that callers that test for the broader error (to report a usage
// error, say) treat it the same way.
type aliasError struct {
	msg  string
	also error
}

func (e *aliasError) Error() string { return e.msg }

// Is reports whether target is the broader error.
func (e *aliasError) Is(target error) bool { return target == e.also }

// File is one file of the material.
type File struct {
	Path     string // new path (old path for a deletion)
	OldPath  string // set for renames and copies
	Status   string // diff only: "added", "modified", "deleted", "renamed", "copied"
	Language string // from the file name, e.g. "go", "typescript", "markdown", "yaml"; "" if unknown
	// Text is the rendered material of this file: a "## path" header line,
	// optional note lines, then numbered lines. Diff lines look like
	//
	//	  41 +| added line
	//	     -| removed line (no new-file number)
	//	  42  | context line
	//
	// with "@@ section" lines starting each hunk; a deleted file's lines are
	// numbered as in the old file ("  12 -| removed line"); artifact and freeform lines
	// look like "  12 | text". Secrets in the text are masked, as in
	// "AKIA…[secret: aws-access-token]".
	Text      string
	Tokens    int // tokens.Count(Text); 0 until Material.Tokens or Split counts it
	Additions int
	Deletions int
	Changed   []LineRange // new-file line ranges that were added or modified (diff only)
	Shown     []LineRange // new-file line ranges present in Text (changed and context)
}

// LineRange is an inclusive range of 1-based line numbers.
type LineRange struct{ Start, End int }

// Contains reports whether line lies in the range.
func (r LineRange) Contains(line int) bool { return line >= r.Start && line <= r.End }

// Skipped is a file that is part of the change but not of the material, with
// the reason it was left out.
type Skipped struct{ Path, Reason string }

// Material is what a review looks at.
type Material struct {
	Type string // "diff", "artifacts" or "freeform"
	// Coordinates describes where the material came from, for humans:
	// "git diff HEAD (working tree)", "git diff main...feature",
	// "docs/a.md, docs/b.md", "stdin".
	Coordinates string
	Files       []File    // sorted by path
	Skipped     []Skipped // sorted by path
	// Base is the commit a diff compares against (its old side), as a
	// full object id; "" for other material, and for a diff in a
	// repository without commits. What the change's own files said
	// before the change is read from it (AtBase).
	Base string
	// Head is the commit of a diff's new side, as a full object id: B of
	// A..B and A...B, the second of two revisions, R of R^!. For a diff of
	// the working tree or the index it is the commit checked out (HEAD),
	// and Worktree says the new side is not a commit. "" for other
	// material and a repository without commits. A later review of the
	// same work compares against it (sot review --since).
	Head     string
	Worktree bool
	// Top is the top of the work tree a diff was taken in.
	Top string

	atBase *baseListing // a listing of files at Base started with the diff
}

// Empty reports whether there is nothing at all: no files and nothing
// skipped. For a diff it means there are no changes.
func (m *Material) Empty() bool { return len(m.Files) == 0 && len(m.Skipped) == 0 }

// Text returns the text of all files in order, separated by blank lines.
func (m *Material) Text() string { return joinFiles(m.Files) }

// Tokens returns the sum of the files' token counts. It may differ from
// tokens.Count(m.Text()) by a few tokens at the file boundaries. The files
// are counted on first use, which loads the tokenizer: a caller that only
// needs to know whether the material fits compares Bytes first, since no
// text has more tokens than bytes.
func (m *Material) Tokens() int {
	countTokens(m.Files)
	return sumTokens(m.Files)
}

// Bytes returns the size of the files' text, an upper bound of Tokens.
func (m *Material) Bytes() int {
	n := 0
	for _, f := range m.Files {
		n += len(f.Text)
	}
	return n
}

// Paths returns the paths of the files in order.
func (m *Material) Paths() []string {
	out := make([]string, len(m.Files))
	for i, f := range m.Files {
		out[i] = f.Path
	}
	return out
}

// IsChanged reports whether line of the file at path was added or modified
// by the diff.
func (m *Material) IsChanged(path string, line int) bool {
	f, ok := m.File(path)
	return ok && inRanges(f.Changed, line)
}

// IsShown reports whether line of the file at path is present in the
// material: a changed or context line of a diff, or any line of an artifact
// or freeform file.
func (m *Material) IsShown(path string, line int) bool {
	f, ok := m.File(path)
	if !ok {
		return false
	}
	if m.Type != TypeDiff && len(f.Shown) == 0 {
		return line >= 1 // an empty or hand-made artifact: the file is present
	}
	return inRanges(f.Shown, line)
}

// File returns the file at path. It tolerates the spellings models and tools
// use: a leading "./", git's "a/" and "b/" prefixes, backslashes, a part
// suffix such as " (part 2 of 3)", and the old path of a renamed file.
func (m *Material) File(p string) (*File, bool) {
	for _, c := range pathCandidates(p) {
		for i := range m.Files {
			if m.Files[i].Path == c {
				return &m.Files[i], true
			}
		}
	}
	for _, c := range pathCandidates(p) {
		for i := range m.Files {
			if m.Files[i].OldPath != "" && m.Files[i].OldPath == c {
				return &m.Files[i], true
			}
		}
	}
	return nil, false
}

// pathCandidates lists the paths p may stand for, most literal first.
func pathCandidates(p string) []string {
	p = strings.TrimSpace(p)
	p = strings.ReplaceAll(p, `\`, "/")
	if base, _, _, ok := splitPartName(p); ok {
		p = base
	}
	out := []string{p}
	q := strings.TrimPrefix(p, "./")
	if q != p {
		out = append(out, q)
	}
	for _, pre := range []string{"a/", "b/"} {
		if strings.HasPrefix(q, pre) {
			out = append(out, q[len(pre):])
		}
	}
	if c := path.Clean(q); c != q && c != "." {
		out = append(out, c)
	}
	return out
}

func inRanges(rs []LineRange, line int) bool {
	for _, r := range rs {
		if r.Contains(line) {
			return true
		}
	}
	return false
}

func joinFiles(files []File) string {
	n := 0
	for _, f := range files {
		n += len(f.Text) + 1
	}
	var b strings.Builder
	b.Grow(n)
	for i, f := range files {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(f.Text)
	}
	return b.String()
}

func sumTokens(files []File) int {
	n := 0
	for _, f := range files {
		n += f.Tokens
	}
	return n
}

// countTokens sets the token count of every file whose count is not set
// yet, counting files concurrently: tokenizing dominates the cost of
// reading large material.
func countTokens(files []File) {
	var todo []int
	for i := range files {
		if files[i].Tokens == 0 && files[i].Text != "" {
			todo = append(todo, i)
		}
	}
	counts := countAll(len(todo), func(k int) string { return files[todo[k]].Text })
	for k, i := range todo {
		files[i].Tokens = counts[k]
	}
}

// countAll counts the tokens of n texts concurrently.
func countAll(n int, text func(int) string) []int {
	return measureAll(n, func(i int) int { return tokens.Count(text(i)) })
}

// headerName is how a path is written in the material's headers: as is, or
// as a Go string literal when it holds a line break or another control or
// line-separating character, so that a name never spreads over lines.
func headerName(p string) string {
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 {
			return strconv.Quote(p)
		}
	}
	return p
}
