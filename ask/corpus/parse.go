package corpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/sotlabs/sot/internal/lazyre"
)

// markdownExts are the extensions of files read as Markdown.
var markdownExts = map[string]bool{".md": true, ".markdown": true, ".mdx": true, ".mkd": true, ".mdown": true}

// parseFile reads one file's bytes as a source. It returns a reason to skip
// the file instead, or an error for a malformed export payload.
func parseFile(path string, data []byte) (Source, string, error) {
	if reason := unreadable(data); reason != "" {
		return Source{}, reason, nil
	}
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	text := normalizeNewlines(string(bytes.TrimPrefix(data, []byte("\uFEFF"))))
	if strings.TrimSpace(text) == "" {
		return Source{}, "empty file (white space only)", nil
	}

	src := Source{ID: hash[:16], Path: path, Hash: hash}
	ext := strings.ToLower(filepath.Ext(path))
	lines := strings.Split(text, "\n")
	fm, body, hasFM := frontmatter(lines)
	var err error
	_, otherAgent := fm["agent_type"]
	switch {
	case hasFM && isNorthstarFrontmatter(fm), !otherAgent && hasPayloadTrailer(lines[body:]):
		err = parseNorthstar(&src, fm, lines[body:], body+1)
	case looksLikeJSON(text):
		skip, perr := parsePayloadFile(&src, text)
		switch {
		case perr != nil:
			return Source{}, "", perr
		case skip != "" && ext == ".json":
			return Source{}, skip, nil
		case skip != "" && markdownExts[ext]:
			parsePlain(&src, FormatMarkdown, nil, lines, 0) // braces, but no payload
		case skip != "":
			parsePlain(&src, FormatText, nil, lines, 0)
		}
	case ext == ".json":
		if !json.Valid(data) {
			return Source{}, "not valid JSON", nil
		}
		return Source{}, "JSON that is not a northstar export payload", nil
	case hasFM || markdownExts[ext]:
		parsePlain(&src, FormatMarkdown, fm, lines, body)
	default:
		parsePlain(&src, FormatText, nil, lines, 0)
	}
	if err != nil {
		return Source{}, "", err
	}
	mask(&src)
	if src.Format == FormatNorthstar || src.Format == FormatPayload {
		src.Text = renderText(&src)
	}
	if src.Text == "" {
		return Source{}, string(src.Format) + " file with no text", nil
	}
	return src, "", nil
}

// unreadable returns why data cannot be read as UTF-8 text, or "".
func unreadable(data []byte) string {
	switch {
	case len(data) == 0:
		return "empty file"
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return "UTF-16 text: only UTF-8 is read"
	case bytes.HasPrefix(data, []byte("%PDF-")):
		return "binary file (PDF): convert it to text or Markdown"
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return fmt.Sprintf("binary file (NUL byte at offset %d)", i)
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return fmt.Sprintf("not UTF-8 (invalid byte 0x%02X at offset %d)", data[off], off)
	}
	return ""
}

// normalizeNewlines turns "\r\n" and lone "\r" into "\n".
func normalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// clean drops a text's leading blank lines and trailing white space.
func clean(s string) string {
	s = strings.TrimRight(normalizeNewlines(s), " \t\n\f\v")
	for {
		line, rest, ok := strings.Cut(s, "\n")
		if !ok || strings.TrimSpace(line) != "" {
			if !ok && strings.TrimSpace(line) == "" {
				return ""
			}
			return s
		}
		s = rest
	}
}

// frontmatter reads the YAML frontmatter at the top of lines: its keys,
// and the index of the first line after it. A block that is not valid
// YAML is read as "key: value" lines, the way northstar reads it.
func frontmatter(lines []string) (map[string]string, int, bool) {
	if len(lines) < 2 || strings.TrimRight(lines[0], " \t") != "---" {
		return nil, 0, false
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if l := strings.TrimRight(lines[i], " \t"); l == "---" || l == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, 0, false
	}
	block := strings.Join(lines[1:end], "\n")
	fm := map[string]string{}
	var m map[string]any
	if err := yaml.Unmarshal([]byte(block), &m); err == nil {
		for k, v := range m {
			fm[strings.ToLower(k)] = scalar(v)
		}
		return fm, end + 1, true
	}
	found := false
	for _, l := range lines[1:end] {
		k, v, ok := strings.Cut(l, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\"'#") {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = strings.ReplaceAll(v[1:len(v)-1], `\"`, `"`)
		}
		fm[strings.ToLower(k)] = strings.TrimSpace(v)
		found = true
	}
	return fm, end + 1, found
}

