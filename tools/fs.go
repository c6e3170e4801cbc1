package tools

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sotlabs/sot/internal/secrets"
	"github.com/sotlabs/sot/material"
)

// readFile returns lines start to end (1-based, inclusive; 0 for the
// file's first or last line) of the file at p.
func (t *Tools) readFile(p string, start, end int) (Result, error) {
	c, err := t.clean(p)
	if err != nil {
		return Result{}, err
	}
	if material.IsSecretName(c) {
		return Result{}, errSecret(c)
	}
	f, err := t.root.Open(c)
	if err != nil {
		return Result{}, t.rootError(p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Result{}, t.rootError(p, err)
	}
	if fi.IsDir() {
		return Result{}, fmt.Errorf("%s is a directory; list_dir shows what it holds", c)
	}
	if !fi.Mode().IsRegular() {
		return Result{}, fmt.Errorf("%s is not a regular file", c)
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(t.lim.MaxFileBytes)+1))
	if err != nil {
		return Result{}, t.rootError(p, err)
	}
	return t.render(c, data, start, end)
}

// render checks that data, the content of the file p, is text, masks its
// secrets and returns lines start to end of it, numbered, within the
// limits. data longer than MaxFileBytes was cut by the reader.
func (t *Tools) render(p string, data []byte, start, end int) (Result, error) {
	if start < 0 || end < 0 || end != 0 && end < start {
		return Result{}, fmt.Errorf("bad line range %d–%d: lines are numbered from 1, and end, when given, is not before start", start, end)
	}
	short := len(data) > t.lim.MaxFileBytes
	if short {
		data = data[:t.lim.MaxFileBytes]
		for len(data) > 0 && !utf8.FullRune(data[max(0, len(data)-utf8.UTFMax):]) {
			data = data[:len(data)-1]
		}
	}
	if why := textProblem(data); why != "" {
		return Result{}, fmt.Errorf("%s is %s and is not shown", p, why)
	}
	text := maskText(p, string(normalize(data)))
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if text == "" {
		lines = nil
	}
	n := len(lines)
	if start == 0 {
		start = 1
	}
	if end == 0 || end > n {
		end = n
	}
	if start > n {
		return Result{}, fmt.Errorf("%s has %d lines; ask for a start line from 1 to %d", p, n, max(n, 1))
	}
	var b strings.Builder
	last := start - 1
	for i := start; i <= end; i++ {
		line := fmt.Sprintf("%d: %s\n", i, lines[i-1])
		if i-start >= t.lim.MaxLines || b.Len()+len(line) > t.lim.MaxBytes {
			break
		}
		b.WriteString(line)
		last = i
	}
	r := Result{Files: []string{p}}
	switch {
	case last < end:
		r.Cut = true
		fmt.Fprintf(&b, "[cut: showed lines %d–%d of %d; ask for lines from %d on]\n", start, last, n, last+1)
	case short:
		r.Cut = true
		fmt.Fprintf(&b, "[cut: the file is larger than %d bytes; lines after %d were not read]\n", t.lim.MaxFileBytes, n)
	}
	if n == 0 {
		b.WriteString("[the file is empty]\n")
	}
	r.Text = b.String()
	return r, nil
}

// textProblem returns why data is not shown as text, or "": binary (a NUL
// byte in its first 8 KiB, as material judges) or not UTF-8.
func textProblem(data []byte) string {
	if bytes.IndexByte(data[:min(len(data), 8<<10)], 0) >= 0 {
		return "a binary file"
	}
	if !utf8.Valid(data) {
		return "not UTF-8 text"
	}
	return ""
}

// normalize strips a UTF-8 byte order mark and turns CRLF line endings
// into LF, as material does.
func normalize(b []byte) []byte {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	return bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
}

// maskText masks the secrets in text, the content of the file p.
func maskText(p, text string) string {
	return secrets.Apply(text, secrets.Find(text, p))
}

// maxLineBytes bounds one matching line in grep's answer.
const maxLineBytes = 300

