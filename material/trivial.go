package material

import (
	"regexp"
	"strings"
	"unicode"
)

// changedLines returns the removed and added line texts of a diff file.
func changedLines(f File) (removed, added []string) {
	for _, l := range splitLines(f.Text) {
		switch mark, _, text := parseLine(l); mark {
		case markAdded:
			added = append(added, text)
		case markRemoved:
			removed = append(removed, text)
		}
	}
	return removed, added
}

// IsTrivial reports whether a diff is too small to deserve a full review,
// and why. It is true when every changed line is blank or a comment
// ("comment-only change"), when the change only moves whitespace
// ("whitespace-only change"), or when the whole diff is one changed line
// pair within an edit distance of three ("single small edit such as a typo
// fix"). It is false for artifacts and freeform material, for material with
// skipped files (their content is unknown), and when a file is added,
// deleted, renamed or copied.
//
// The rules are conservative where the spelling of "trivial" could hide a
// real change: comments that are directives (//go:build, #!, # noqa, ...)
// count as code; indentation counts for indentation-sensitive languages
// (Python, YAML, Makefiles, ...); and the small edit must change only
// letters, inside documentation, a comment or a string literal, so that
// "<" to "<=" or "replicas: 3" to "replicas: 5" is never trivial.
func (m *Material) IsTrivial() (bool, string) {
	if m.Type != TypeDiff || len(m.Files) == 0 || len(m.Skipped) > 0 {
		return false, ""
	}
	type change struct {
		f              File
		removed, added []string
	}
	var changes []change
	total := 0
	for _, f := range m.Files {
		if f.Status != StatusModified {
			return false, ""
		}
		r, a := changedLines(f)
		changes = append(changes, change{f, r, a})
		total += len(r) + len(a)
	}
	if total == 0 {
		return false, "" // mode changes only
	}
	ws := true
	for _, c := range changes {
		if !sameIgnoringSpace(c.removed, c.added, indentSensitive[c.f.Language]) {
			ws = false
			break
		}
	}
	if ws {
		return true, "whitespace-only change"
	}
	comments := true
	for _, c := range changes {
		for _, l := range append(c.removed[:len(c.removed):len(c.removed)], c.added...) {
			if strings.TrimSpace(l) != "" && !isComment(c.f.Language, l) {
				comments = false
			}
		}
	}
	if comments {
		return true, "comment-only change"
	}
	if len(changes) == 1 && len(changes[0].removed) == 1 && len(changes[0].added) == 1 {
		c := changes[0]
		if smallTextEdit(c.f, c.removed[0], c.added[0]) {
			return true, "single small edit such as a typo fix"
		}
	}
	return false, ""
}

// indentSensitive lists languages in which leading whitespace has meaning.
var indentSensitive = map[string]bool{
	"python": true, "yaml": true, "makefile": true, "haskell": true, "nim": true,
	"markdown": true, "restructuredtext": true, "": true,
}

// sameIgnoringSpace reports whether two runs of lines differ in whitespace
// only. Whitespace matters between two word characters (it separates
// tokens), and leading whitespace matters for indentation-sensitive
// languages; blank lines never matter.
func sameIgnoringSpace(a, b []string, indent bool) bool {
	return squeeze(a, indent) == squeeze(b, indent)
}