// scalar is a YAML value as a string: "" for anything but a scalar.
func scalar(v any) string {
	switch v := v.(type) {
	case nil, map[string]any, []any:
		return ""
	case string:
		return strings.TrimSpace(v)
	case time.Time:
		return v.Format(time.RFC3339Nano)
	default:
		return fmt.Sprint(v)
	}
}

// isNorthstarFrontmatter reports whether frontmatter is a northstar
// agent's: northstar's exporter's (agent_type, export_format) or a
// hand-written agent's such as the seed file's (agent_name).
func isNorthstarFrontmatter(fm map[string]string) bool {
	if t, ok := fm["agent_type"]; ok {
		return t == "northstar-meeting-agent"
	}
	if fm["export_format"] == "northstar-agent-md" {
		return true
	}
	_, ok := fm["agent_name"]
	return ok
}

// parsePlain reads a Markdown or text file: the whole of it is the text,
// frontmatter included (it may say what a question needs); the title is
// looked for from line body on, after the frontmatter.
func parsePlain(src *Source, format Format, fm map[string]string, lines []string, body int) {
	src.Format = format
	src.Text = clean(strings.Join(lines, "\n"))
	src.Type = string(format)
	if t := fm["source_type"]; t != "" {
		src.Type = t
	}
	src.Title = fm["title"]
	if src.Title == "" {
		src.Title = firstHeading(lines[body:])
	}
	if src.Title == "" {
		src.Title = fileTitle(src.Path)
	}
	for _, k := range []string{"date", "created"} {
		if d, ok := parseDate(fm[k]); ok {
			src.Date = d
			break
		}
	}
	if src.Date.IsZero() {
		src.Date = fileDate(src.Path)
	}
}

// fileTitle is a file's name without its extension.
func fileTitle(path string) string {
	base := filepath.Base(path)
	if t := strings.TrimSpace(strings.TrimSuffix(base, filepath.Ext(base))); t != "" {
		return t
	}
	return strings.TrimSpace(base)
}

var fileDateRE = lazyre.New(`(?:^|[^0-9])(\d{4}-\d{2}-\d{2})(?:[^0-9]|$)`)

// fileDate is the YYYY-MM-DD date in a file's name, or zero.
func fileDate(path string) time.Time {
	m := fileDateRE.Re().FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return time.Time{}
	}
	d, err := time.Parse(time.DateOnly, m[1])
	if err != nil {
		return time.Time{}
	}
	return d
}

// dateLayouts are the forms of date Load reads: ISO 8601 and northstar's
// readable dates.
var dateLayouts = []string{
	time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05",
	"2006-01-02 15:04", time.DateOnly, "Monday, January 2, 2006", "January 2, 2006", "Jan 2, 2006",
}

func parseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false
	}
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// fence follows fenced code blocks line by line.
type fence struct {
	char  byte
	width int
}

// step takes the next line and reports whether it is inside a fenced
// block or is one of its fence lines.
func (f *fence) step(line string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return f.width > 0
	}
	n := 0
	for n < len(t) && (t[n] == '`' || t[n] == '~') && t[n] == t[0] {
		n++
	}
	if f.width > 0 {
		if n >= f.width && t[0] == f.char && strings.TrimSpace(t[n:]) == "" {
			f.width = 0
		}
		return true
	}
	if n >= 3 && !(t[0] == '`' && strings.Contains(t[n:], "`")) {
		f.char, f.width = t[0], n
		return true
	}
	return false
}

var atxRE = lazyre.New(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)