// grep returns the lines matching the regular expression pattern in the
// files whose slash paths match glob ("" for every file).
func (t *Tools) grep(pattern, glob string) (Result, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return Result{}, fmt.Errorf("pattern %q is not a Go (RE2) regular expression: %w", pattern, err)
	}
	if glob == "" {
		glob = "**"
	}
	if err := checkGlob(glob); err != nil {
		return Result{}, err
	}
	var (
		b                    strings.Builder
		r                    Result
		read, skipped, found int
		stopFiles, stopMatch bool
	)
	err = fs.WalkDir(t.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			skipped++
			return nil
		}
		if d.IsDir() {
			if p != "." && hiddenDirs[d.Name()] {
				return fs.SkipDir
			}
			return nil
		}
		// Symbolic links are not followed: a link inside the project is
		// found under the path it points to.
		if !d.Type().IsRegular() || !matchGlob(glob, p) {
			return nil
		}
		if material.IsSecretName(p) {
			skipped++
			return nil
		}
		if read == t.lim.MaxFiles {
			stopFiles = true
			return fs.SkipAll
		}
		read++
		data, ok := t.readSmall(p)
		if !ok || textProblem(data) != "" {
			skipped++
			return nil
		}
		// The pattern runs over the masked text, so that no pattern can
		// probe a secret character by character.
		text := maskText(p, string(normalize(data)))
		shown := false
		for i, line := range strings.Split(text, "\n") {
			if !re.MatchString(line) {
				continue
			}
			if found == t.lim.MaxMatches {
				stopMatch = true
				return fs.SkipAll
			}
			if len(line) > maxLineBytes {
				line = cutUTF8(line, maxLineBytes) + " …"
			}
			out := fmt.Sprintf("%s:%d: %s\n", p, i+1, line)
			if b.Len()+len(out) > t.lim.MaxBytes {
				stopMatch = true
				return fs.SkipAll
			}
			b.WriteString(out)
			found++
			if !shown {
				r.Files = append(r.Files, p)
				shown = true
			}
		}
		return nil
	})
	if err != nil {
		return Result{}, fmt.Errorf("grep: %w", err)
	}
	switch {
	case stopMatch:
		r.Cut = true
		fmt.Fprintf(&b, "[cut: stopped at %d matches; narrow the pattern or the glob]\n", found)
	case stopFiles:
		r.Cut = true
		fmt.Fprintf(&b, "[cut: stopped after reading %d files; narrow the glob]\n", read)
	case found == 0:
		fmt.Fprintf(&b, "[no matches in %d files]\n", read)
	}
	if skipped > 0 {
		fmt.Fprintf(&b, "[%d files not searched: credentials, binary, not UTF-8, too large or unreadable]\n", skipped)
	}
	r.Text = b.String()
	return r, nil
}

// readSmall reads the file at p through the root, unless it is larger than
// MaxFileBytes.
func (t *Tools) readSmall(p string) ([]byte, bool) {
	f, err := t.root.Open(p)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(t.lim.MaxFileBytes)+1))
	if err != nil || len(data) > t.lim.MaxFileBytes {
		return nil, false
	}
	return data, true
}

// cutUTF8 returns at most n bytes of s, not splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// checkGlob reports whether glob is a valid pattern for matchGlob.
func checkGlob(glob string) error {
	for _, seg := range strings.Split(glob, "/") {
		if _, err := path.Match(seg, ""); err != nil {
			return fmt.Errorf("glob %q is not valid: use path.Match patterns (*, ?, [abc]) between slashes, and ** for any number of directories: %w", glob, err)
		}
	}
	return nil
}

// matchGlob reports whether the slash path p matches glob: path.Match
// segment by segment, where a "**" segment matches any number of
// directories, none included.
func matchGlob(glob, p string) bool {
	return matchSegs(strings.Split(glob, "/"), strings.Split(p, "/"))
}

func matchSegs(g, p []string) bool {
	for len(g) > 0 {
		if g[0] == "**" {
			for i := 0; i <= len(p); i++ {
				if matchSegs(g[1:], p[i:]) {
					return true
				}
			}
			return false
		}
		if len(p) == 0 {
			return false
		}
		if ok, _ := path.Match(g[0], p[0]); !ok {
			return false
		}
		g, p = g[1:], p[1:]
	}
	return len(p) == 0
}

// listDir lists the directory at p: one name a line, directories with a
// trailing "/", symbolic links marked and not followed.
func (t *Tools) listDir(p string) (Result, error) {
	c, err := t.clean(p)
	if err != nil {
		return Result{}, err
	}
	entries, err := fs.ReadDir(t.root.FS(), c)
	if err != nil {
		return Result{}, t.rootError(p, err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir():
			name += "/"
		case e.Type()&fs.ModeSymlink != 0:
			name += " (symbolic link, not followed)"
		}
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	r := Result{}
	for i, n := range names {
		line := maskText("", n) + "\n"
		if i == t.lim.MaxLines || b.Len()+len(line) > t.lim.MaxBytes {
			r.Cut = true
			fmt.Fprintf(&b, "[cut: showed %d of %d entries]\n", i, len(names))
			break
		}
		b.WriteString(line)
	}
	if len(names) == 0 {
		b.WriteString("[the directory is empty]\n")
	}
	r.Text = b.String()
	return r, nil
}
