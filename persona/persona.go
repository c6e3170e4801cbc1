// Package persona is sot's persona library: the kinds of persona (specialist,
// lens, role, debater, observer and the shared rules), parsing and validating
// their Markdown files, discovering them at four levels (explicit, project,
// user, built-in) and selecting which ones take part in a run.
package persona

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sotlabs/sot/internal/lazyre"
	"github.com/sotlabs/sot/internal/yamlfile"
)

// Kind is what a persona is for.
type Kind string

// Persona kinds.
const (
	Specialist  Kind = "specialist"   // reviews material by one method (seeds 001, 002)
	Lens        Kind = "lens"         // a perspective overlay on a specialist
	Role        Kind = "role"         // a cognitive perspective role for questions over a corpus
	Debater     Kind = "debater"      // argues a stance in a philosophical debate
	Observer    Kind = "observer"     // picks branch questions from a bias
	SharedRules Kind = "shared-rules" // rules every specialist follows
)

// Kinds lists every kind, in display order.
var Kinds = []Kind{Specialist, Lens, Role, Debater, Observer, SharedRules}

// Level is where a persona was found. Lower levels are more specific.
type Level int

// Discovery levels, most specific first.
const (
	LevelExplicit Level = iota // a file named by the caller
	LevelProject               // .sot/ or .paw/ in the repository
	LevelUser                  // $XDG_CONFIG_HOME/sot/ or ~/.paw/
	LevelBuiltin               // embedded in the binary
)

func (l Level) String() string {
	return [...]string{"explicit", "project", "user", "built-in"}[l]
}

// MarshalText writes the level's name.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// DefaultContext is the context of a specialist that declares none.
const DefaultContext = "implementation"

// Frontmatter is the YAML header of a persona file. Each kind uses some of
// the fields; unknown keys are allowed, so files written for PAW load as is.
type Frontmatter struct {
	Name        string `yaml:"name"`
	Kind        string `yaml:"kind"`
	Description string `yaml:"description"`

	// specialist
	Context             any      `yaml:"context"` // must be a single string
	Model               string   `yaml:"model"`
	SharedRulesIncluded bool     `yaml:"shared_rules_included"`
	Signals             []string `yaml:"signals"`

	// role
	PromptPrefix string   `yaml:"prompt_prefix"`
	Traits       []string `yaml:"traits"`
	Weight       float64  `yaml:"weight"`
	Triggers     []string `yaml:"triggers"`
	Tier         string   `yaml:"tier"`
	Color        string   `yaml:"color"`

	// debater and observer
	Stance           string   `yaml:"stance"`
	Focus            string   `yaml:"focus"`
	Lineage          string   `yaml:"lineage"`
	Methodology      string   `yaml:"methodology"`
	BlindSpots       []string `yaml:"blind_spots"`
	Voice            string   `yaml:"voice"`
	Bias             string   `yaml:"bias"`
	ExampleQuestions []string `yaml:"example_questions"`
	AntiExamples     []string `yaml:"anti_examples"`
}

// Persona is one parsed persona file.
type Persona struct {
	// ID is the file name without .md; it is how personas are named on the
	// command line and how a more specific level overrides a less specific one.
	ID    string `json:"name"`
	Kind  Kind   `json:"kind"`
	Level Level  `json:"level"`
	// Path is the source file; built-ins read "builtin:specialists/security.md".
	Path string      `json:"path"`
	Meta Frontmatter `json:"-"`
	// Body is the Markdown after the frontmatter.
	Body string `json:"-"`
	// Sections maps each "## " heading to its text.
	Sections map[string]string `json:"-"`
	// Title is the first "# " heading, if any.
	Title string `json:"title,omitempty"`
	// Digest is the hex SHA-256 of the file's content, by which a user's
	// trust in the file is checked.
	Digest string `json:"-"`
	// bodyLine is the file line on which Body starts.
	bodyLine int
	// frontmatter is the YAML header's text, which starts on line 2;
	// frontmatterEnd is the line of its closing ---, 0 without one.
	frontmatter    string
	frontmatterEnd int
	// titleLine is the file line of Title, 0 without one.
	titleLine int
	// heads are the "## " headings in file order, with their lines.
	heads []heading
	// derived and domain are the signals read from the persona's own
	// text, for a specialist that declares none (see SelectionSignals).
	derived, domain []string
}

// heading is one "## " heading of a persona file.
type heading struct {
	text string
	line int
}

// FrontmatterLine returns the file line of a top-level frontmatter key, or 0.
func (p *Persona) FrontmatterLine(key string) int {
	for i, line := range strings.Split(p.frontmatter, "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok && strings.HasPrefix(strings.TrimLeft(rest, " \t"), ":") {
			return i + 2
		}
	}
	return 0
}

// Context returns the specialist's context, lower-cased, defaulting to
// "implementation".
func (p *Persona) Context() string {
	if s, ok := p.Meta.Context.(string); ok && strings.TrimSpace(s) != "" {
		return strings.ToLower(strings.TrimSpace(s))
	}
	return DefaultContext
}