// heading returns the level and text of an ATX heading line.
func heading(line string) (int, string, bool) {
	m := atxRE.Re().FindStringSubmatch(line)
	if m == nil {
		return 0, "", false
	}
	return len(m[1]), strings.TrimSpace(m[2]), true
}

var setextRE = lazyre.New(`^ {0,3}(=+|-+)[ \t]*$`)

// firstHeading is the text of the first heading in lines, ATX or setext,
// outside fenced code; "" when there is none.
func firstHeading(lines []string) string {
	var f fence
	for i, l := range lines {
		if f.step(l) {
			continue
		}
		if _, t, ok := heading(l); ok {
			if t != "" {
				return t
			}
			continue
		}
		t := strings.TrimSpace(l)
		if i+1 < len(lines) && t != "" && setextRE.Re().MatchString(lines[i+1]) && !bullet.Re().MatchString(t) && !strings.HasPrefix(t, ">") {
			return t
		}
	}
	return ""
}

func looksLikeJSON(text string) bool {
	return strings.HasPrefix(strings.TrimLeft(text, " \t\n"), "{")
}

// parsePayloadFile reads a file that holds an export payload alone. It
// returns a reason to skip a file that is not one.
func parsePayloadFile(src *Source, text string) (string, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &probe); err != nil {
		line := 1
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line = lineAt(text, int(se.Offset))
		}
		return fmt.Sprintf("not valid JSON (line %d: %s)", line, strings.TrimPrefix(err.Error(), "json: ")), nil
	}
	_, analysis := probe["analysis"]
	_, sot := probe["sotMetadata"]
	var schema string
	_ = json.Unmarshal(probe["schema"], &schema)
	if !analysis && !sot && schema != "northstar-agent-md" {
		return "JSON that is not a northstar export payload", nil
	}
	p, err := decodePayload(src.Path, []byte(text), 1)
	if err != nil {
		return "", err
	}
	src.Format = FormatPayload
	applyPayload(src, p)
	if src.Title == "" {
		src.Title = fileTitle(src.Path)
	}
	return "", nil
}

// lineAt is the 1-based line of text at byte offset off.
func lineAt(text string, off int) int {
	off = min(max(off, 0), len(text))
	return 1 + strings.Count(text[:off], "\n")
}

// Northstar exports.

// sectionKind names the sections of a northstar export.
type sectionKind int

const (
	secOther sectionKind = iota
	secSummary
	secKeyPoints
	secActions
	secSentiment
	secTranscript
	secChrome  // northstar's own: Metadata and the "(JSON)" blocks
	secPayload // the Export Payload (JSON) block
)

const payloadHeading = "export payload (json)"

func sectionOf(title string) sectionKind {
	t := strings.ToLower(strings.Join(strings.Fields(title), " "))
	switch t {
	case "summary", "executive summary":
		return secSummary
	case "key points":
		return secKeyPoints
	case "action items":
		return secActions
	case "sentiment", "sentiment analysis":
		return secSentiment
	case "transcript", "full transcript":
		return secTranscript
	case payloadHeading:
		return secPayload
	case "metadata":
		return secChrome
	}
	if strings.HasSuffix(t, "(json)") {
		return secChrome
	}
	return secOther
}

// jsonBlock is a "## Name (JSON)" section holding one fenced block.
type jsonBlock struct {
	name    string // lower case
	heading int    // line index of the heading
	start   int    // line index of the block's first content line
	end     int    // line index of its closing fence
}

// trailer finds the JSON blocks northstar writes at the end of an export:
// the earliest "## ... (JSON)" heading from which the rest of lines is
// nothing but such sections, each holding one fenced block, with blank
// lines and "---" rules between them. It returns the index of that heading
// (len(lines) when there is none) and the blocks.
func trailer(lines []string) (int, []jsonBlock) {
	for i, l := range lines {
		level, t, ok := heading(l)
		if !ok || level > 2 || !strings.HasSuffix(strings.ToLower(t), "(json)") {
			continue
		}
		if blocks, ok := jsonBlocks(lines, i); ok {
			return i, blocks
		}
	}
	return len(lines), nil
}

