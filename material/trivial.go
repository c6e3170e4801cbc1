package material

import (
	"path"
	"strings"
	"unicode"

	"github.com/sotlabs/sot/internal/lazyre"
	"github.com/sotlabs/sot/internal/secrets"
)

// IsTrivial reports whether a diff is too small to deserve a full review,
// and why. It is true when every changed line is blank or a comment
// ("comment-only change"), when the change only moves whitespace
// ("whitespace-only change"), or when the whole diff is one changed line
// pair that fixes a typo ("single small edit such as a typo fix"). It is
// false for artifacts and freeform material, for material with skipped
// files (their content is unknown), when a file is added, deleted, renamed
// or copied, and when a file shows a secret (masked; see package secrets):
// adding, changing or removing a credential, even in a comment, always
// deserves a review, and two different keys look the same once masked.
//
// A wrong "trivial" verdict skips a review silently, which is much worse
// than reviewing a trivial change, so every rule only says yes when the
// material shows that the change cannot alter behaviour:
//
//   - A line is a comment when it starts with the language's line-comment
//     marker, or lies inside a block comment whose opening line the hunk
//     shows: a "* 2" line is code unless a "/*" above it is in view. Code
//     before or after a comment on the same line is code.
//   - Comments that tools read are code: build constraints and compiler,
//     linter, formatter, bundler and migration directives, annotations
//     ("@type", "+kubebuilder:..."), shebangs, encoding lines, PHP
//     attributes, the cgo preamble of a Go file that imports "C", and the
//     "Output:" comments of Go examples. JSON and go.mod files have no
//     comments to ignore.
//   - In a file whose shown lines open a multi-line string (an odd number
//     of quotes, backticks or triple quotes on a line, a heredoc, a YAML
//     block scalar), comment-looking lines and whitespace may be string
//     content, so neither rule applies. Neither applies to test data and
//     golden files either.
//   - Whitespace counts only in languages where it separates tokens
//     without meaning; shells, Makefiles, YAML, INI, CSS, HTML and unknown
//     formats are excluded. Whitespace inside quotes, between two word
//     characters, between two operator characters (so "i + ++j" is not
//     "i+++j"), on C preprocessor lines and on JavaScript lines that may
//     hold a regular expression literal counts; indentation counts for
//     indentation-sensitive languages.
//   - A small edit is trivial inside a comment (three characters at most),
//     or as a typo fix in prose: one inserted, deleted, replaced or swapped
//     letter inside a word, not its first letter, in a word of at least
//     four letters (three for a swap, five for a replacement), in a
//     documentation file (licences, dependency lists and test data
//     excepted; not in code spans or code blocks) or in a message string
//     of code (an error, log, print or help text of several words).
//     "GET" to "PUT", "http" to "https", "now" to "not" and "maximum" to
//     "minimum" are never trivial.
func (m *Material) IsTrivial() (bool, string) {
	if m.Type != TypeDiff || len(m.Files) == 0 || len(m.Skipped) > 0 {
		return false, ""
	}
	var scans []fileScan
	total := 0
	for _, f := range m.Files {
		if f.Status != StatusModified || strings.Contains(f.Text, secrets.Marker) {
			return false, ""
		}
		s := scanFile(f)
		scans = append(scans, s)
		total += len(s.removed) + len(s.added)
	}
	if total == 0 {
		return false, "" // mode changes only
	}
	if every(scans, fileScan.whitespaceOnly) {
		return true, "whitespace-only change"
	}
	if every(scans, fileScan.commentOnly) {
		return true, "comment-only change"
	}
	if len(scans) == 1 && len(scans[0].removed) == 1 && len(scans[0].added) == 1 && scans[0].smallTextEdit() {
		return true, "single small edit such as a typo fix"
	}
	return false, ""
}

func every(scans []fileScan, ok func(fileScan) bool) bool {
	for _, s := range scans {
		if !ok(s) {
			return false
		}
	}
	return true
}

// changedLine is an added or removed line with what the scan knew of it.
type changedLine struct {
	text    string
	comment bool // blank, or nothing but comment text
	fenced  bool // inside (or opening or closing) a fenced code block of a Markdown file
}