func squeeze(lines []string, indent bool) string {
	var sb strings.Builder
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if indent {
			sb.WriteString(l[:len(l)-len(strings.TrimLeft(l, " \t"))])
		}
		var prev rune = -1
		space := false
		for _, r := range t {
			if unicode.IsSpace(r) {
				space = true
				continue
			}
			if space && isWord(prev) && isWord(r) {
				sb.WriteByte(' ')
			}
			space = false
			sb.WriteRune(r)
			prev = r
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// Comment syntaxes by language family.
var (
	slashComment = map[string]bool{
		"go": true, "javascript": true, "typescript": true, "java": true, "kotlin": true, "scala": true,
		"groovy": true, "rust": true, "c": true, "cpp": true, "csharp": true, "fsharp": true, "swift": true,
		"objc": true, "php": true, "dart": true, "zig": true, "protobuf": true, "css": true, "scss": true,
		"less": true, "json": true, "terraform": true, "hcl": true, "go-mod": true, "vue": true, "svelte": true,
		"cue": true,
	}
	hashComment = map[string]bool{
		"python": true, "shell": true, "ruby": true, "perl": true, "yaml": true, "toml": true, "ini": true,
		"dotenv": true, "makefile": true, "dockerfile": true, "r": true, "elixir": true, "nim": true,
		"julia": true, "terraform": true, "hcl": true, "nix": true, "cmake": true, "starlark": true,
		"powershell": true, "gitignore": true, "php": true, "graphql": true,
	}
	dashComment   = map[string]bool{"sql": true, "lua": true, "haskell": true}
	markupComment = map[string]bool{"html": true, "xml": true, "markdown": true, "vue": true, "svelte": true}
)

// directive matches comments that change behaviour: build constraints,
// compiler and linter directives, shebangs, encoding and type comments.
var directive = regexp.MustCompile(`^(//go:|//\s*\+build|//\s*(nolint|lint:|eslint|@ts-|prettier-ignore|istanbul|swiftlint|NOLINT)|//\s*#|#!|#\s*(noqa|type:|pylint:|pragma|mypy:|-\*-|rubocop:|frozen_string_literal|shellcheck|fmt:)|--\s*\+migrate)`)

// isComment reports whether a line is a comment in the given language.
// Lines inside a block comment are recognised only when they start with
// "*" or close the comment; an unrecognised line counts as code.
func isComment(lang, line string) bool {
	t := strings.TrimSpace(line)
	if directive.MatchString(t) {
		return false
	}
	switch {
	case slashComment[lang] && (strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") || strings.HasSuffix(t, "*/") ||
		t == "*" || strings.HasPrefix(t, "* ")): // "* text" inside a block comment, not "*p = x"
		return true
	case hashComment[lang] && strings.HasPrefix(t, "#"):
		return true
	case dashComment[lang] && strings.HasPrefix(t, "--"):
		return true
	case markupComment[lang] && (strings.HasPrefix(t, "<!--") || strings.HasSuffix(t, "-->")):
		return true
	}
	return false
}

// smallTextEdit reports whether changing line a into b is a small edit of
// prose: at most three characters apart, changing letters only, in a
// documentation file, a comment or a string literal.
func smallTextEdit(f File, a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	if editDistance(ra, rb, 3) > 3 {
		return false
	}
	p := 0
	for p < len(ra) && p < len(rb) && ra[p] == rb[p] {
		p++
	}
	s := 0
	for s < len(ra)-p && s < len(rb)-p && ra[len(ra)-1-s] == rb[len(rb)-1-s] {
		s++
	}
	for _, r := range append(ra[p:len(ra)-s:len(ra)-s], rb[p:len(rb)-s]...) {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	if isDocPath(f.Path) || isComment(f.Language, b) {
		return true
	}
	prefix := string(rb[:p])
	if i := strings.Index(prefix, "//"); i >= 0 && slashComment[f.Language] && strings.Count(prefix[:i], `"`)%2 == 0 {
		return true // a trailing comment
	}
	if i := strings.Index(prefix, "#"); i >= 0 && hashComment[f.Language] && strings.Count(prefix[:i], `"`)%2 == 0 {
		return true
	}
	for _, q := range []string{`"`, "'", "`"} {
		if strings.Count(prefix, q)%2 == 1 {
			return true // inside a string literal
		}
	}
	return false
}

// editDistance returns the Levenshtein distance between a and b, or
// limit+1 if it exceeds limit. Only a band of width 2*limit+1 around the
// diagonal is computed, so long lines cost O(len*limit).
func editDistance(a, b []rune, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	over := limit + 1
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = min(j, over)
	}
	for i := 1; i <= len(a); i++ {
		lo, hi := max(1, i-limit), min(len(b), i+limit)
		if lo > 1 {
			cur[lo-1] = over
		} else {
			cur[0] = min(i, over)
		}
		best := cur[lo-1]
		for j := lo; j <= hi; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			up := over
			if j <= i-1+limit {
				up = prev[j]
			}
			cur[j] = min(up+1, cur[j-1]+1, prev[j-1]+cost, over)
			best = min(best, cur[j])
		}
		if best >= over {
			return over
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