// DisplayName is the frontmatter name, or the ID.
func (p *Persona) DisplayName() string {
	if p.Meta.Name != "" {
		return p.Meta.Name
	}
	return p.ID
}

// sectionAliases are other names a section goes by: PAW's shared rules
// call their output format "Required Output Format".
var sectionAliases = map[string][]string{
	"output format": {"Required Output Format"},
}

// Heading finds the section that Section(name) reads and returns its
// heading as written and its file line. A heading matches when it equals
// name, ignoring case, or starts with name followed by punctuation or a
// space ("Cognitive Strategy: Deployment-Path Tracing" is the Cognitive
// Strategy); an exact heading wins over one with a suffix, and a
// section's other names (PAW's "Required Output Format" for "Output
// Format") count too.
func (p *Persona) Heading(name string) (text string, line int, ok bool) {
	names := append([]string{name}, sectionAliases[strings.ToLower(name)]...)
	for _, exact := range []bool{true, false} {
		for _, n := range names {
			for _, h := range p.heads {
				if headingMatches(h.text, n, exact) {
					return h.text, h.line, true
				}
			}
		}
	}
	return "", 0, false
}

// headingMatches reports whether a heading names a section: equal to name
// ignoring case, or (unless exact) name followed by a suffix that starts
// with neither a letter nor a digit.
func headingMatches(h, name string, exact bool) bool {
	if strings.EqualFold(h, name) {
		return true
	}
	if exact || len(h) <= len(name) || !strings.EqualFold(h[:len(name)], name) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(h[len(name):])
	return !unicode.IsLetter(r) && !unicode.IsDigit(r)
}

// Section returns a section's text by heading (see Heading for what
// matches), or "".
func (p *Persona) Section(name string) string {
	if h, _, ok := p.Heading(name); ok {
		return p.Sections[h]
	}
	return ""
}

// HasSection reports whether a heading names the section (see Heading).
func (p *Persona) HasSection(name string) bool {
	_, _, ok := p.Heading(name)
	return ok
}

// Problem is something wrong with a persona file, at a line when known.
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Message string `json:"message"`
	// Warning problems are reported but do not make a file unusable.
	Warning bool `json:"warning,omitempty"`
	// placeholder marks a template placeholder left in the file.
	placeholder bool
}

func (p Problem) Error() string {
	loc := p.File
	if p.Line > 0 {
		loc = fmt.Sprintf("%s:%d", p.File, p.Line)
		if p.Column > 0 {
			loc = fmt.Sprintf("%s:%d", loc, p.Column)
		}
	}
	if p.Warning && !strings.HasPrefix(p.Message, "skipped") {
		return loc + ": warning: " + p.Message
	}
	return loc + ": " + p.Message
}