// fileScan is what IsTrivial learns of one file of a diff.
type fileScan struct {
	f              File
	syn            commentSyntax
	removed, added []changedLine
	// multiline: a shown line may open or close a multi-line string, so
	// comment-looking lines and whitespace may be string content.
	multiline bool
	// toolComments: comments of this file are read by tools (the cgo
	// preamble, Go example output, Rust doctests).
	toolComments bool
	// data: test data or a golden file, whose every byte is content.
	data bool
}

// scanFile walks the rendered lines of a diff file, tracking block comments
// and code fences separately for the old side (context and removed lines)
// and the new side (context and added lines). Both start outside any
// comment at each hunk: an unseen opening line is never assumed.
func scanFile(f File) fileScan {
	s := fileScan{f: f, syn: syntaxOf(f.Language), data: isDataPath(f.Path)}
	var old, cur lineState
	for _, l := range splitLines(f.Text) {
		mark, _, text := parseLine(l)
		switch mark {
		case markContext:
			old.next(s.syn, f.Language, text)
			cur.next(s.syn, f.Language, text)
		case markRemoved:
			s.removed = append(s.removed, old.next(s.syn, f.Language, text))
		case markAdded:
			s.added = append(s.added, cur.next(s.syn, f.Language, text))
		default:
			old, cur = lineState{}, lineState{} // a header, note or new hunk
			continue
		}
		if opensMultiline(f.Language, text) {
			s.multiline = true
		}
	}
	s.toolComments = toolReadComments(f)
	return s
}

// lineState is the comment and fence state of one side of a hunk.
type lineState struct {
	close string // the delimiter that ends the block comment we know we are in; "" outside
	fence bool   // inside a fenced code block (Markdown)
}

// next classifies one line and advances the state.
func (st *lineState) next(syn commentSyntax, lang, text string) changedLine {
	t := strings.TrimSpace(text)
	cl := changedLine{text: text, fenced: st.fence}
	if lang == "markdown" && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")) {
		st.fence = !st.fence
		cl.fenced = true
		return cl
	}
	if t == "" {
		cl.comment = true
		return cl
	}
	if !st.fence {
		cl.comment = st.comment(syn, t)
	}
	return cl
}

// comment reports whether the trimmed line t holds nothing but comments
// that no tool reads.
func (st *lineState) comment(syn commentSyntax, t string) bool {
	inert := true
	if st.close != "" {
		i := strings.Index(t, st.close)
		if i < 0 {
			return !isDirective(t)
		}
		inert = !isDirective(t[:i])
		t = strings.TrimSpace(t[i+len(st.close):])
		st.close = ""
	}
	for t != "" {
		if strings.HasPrefix(t, "#!") && syn.has("#") {
			return false // a shebang
		}
		if m := syn.lineMarker(t); m != "" {
			return inert && !isDirective(t[len(m):])
		}
		open, close := syn.blockOpener(t)
		if open == "" {
			return false // code
		}
		t = t[len(open):]
		if open == "{-" && strings.HasPrefix(t, "#") {
			inert = false // a Haskell pragma
		}
		i := strings.Index(t, close)
		if i < 0 {
			st.close = close
			return inert && !isDirective(t)
		}
		inert = inert && !isDirective(t[:i])
		t = strings.TrimSpace(t[i+len(close):])
	}
	return inert
}

// commentSyntax is a language's comment markers.
type commentSyntax struct {
	line   []string    // line-comment markers
	blocks [][2]string // block-comment delimiters
}

func (c commentSyntax) has(marker string) bool {
	for _, m := range c.line {
		if m == marker {
			return true
		}
	}
	return false
}

func (c commentSyntax) lineMarker(t string) string {
	for _, m := range c.line {
		if strings.HasPrefix(t, m) {
			return m
		}
	}
	return ""
}

func (c commentSyntax) blockOpener(t string) (string, string) {
	for _, b := range c.blocks {
		if strings.HasPrefix(t, b[0]) {
			return b[0], b[1]
		}
	}
	return "", ""
}