// jsonBlocks reads lines from index i to the end as "(JSON)" sections.
func jsonBlocks(lines []string, i int) ([]jsonBlock, bool) {
	var blocks []jsonBlock
	for {
		for i < len(lines) && isRule(lines[i]) {
			i++
		}
		if i == len(lines) {
			return blocks, len(blocks) > 0
		}
		level, t, ok := heading(lines[i])
		if !ok || level > 2 || !strings.HasSuffix(strings.ToLower(t), "(json)") {
			return nil, false
		}
		b := jsonBlock{name: strings.ToLower(strings.Join(strings.Fields(t), " ")), heading: i}
		i++
		for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
			i++
		}
		if i == len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i]), "```") {
			return nil, false
		}
		i++
		b.start = i
		for i < len(lines) && strings.TrimSpace(lines[i]) != "```" {
			// No line of JSON starts with a backtick or a "#": such a
			// line means the fence opened elsewhere.
			if t := strings.TrimSpace(lines[i]); strings.HasPrefix(t, "`") || strings.HasPrefix(t, "#") {
				return nil, false
			}
			i++
		}
		if i == len(lines) {
			return nil, false
		}
		b.end = i
		blocks = append(blocks, b)
		i++
	}
}

// isRule reports whether a line is blank or a thematic break, the "---"
// northstar puts between sections.
func isRule(line string) bool {
	t := strings.ReplaceAll(strings.TrimSpace(line), " ", "")
	if t == "" {
		return true
	}
	if len(t) < 3 {
		return false
	}
	return strings.Count(t, t[:1]) == len(t) && strings.Contains("-*_", t[:1])
}

// hasPayloadTrailer reports whether a file without frontmatter ends in an
// export payload block.
func hasPayloadTrailer(lines []string) bool {
	_, blocks := trailer(lines)
	for _, b := range blocks {
		if b.name == payloadHeading {
			return true
		}
	}
	return false
}

// section is a part of an export's head: its heading and its lines.
type section struct {
	kind    sectionKind
	heading string // the heading line; "" for text before the first
	lines   []string
	line    int // index of its first content line
}