// idPattern is what a persona name may look like. Names reach file names
// (REVIEW-{NAME}.md), so nothing else is allowed.
var idPattern = lazyre.New(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// ValidID reports whether s may name a persona.
func ValidID(s string) bool { return idPattern.Re().MatchString(s) || s == "_shared-rules" }

// IDFromFile turns a file name into a persona ID: lower-cased, .md dropped.
func IDFromFile(name string) string {
	return strings.ToLower(strings.TrimSuffix(path.Base(name), ".md"))
}

// Parse reads a persona file. kind is the kind implied by where the file was
// found ("" when unknown); a frontmatter kind overrides it. Parse returns the
// persona and every problem found; a persona with a non-warning problem
// must not be used.
func Parse(file string, data []byte, kind Kind, level Level) (*Persona, []Problem) {
	sum := sha256.Sum256(data)
	p := &Persona{ID: IDFromFile(file), Kind: kind, Level: level, Path: file, Digest: hex.EncodeToString(sum[:])}
	var probs []Problem
	add := func(line int, warn bool, format string, args ...any) {
		probs = append(probs, Problem{File: file, Line: line, Message: fmt.Sprintf(format, args...), Warning: warn})
	}
	if len(bytes.TrimSpace(data)) == 0 {
		add(1, false, "file is empty")
		return p, probs
	}
	if bytes.IndexByte(data, 0) >= 0 {
		add(lineAt(data, bytes.IndexByte(data, 0)), false, "file contains NUL bytes; is it binary?")
		return p, probs
	}
	if !utf8.Valid(data) {
		add(lineAt(data, invalidUTF8(data)), false, "file is not UTF-8 text; save it as UTF-8")
		return p, probs
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	text = strings.TrimPrefix(text, "\ufeff")
	body, bodyLine := text, 1
	if strings.HasPrefix(text, "---\n") {
		end := strings.Index(text[4:], "\n---")
		if end < 0 {
			add(1, false, "frontmatter starts with --- but never ends; close it with a line holding only ---")
			return p, probs
		}
		fm := text[4 : 4+end]
		p.frontmatter = fm
		p.frontmatterEnd = strings.Count(fm, "\n") + 3
		rest := text[4+end+4:]
		rest = strings.TrimPrefix(rest, "\n")
		bodyLine = strings.Count(text[:len(text)-len(rest)], "\n") + 1
		body = rest
		if meta, ok := builtinMeta(file); ok && level == LevelBuiltin {
			// A built-in's frontmatter, decoded when sot was built
			// (builtin_meta.go): decoding YAML was most of what reading
			// the 36 built-ins cost each run.
			p.Meta = meta
		} else if err := yamlfile.Decode(file, []byte(fm), &p.Meta, false, 1); err != nil {
			prob := Problem{File: file, Message: "frontmatter: " + err.Error()}
			if ye, ok := err.(*yamlfile.Error); ok {
				prob.Line, prob.Column, prob.Message = ye.Line, ye.Column, "frontmatter: "+ye.Msg
			}
			probs = append(probs, prob)
			return p, probs
		}
	}
	p.Body, p.bodyLine = body, bodyLine
	p.sections()
	if p.Meta.Kind != "" {
		k := Kind(strings.ToLower(strings.TrimSpace(p.Meta.Kind)))
		if !knownKind(k) {
			add(p.FrontmatterLine("kind"), false, "unknown kind %q; use one of specialist, lens, role, debater, observer, shared-rules", p.Meta.Kind)
			return p, probs
		}
		p.Kind = k
	}
	if p.ID == "_shared-rules" {
		p.Kind = SharedRules
	}
	if p.Kind == "" {
		p.Kind = Specialist
	}
	if !ValidID(p.ID) {
		// The file's name is at fault, not a line of it.
		add(1, false, "name %q is not allowed: use lower-case letters, digits, - and _ (the name becomes part of output file names); rename the file", p.ID)
	}
	probs = append(probs, p.validate()...)
	probs = append(probs, placeholders(file, text)...)
	if p.Kind == Specialist && len(p.Meta.Signals) == 0 {
		p.derived, p.domain = deriveSignals(p)
	}
	return p, probs
}

func knownKind(k Kind) bool {
	for _, v := range Kinds {
		if v == k {
			return true
		}
	}
	return false
}

// sections splits the body into its "# " title and "## " sections,
// ignoring headings inside code fences, and records each heading's line.
func (p *Persona) sections() {
	p.Sections = map[string]string{}
	var cur string
	var buf strings.Builder
	inFence := false
	flush := func() {
		if cur != "" {
			p.Sections[cur] = strings.TrimSpace(buf.String())
		}
		buf.Reset()
	}
	for i, line := range strings.Split(p.Body, "\n") {
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~") {
			inFence = !inFence
		}
		switch {
		case !inFence && strings.HasPrefix(line, "## "):
			flush()
			cur = strings.TrimSpace(strings.TrimPrefix(line, "## "))
			p.heads = append(p.heads, heading{cur, p.bodyLine + i})
			continue
		case !inFence && strings.HasPrefix(line, "# ") && p.Title == "":
			p.Title = strings.TrimSpace(strings.TrimPrefix(line, "# "))
			p.titleLine = p.bodyLine + i
			continue
		}
		if cur != "" {
			buf.WriteString(line)
			buf.WriteByte('\n')
		}
	}
	flush()
}

// lineAt is the line (from 1) holding byte offset i of data.
func lineAt(data []byte, i int) int {
	if i < 0 {
		return 0
	}
	return bytes.Count(data[:i], []byte("\n")) + 1
}

// invalidUTF8 is the offset of the first byte that is not UTF-8, or -1.
func invalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return -1
}

// anchor is where a problem about something missing from the file is
// reported: the title's line, else the line closing the frontmatter, else
// line 1; where says which, for the message.
func (p *Persona) anchor() (line int, where string) {
	switch {
	case p.titleLine > 0:
		return p.titleLine, "below the title on this line"
	case p.frontmatterEnd > 0:
		return p.frontmatterEnd, "below the frontmatter, which ends on this line"
	}
	return 1, "to the file"
}

// ReviewFile is the path of a specialist's review file in dir:
// REVIEW-{SPECIALIST}.md, or REVIEW-{SPECIALIST}-{LENS}.md when a lens
// applies. Names that could leave dir or smuggle path characters are refused.
func ReviewFile(dir, specialist, lens string) (string, error) {
	for _, n := range []string{specialist, lens} {
		if n != "" && !idPattern.Re().MatchString(n) {
			return "", fmt.Errorf("persona name %q cannot be used in a file name", n)
		}
	}
	if specialist == "" {
		return "", fmt.Errorf("empty specialist name")
	}
	name := "REVIEW-" + strings.ToUpper(specialist)
	if lens != "" {
		name += "-" + strings.ToUpper(lens)
	}
	return filepath.Join(dir, name+".md"), nil
}