// Comment syntaxes by language family. JSON, go.mod and unknown formats
// have none: a comment there is either invalid or read by a tool.
var (
	slashLine = setOf("go", "javascript", "typescript", "java", "kotlin", "scala", "groovy", "rust", "c", "cpp",
		"csharp", "fsharp", "swift", "objc", "php", "dart", "zig", "protobuf", "scss", "less", "terraform", "hcl",
		"vue", "svelte", "cue")
	slashBlock = setOf("go", "javascript", "typescript", "java", "kotlin", "scala", "groovy", "rust", "c", "cpp",
		"csharp", "swift", "objc", "php", "dart", "protobuf", "css", "scss", "less", "terraform", "hcl", "vue",
		"svelte", "sql")
	hashLine = setOf("python", "shell", "ruby", "perl", "yaml", "toml", "ini", "dotenv", "makefile", "dockerfile",
		"r", "elixir", "nim", "julia", "terraform", "hcl", "nix", "cmake", "starlark", "powershell", "gitignore",
		"php", "graphql")
	dashLine    = setOf("sql", "lua", "haskell")
	markupBlock = setOf("html", "xml", "markdown", "vue", "svelte")
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// syntaxOf returns the comment syntax of a language.
func syntaxOf(lang string) commentSyntax {
	var c commentSyntax
	if slashLine[lang] {
		c.line = append(c.line, "//")
	}
	if hashLine[lang] {
		c.line = append(c.line, "#")
	}
	if dashLine[lang] {
		c.line = append(c.line, "--")
	}
	if slashBlock[lang] {
		c.blocks = append(c.blocks, [2]string{"/*", "*/"})
	}
	if markupBlock[lang] {
		c.blocks = append(c.blocks, [2]string{"<!--", "-->"})
	}
	if lang == "haskell" {
		c.blocks = append(c.blocks, [2]string{"{-", "-}"})
	}
	return c
}

// directiveBody matches the start of a comment's text (markers and
// leading "*", "/", "#" and "-" removed) that a tool reads: annotations
// and markers (@..., +..., [...], !..., $...), compiler, cgo, linter,
// formatter, type-checker, bundler, container, migration, query and
// editor directives, and generated-file headers.
var directiveBody = lazyre.New(`(?i)^([@+\[!$]|` +
	`go:|export\b|line\b|extern\b|cgo\b|sys(nb)?\b|` +
	`nolint|lint:|noqa|nosec|nosonar|eslint|jshint|jslint|jscs:|global\b|istanbul\b|c8\b|v8\b|` +
	`prettier-ignore|biome-ignore|deno-(lint|fmt)-ignore|swiftlint|clang-(format|tidy)|webpack|vite-ignore|` +
	`type:|pylint:|pragma|mypy:|pyright:|pyre-|isort:|fmt:|yapf:|black:|ruff:|rubocop:|frozen_string_literal|` +
	`typed:|shellcheck|.*coding[:=]|vim?:|ex:|syntax\s*=|escape\s*=|check\s*=|migrate:|name:|` +
	`markdownlint|textlint|cspell|spell-?checker|renovate|dependabot|yaml-language-server|` +
	`source(mapping)?url|(end)?region\b|language\s*=|@formatter|checkstyle|` +
	`code generated|do not edit)`)

// isDirective reports whether comment text (after its marker) is read by
// a tool.
func isDirective(body string) bool {
	body = strings.TrimSpace(body)
	if strings.HasPrefix(body, "!") {
		return true // "/*!" preserved comments, "//!" inner docs
	}
	body = strings.TrimSpace(strings.TrimLeft(body, "*/-"))
	if len(body) > 1 && body[0] == '#' && body[1] != ' ' && body[1] != '#' {
		return true // #nosec, #include (cgo), #region, #__PURE__
	}
	body = strings.TrimSpace(strings.TrimLeft(body, "#"))
	return directiveBody.Re().MatchString(body)
}

// toolReadComments reports whether some comments of a file are read by
// tools even though they look like prose: the cgo preamble of a Go file
// that imports "C", the expected output of Go examples, and Rust doc
// comments holding doctests.
func toolReadComments(f File) bool {
	switch f.Language {
	case "go":
		return strings.Contains(f.Text, `import "C"`) || goExampleOutput.Re().MatchString(f.Text)
	case "rust":
		return strings.Contains(f.Text, "```")
	}
	return false
}

var goExampleOutput = lazyre.New(`(?i)//\s*(unordered )?output:`)

// isDataPath reports whether p is test data or a golden file, whose
// comments and whitespace are content.
func isDataPath(p string) bool {
	lp := strings.ToLower(p)
	base := path.Base(lp)
	if strings.HasSuffix(base, ".golden") || strings.HasSuffix(base, ".snap") {
		return true
	}
	for _, seg := range strings.Split(path.Dir(lp), "/") {
		switch seg {
		case "testdata", "fixtures", "__fixtures__", "golden", "__snapshots__", "snapshots":
			return true
		}
	}
	return false
}

// Multi-line string syntaxes by language.
var (
	backtickStrings = setOf("go", "javascript", "typescript", "vue", "svelte")
	tripleQuotes    = setOf("python", "starlark", "toml", "groovy", "dart", "elixir", "julia")
	// singleQuoteLines: single-quoted strings may span lines.
	singleQuoteLines = setOf("shell", "sql", "perl", "ruby", "php", "powershell", "dockerfile", "makefile")
	heredocs         = setOf("shell", "dockerfile", "ruby", "perl", "php", "terraform", "hcl", "makefile", "powershell")
	heredoc          = lazyre.New(`<<<?[-~]?\s*['"]?[A-Za-z_]`)
	yamlBlockScalar  = lazyre.New(`(^|[:\-?]\s)\s*[|>][-+0-9]*\s*(#.*)?$`)
)

// opensMultiline reports whether a line may open or close a string that
// spans lines: an odd number of unescaped double quotes (this covers
// triple double quotes), of backticks in languages whose backtick strings
// span lines, of triple single quotes or of single quotes where those
// strings span lines; a heredoc; a YAML block scalar; a Lua long bracket.
// Prose formats have none.
func opensMultiline(lang, text string) bool {
	if docLanguages[lang] {
		return false
	}
	switch {
	case unescapedCount(text, '"')%2 == 1:
		return true
	case backtickStrings[lang] && strings.Count(text, "`")%2 == 1:
		return true
	case tripleQuotes[lang] && strings.Count(text, "'''")%2 == 1:
		return true
	case singleQuoteLines[lang] && unescapedCount(text, '\'')%2 == 1:
		return true
	case heredocs[lang] && heredoc.Re().MatchString(text):
		return true
	case lang == "yaml" && yamlBlockScalar.Re().MatchString(text):
		return true
	case lang == "lua" && (strings.Contains(text, "[[") || strings.Contains(text, "]]")):
		return true
	}
	return false
}

// unescapedCount counts the occurrences of q not preceded by a backslash.
func unescapedCount(s string, q byte) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			n++
		}
	}
	return n
}