// parseNorthstar reads a northstar agent export: fm is its frontmatter,
// lines its body, which starts at line first of the file.
func parseNorthstar(src *Source, fm map[string]string, lines []string, first int) error {
	src.Format = FormatNorthstar
	end, blocks := trailer(lines)

	// The head: sections up to the transcript's heading; the transcript
	// runs from there to the trailer.
	var secs []section
	cur := section{line: 0}
	transcript, transcriptFull := -1, false
	var f fence
	for i := 0; i < end; i++ {
		if f.step(lines[i]) {
			cur.lines = append(cur.lines, lines[i])
			continue
		}
		level, t, ok := heading(lines[i])
		if !ok || level > 2 {
			cur.lines = append(cur.lines, lines[i])
			continue
		}
		kind := sectionOf(t)
		if kind == secOther && level == 1 && src.Title == "" && !hasContent(secs, cur) {
			// The title line, "# Meeting Agent: Name" or "# Name".
			title := t
			if rest, ok := strings.CutPrefix(t, "Meeting Agent:"); ok {
				title = strings.TrimSpace(rest)
			}
			src.Title = title
			cur.lines = nil
			continue
		}
		secs = append(secs, cur)
		if kind == secTranscript {
			transcript = i + 1
			transcriptFull = strings.EqualFold(strings.Join(strings.Fields(t), " "), "full transcript")
			break
		}
		cur = section{kind: kind, heading: lines[i], line: i + 1}
	}
	if transcript < 0 {
		secs = append(secs, cur)
	}

	var extra []string
	var payloadSec *section
	seen := map[sectionKind]bool{}
	for i := range secs {
		s := &secs[i]
		body := clean(strings.Join(trimRules(s.lines), "\n"))
		if s.kind != secOther && s.kind != secChrome && s.kind != secPayload && seen[s.kind] {
			s.kind = secOther // a second one is kept as it is
		}
		seen[s.kind] = true
		switch s.kind {
		case secSummary:
			src.Summary = body
		case secKeyPoints:
			src.KeyPoints = parseList(body, false)
		case secActions:
			src.ActionItems = parseList(body, true)
		case secSentiment:
			src.Sentiment = sentimentOf(body)
		case secPayload:
			if payloadSec == nil {
				payloadSec = s
			}
		case secOther:
			part := body
			if s.heading != "" {
				part = strings.TrimSpace(s.heading)
				if body != "" {
					part += "\n\n" + body
				}
			}
			if part != "" {
				extra = append(extra, part)
			}
		}
	}
	src.Extra = strings.Join(extra, "\n\n")
	if transcript >= 0 {
		t := trimRules(lines[transcript:end])
		if transcriptFull {
			t = unfence(t)
		}
		src.Transcript = clean(strings.Join(t, "\n"))
	}

	// Frontmatter, then the payload over it and over the sections.
	src.Type = fm["source_type"]
	src.AgentID = fm["agent_id"]
	if n := fm["agent_name"]; n != "" {
		src.Title = n
	}
	if d, ok := parseDate(fm["created"]); ok {
		src.Date = d
	}

	var payload []byte
	payloadLine := 0
	for _, b := range blocks {
		if b.name == payloadHeading {
			payload, payloadLine = []byte(strings.Join(lines[b.start:b.end], "\n")), first+b.start
		}
	}
	if payload == nil && payloadSec != nil {
		start, stop, ok := fencedBlock(payloadSec.lines)
		if !ok {
			return &PayloadError{Path: src.Path, Line: first + payloadSec.line - 1, Msg: "the block under the heading is not a closed ```json fence"}
		}
		payload, payloadLine = []byte(strings.Join(payloadSec.lines[start:stop], "\n")), first+payloadSec.line+start
	}
	if payload == nil && transcript >= 0 {
		if l, ok := unclosedPayload(lines[transcript:end]); ok {
			return &PayloadError{Path: src.Path, Line: first + transcript + l, Msg: "its ```json fence is never closed"}
		}
	}
	if payload != nil {
		p, err := decodePayload(src.Path, payload, payloadLine)
		if err != nil {
			return err
		}
		applyPayload(src, p)
	}
	if src.Title == "" {
		src.Title = fileTitle(src.Path)
	}
	return nil
}

// hasContent reports whether anything but blank lines came before.
func hasContent(secs []section, cur section) bool {
	if len(secs) > 0 {
		return true
	}
	for _, l := range cur.lines {
		if strings.TrimSpace(l) != "" {
			return true
		}
	}
	return false
}

// trimRules drops the blank lines and "---" rules at the end of lines.
func trimRules(lines []string) []string {
	for len(lines) > 0 && isRule(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// unfence returns the content of lines that are one fenced block (blank
// lines around it aside), and lines as they are otherwise.
func unfence(lines []string) []string {
	i, j := 0, len(lines)
	for i < j && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	for j > i && strings.TrimSpace(lines[j-1]) == "" {
		j--
	}
	if j-i < 2 {
		return lines
	}
	open := strings.TrimSpace(lines[i])
	n := 0
	for n < len(open) && open[n] == open[0] {
		n++
	}
	if n < 3 || (open[0] != '`' && open[0] != '~') {
		return lines
	}
	closing := strings.TrimSpace(lines[j-1])
	if len(closing) < n || strings.Trim(closing, closing[:1]) != "" || closing[0] != open[0] {
		return lines
	}
	return lines[i+1 : j-1]
}

// fencedBlock finds the first fenced block in lines: the indexes of its
// first content line and of its closing fence.
func fencedBlock(lines []string) (int, int, bool) {
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if !strings.HasPrefix(strings.TrimSpace(l), "```") {
			return 0, 0, false
		}
		for j := i + 1; j < len(lines); j++ {
			if strings.TrimSpace(lines[j]) == "```" {
				return i + 1, j, true
			}
		}
		return 0, 0, false
	}
	return 0, 0, false
}

// unclosedPayload finds an "## Export Payload (JSON)" heading whose
// ```json fence runs to the end of lines: a file cut short.
func unclosedPayload(lines []string) (int, bool) {
	for i, l := range lines {
		if level, t, ok := heading(l); !ok || level > 2 || sectionOf(t) != secPayload {
			continue
		}
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j == len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[j]), "```json") {
			continue
		}
		closed := false
		for _, m := range lines[j+1:] {
			if strings.TrimSpace(m) == "```" {
				closed = true
				break
			}
		}
		if !closed {
			return i, true
		}
	}
	return 0, false
}