// commentOnly reports whether every changed line of the file is blank or
// an inert comment, in a file whose comments are not content.
func (s fileScan) commentOnly() bool {
	if s.data || s.multiline || s.toolComments {
		return false
	}
	for _, l := range append(s.removed[:len(s.removed):len(s.removed)], s.added...) {
		if !l.comment {
			return false
		}
	}
	return true
}

// whitespaceLanguages are the languages in which whitespace between tokens
// (outside strings) carries no meaning, and prose formats. Shells,
// Makefiles and Dockerfiles split words on it, YAML, INI and .env values
// contain it, CSS selectors use it as a combinator, HTML renders it, and
// unknown formats may mean anything by it.
var whitespaceLanguages = setOf("go", "javascript", "typescript", "java", "kotlin", "scala", "groovy", "rust",
	"c", "cpp", "csharp", "swift", "objc", "dart", "zig", "protobuf", "json", "terraform", "hcl", "sql",
	"python", "cue", "graphql", "markdown", "restructuredtext", "asciidoc", "text")

// indentSensitive lists languages in which leading whitespace has meaning.
var indentSensitive = setOf("python", "markdown", "restructuredtext", "asciidoc", "text")

// whitespaceOnly reports whether the file's removed and added lines differ
// in insignificant whitespace only.
func (s fileScan) whitespaceOnly() bool {
	lang := s.f.Language
	if s.data || s.multiline || !whitespaceLanguages[lang] {
		return false
	}
	for _, l := range append(s.removed[:len(s.removed):len(s.removed)], s.added...) {
		t := strings.TrimSpace(l.text)
		switch lang {
		case "c", "cpp", "objc":
			if strings.HasPrefix(t, "#") {
				return false // the preprocessor: "F(x)" and "F (x)" are different macros
			}
		case "javascript", "typescript":
			if code, _, _ := splitLineComment(s.syn, t); strings.Contains(code, "/") {
				return false // the slash may delimit a regular expression literal
			}
		}
	}
	quotes := !docLanguages[lang]
	return squeeze(texts(s.removed), indentSensitive[lang], quotes) == squeeze(texts(s.added), indentSensitive[lang], quotes)
}

func texts(ls []changedLine) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.text
	}
	return out
}

// squeeze reduces lines to what whitespace cannot change. Blank lines
// vanish. Outside quotes, a run of whitespace becomes one space where it
// separates two word characters (quotes count as word characters) or two
// operator characters, and vanishes elsewhere; inside quotes (when quotes
// is set) whitespace stays as it is. Leading whitespace stays when indent
// is set.
func squeeze(lines []string, indent, quotes bool) string {
	var sb strings.Builder
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if indent {
			sb.WriteString(l[:len(l)-len(strings.TrimLeft(l, " \t"))])
		}
		var q rune // the open quote, or 0
		var prev rune = -1
		space, escaped := false, false
		for _, r := range t {
			if q != 0 {
				sb.WriteRune(r)
				switch {
				case escaped:
					escaped = false
				case r == '\\':
					escaped = true
				case r == q:
					q = 0
				}
				prev = r
				continue
			}
			if unicode.IsSpace(r) {
				space = true
				continue
			}
			if space && significantGap(prev, r) {
				sb.WriteByte(' ')
			}
			space = false
			sb.WriteRune(r)
			if quotes && isQuote(r) {
				q = r
			}
			prev = r
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// significantGap reports whether whitespace between a and b separates
// tokens that would otherwise fuse.
func significantGap(a, b rune) bool {
	wordish := func(r rune) bool { return isWord(r) || isQuote(r) }
	return wordish(a) && wordish(b) || isOperator(a) && isOperator(b)
}

func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

func isQuote(r rune) bool { return r == '"' || r == '\'' || r == '`' }

func isOperator(r rune) bool { return strings.ContainsRune("+-*/%&|^<>=!:.?~@#$", r) }

// splitLineComment splits a line at its first line-comment marker outside
// quotes. It returns the code before the marker, the comment text after
// it, and the rune index at which the comment text starts; ok is false
// when the line has no such comment.
func splitLineComment(syn commentSyntax, line string) (code, comment string, ok bool) {
	var q byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		if q != 0 {
			switch c {
			case '\\':
				i++
			case q:
				q = 0
			}
			continue
		}
		if c == '"' || c == '\'' || c == '`' {
			q = c
			continue
		}
		if m := syn.lineMarker(line[i:]); m != "" {
			return line[:i], line[i+len(m):], true
		}
	}
	return line, "", false
}

// smallTextEdit reports whether the file's one removed line and one added
// line differ by a small edit that cannot change behaviour: a small edit
// within comments, or a typo fix in prose (see IsTrivial).
func (s fileScan) smallTextEdit() bool {
	a, b := s.removed[0], s.added[0]
	ra, rb := []rune(a.text), []rune(b.text)
	p := 0
	for p < len(ra) && p < len(rb) && ra[p] == rb[p] {
		p++
	}
	q := 0
	for q < len(ra)-p && q < len(rb)-p && ra[len(ra)-1-q] == rb[len(rb)-1-q] {
		q++
	}
	oldPart, newPart := ra[p:len(ra)-q], rb[p:len(rb)-q]
	if len(oldPart)+len(newPart) == 0 {
		return false
	}
	for _, r := range append(oldPart[:len(oldPart):len(oldPart)], newPart...) {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	// A line that is all comment is left to the comment-only rule.
	commentsInert := !s.data && !s.multiline && !s.toolComments
	if commentsInert && inTrailingComment(s.syn, a.text, p) && inTrailingComment(s.syn, b.text, p) {
		return editDistance(ra, rb, 3) <= 3
	}
	prose := false
	switch {
	case isProseDoc(s.f.Path):
		prose = !a.fenced && !b.fenced && !indentedCode(a.text) && strings.Count(string(rb[:p]), "`")%2 == 0
	case isCodePath(s.f.Path) && !s.data && !a.comment && !b.comment:
		prose = inMessageString(a.text, p) && inMessageString(b.text, p)
	}
	return prose && typoFix(ra, rb, p, q)
}

// inTrailingComment reports whether rune index p of line lies in the text
// of a line comment that follows code, and that comment is no directive.
func inTrailingComment(syn commentSyntax, line string, p int) bool {
	code, comment, ok := splitLineComment(syn, line)
	if !ok || strings.TrimSpace(code) == "" || isDirective(comment) {
		return false
	}
	return p >= len([]rune(line))-len([]rune(comment))
}

// indentedCode reports whether a documentation line is indented like a
// code block (four spaces or a tab).
func indentedCode(line string) bool {
	return strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t")
}

// isProseDoc reports whether a documentation file is prose whose spelling
// cannot change behaviour: not a licence or notice, not a dependency list
// such as requirements.txt, not test data.
func isProseDoc(p string) bool {
	if !isDocPath(p) || isDataPath(p) || isRequirementsFile(p) {
		return false
	}
	base := strings.ToUpper(path.Base(p))
	for _, n := range []string{"LICENSE", "LICENCE", "COPYING", "NOTICE", "PATENTS", "COPYRIGHT"} {
		if strings.HasPrefix(base, n) {
			return false
		}
	}
	return true
}

// messageCall matches a line that passes a string to an error, log,
// print, panic or help text.
var messageCall = lazyre.New(`(?i)(\berrors?\.new|\w*errorf?|\bnew\s+\w*(error|exception)|\bpanicf?|` +
	`\bfatal(f|ln)?|\bprint(f|ln)?|\bfprint(f|ln)?|\bwarn(f|ing)?|\binfof?|\bdebugf?|\blogf?|\braise\s+\w+|` +
	`\bconsole\.\w+|\b(message|msg|usage|help|description|summary|hint|reason)\b)\s*[(:=]`)

// inMessageString reports whether rune index p of a code line lies inside
// a string literal of several words, on a line that passes it to an
// error, log, print or help text, and the literal is no SQL.
func inMessageString(line string, p int) bool {
	if !messageCall.Re().MatchString(line) {
		return false
	}
	rs := []rune(line)
	var q rune
	start := -1
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if q == 0 {
			if i >= p {
				return false
			}
			if isQuote(r) {
				q, start = r, i
			}
			continue
		}
		switch {
		case r == '\\':
			i++
		case r == q:
			if i >= p {
				lit := string(rs[start+1 : i])
				return p > start && strings.Contains(lit, " ") && !sqlRule.re.Re().MatchString(lit)
			}
			q = 0
		}
	}
	return false
}

// typoFix reports whether lines a and b, equal but for a[p:len(a)-q] and
// b[p:len(b)-q], differ by a typo fix within one prose word: one letter
// inserted, deleted or replaced, or two adjacent letters swapped, with the
// word's first letter kept, in a word of at least four letters (three for a
// swap, five for a replacement), the word standing alone between spaces or
// sentence punctuation.
func typoFix(a, b []rune, p, q int) bool {
	wa, sa := wordAt(a, p, len(a)-q)
	wb, sb := wordAt(b, p, len(b)-q)
	if sa != sb || p == sa || !proseToken(a, p) || !proseToken(b, p) {
		return false
	}
	short := min(len(wa), len(wb))
	switch {
	case len(wa) == len(wb) && swapped(wa, wb):
		return short >= 3
	case len(wa) == len(wb):
		return short >= 5 && differences(wa, wb) == 1
	case len(wa)-len(wb) == 1 || len(wb)-len(wa) == 1:
		return short >= 4 && editDistance(wa, wb, 1) == 1
	}
	return false
}

// wordAt returns the run of letters around s[from:to] and where it starts.
func wordAt(s []rune, from, to int) ([]rune, int) {
	for from > 0 && unicode.IsLetter(s[from-1]) {
		from--
	}
	for to < len(s) && unicode.IsLetter(s[to]) {
		to++
	}
	return s[from:to], from
}

// swapped reports whether a and b differ by one swap of adjacent letters.
func swapped(a, b []rune) bool {
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && string(a[i+2:]) == string(b[i+2:])
}

func differences(a, b []rune) int {
	n := 0
	for i := range a {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}

// proseToken reports whether the whitespace-separated token around rune
// index p is a prose word: letters with inner apostrophes or hyphens,
// wrapped in at most brackets, quotes, emphasis and sentence punctuation.
// URLs, paths, identifiers, numbers and markup are not.
func proseToken(s []rune, p int) bool {
	from, to := p, p
	for from > 0 && !unicode.IsSpace(s[from-1]) {
		from--
	}
	for to < len(s) && !unicode.IsSpace(s[to]) {
		to++
	}
	tok := strings.TrimLeft(string(s[from:to]), `([{"'*_~`)
	tok = strings.TrimRight(tok, `)]}"'*_~.,;:!?`)
	if tok == "" {
		return false
	}
	for _, r := range tok {
		if !unicode.IsLetter(r) && r != '\'' && r != '-' {
			return false
		}
	}
	return true
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