var overallRE = lazyre.New(`(?im)^\s*(?:\*\*)?Overall Sentiment(?:\*\*)?\s*:(?:\*\*)?\s*(.+)$`)

// sentimentOf reads a sentiment section: the value of its "**Overall
// Sentiment**: X" line when it has one, else all of it.
func sentimentOf(body string) string {
	if m := overallRE.Re().FindStringSubmatch(body); m != nil {
		return strings.TrimSpace(m[1])
	}
	return body
}

// Lists.

var (
	bullet     = lazyre.New(`^(?:[-*+](?:[ \t]+|$)|[•▸☐][ \t]*|\d{1,9}[.)](?:[ \t]+|$))`)
	checkboxRE = lazyre.New(`^\[[ xX]\](?:[ \t]+|$)`)
)

// listMarker returns the text of a list item line after its marker.
func listMarker(line string) (string, bool) {
	loc := bullet.Re().FindStringIndex(line)
	if loc == nil {
		return "", false
	}
	return line[loc[1]:], true
}

// parseList reads the items of a list, the way northstar writes and reads
// them: a line that starts at the margin starts an item, its list marker
// ("-", "*", "+", "•", "▸", "☐", "1." or "1)") removed, and with checkbox
// a "[ ]" or "[x]" after it too; an indented line continues the item
// before it. Blank lines are left out.
func parseList(text string, checkbox bool) []string {
	var items []string
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if len(items) > 0 && (l[0] == ' ' || l[0] == '\t') {
			items[len(items)-1] += "\n" + t
			continue
		}
		if rest, ok := listMarker(t); ok {
			t = rest
			if checkbox {
				if loc := checkboxRE.Re().FindStringIndex(t); loc != nil {
					t = t[loc[1]:]
				}
			}
		}
		items = append(items, strings.TrimSpace(t))
	}
	return normalizeItems(items)
}

// normalizeItems trims every line of every item, drops blank lines and
// empty items.
func normalizeItems(items []string) []string {
	var out []string
	for _, it := range items {
		var ls []string
		for _, l := range strings.Split(normalizeNewlines(it), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				ls = append(ls, l)
			}
		}
		if len(ls) > 0 {
			out = append(out, strings.Join(ls, "\n"))
		}
	}
	return out
}

// renderList writes items as a Markdown list that parseList reads back as
// the same items: "- " before each, later lines indented. checkbox says
// the list is read as a checkbox list: then boxes puts "[ ] " before every
// item, and without boxes an item that starts like a checkbox gets one of
// its own, so that reading it removes that one only.
func renderList(items []string, checkbox, boxes bool) string {
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("- ")
		first, _, _ := strings.Cut(it, "\n")
		if checkbox && (boxes || checkboxRE.Re().MatchString(first)) {
			b.WriteString("[ ] ")
		}
		b.WriteString(strings.ReplaceAll(it, "\n", "\n  "))
	}
	return b.String()
}

// renderText is the text of an export: see Source.Text.
func renderText(s *Source) string {
	if s.Summary == "" && len(s.KeyPoints) == 0 && len(s.ActionItems) == 0 && s.Sentiment == "" && s.Extra == "" {
		return s.Transcript
	}
	var b strings.Builder
	add := func(title, body string) {
		if body == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		if title != "" {
			b.WriteString("## " + title + "\n\n")
		}
		b.WriteString(body)
	}
	add("Summary", s.Summary)
	add("Key Points", renderList(s.KeyPoints, false, false))
	add("Action Items", renderList(s.ActionItems, true, false))
	add("Sentiment", s.Sentiment)
	add("", s.Extra)
	add("Transcript", s.Transcript)
	return b.String()
}
