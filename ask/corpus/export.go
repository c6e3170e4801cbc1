package corpus

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/sotlabs/sot/internal/lazyre"
)

// Export writes s as a northstar agent file, the form northstar.LM's
// exporter writes (frontmatter with agent_type: northstar-meeting-agent,
// "# Meeting Agent: Title", Executive Summary, Key Points, Action Items,
// Sentiment Analysis, Full Transcript) ending in an "## Export Payload
// (JSON)" block that holds every field. Both of northstar's importers read
// the file (its meeting-agent importer refuses an agent with neither
// summary nor transcript, so the file of a source with neither only its
// orchestrator takes), and Load reads it back as s: the same Title, Type, Date,
// AgentID, Summary, KeyPoints, ActionItems, Sentiment, Transcript, Extra,
// Metadata and so Text (its ID, Hash and Path are the new file's), for
// every Source Load returns.
//
// The transcript is s.Transcript, or s.Text when s has neither transcript
// nor analysis (a Markdown or text source, whose text becomes the
// transcript). A section is left out, and read from the payload, when
// northstar's importer would cut or misread it: a text with a "#" heading,
// a "---" rule or a fence among its lines, or "## " anywhere; a sentiment
// of more than one line; a transcript with "```" in it, or a "## " heading
// named like one of northstar's sections. Extra goes in the payload's
// "sot" member, which northstar ignores, and after the title line too
// when northstar cannot mistake it for one of its sections. In the
// frontmatter and the title line, where northstar would take a "## " in a
// name for a section, "##" becomes "#"; the payload has the names as they
// are. The output depends on s alone.
func Export(s Source) []byte {
	transcript := s.Transcript
	if transcript == "" && s.Summary == "" && len(s.KeyPoints) == 0 && len(s.ActionItems) == 0 && s.Sentiment == "" && s.Extra == "" {
		transcript = s.Text
	}
	id := s.AgentID

	var b strings.Builder
	b.WriteString("---\nagent_type: northstar-meeting-agent\nversion: 2.0\n")
	if !s.Date.IsZero() {
		b.WriteString("created: " + s.Date.Format(time.RFC3339Nano) + "\n")
	}
	if s.Type != "" {
		b.WriteString("source_type: " + yamlValue(unhash(s.Type)) + "\n")
	}
	b.WriteString("agent_name: " + strconv.Quote(unhash(s.Title)) + "\n")
	if id != "" {
		b.WriteString("agent_id: " + strconv.Quote(unhash(id)) + "\n")
	}
	b.WriteString("export_format: northstar-agent-md\n---\n\n")
	b.WriteString("# Meeting Agent: " + headingText(s.Title) + "\n\n")

	section := func(title, body string) {
		b.WriteString("## " + title + "\n\n" + body + "\n\n---\n\n")
	}
	if s.Extra != "" && extraSafe(s.Extra) {
		b.WriteString(s.Extra + "\n\n---\n\n")
	}
	if s.Summary != "" && sectionSafe(s.Summary) {
		section("Executive Summary", s.Summary)
	}
	if kp := renderList(s.KeyPoints, false, false); kp != "" && sectionSafe(kp) {
		section("Key Points", kp)
	}
	if ai := renderList(s.ActionItems, true, true); ai != "" && sectionSafe(ai) {
		section("Action Items", ai)
	}
	if s.Sentiment != "" && sectionSafe(s.Sentiment) && !strings.Contains(s.Sentiment, "\n") {
		section("Sentiment Analysis", "**Overall Sentiment**: "+s.Sentiment)
	}
	if transcript != "" && transcriptSafe(transcript) {
		section("Full Transcript", "```\n"+transcript+"\n```")
	}

	b.WriteString("## Export Payload (JSON)\n\n```json\n")
	b.Write(exportPayload(s, id, transcript))
	b.WriteString("\n```\n")
	return []byte(b.String())
}

// extraSafe reports whether Extra can be written as it is after the title
// line: it leaves no fence open (which would take in the sections after
// it) and names none of northstar's sections (which northstar looks for
// by name anywhere in the file).
func extraSafe(text string) bool {
	var f fence
	for _, l := range strings.Split(text, "\n") {
		f.step(l)
	}
	return f.width == 0 && transcriptSafe(strings.ReplaceAll(text, "```", ""))
}

// hasControl reports whether text has a control character other than tab
// and line break: a NUL would make the file binary, and others are no
// better in a section.
func hasControl(text string) bool {
	return strings.ContainsFunc(text, func(r rune) bool {
		return r != '\t' && r != '\n' && (r < 0x20 || r == 0x7f)
	})
}

// headingText is s on one line, without control characters and with every
// run of "#" made one.
func headingText(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	return unhash(strings.Join(strings.Fields(s), " "))
}

var hashes = lazyre.New(`##+`)

// unhash turns every run of "#" in s into one.
func unhash(s string) string { return hashes.Re().ReplaceAllString(s, "#") }

var plainYAML = lazyre.New(`^[A-Za-z][A-Za-z0-9_. -]*$`)

// yamlValue is v as a YAML scalar: bare when it is a plain word (northstar
// reads source_type bare), quoted otherwise.
func yamlValue(v string) string {
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "null", "y", "n":
		return strconv.Quote(v)
	}
	if plainYAML.Re().MatchString(v) && !strings.HasSuffix(v, " ") {
		return v
	}
	return strconv.Quote(v)
}

// sectionSafe reports whether both of northstar's importers, and Load,
// read text written as a section's body as it is: none of its lines is a
// "#" heading, a "---" rule (or "***", "___") or a fence, and it has no
// "## " anywhere (northstar finds sections by "## Name" wherever it is).
func sectionSafe(text string) bool {
	if strings.Contains(text, "## ") || hasControl(text) {
		return false
	}
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "#") || strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") ||
			(len(t) >= 3 && isRule(t)) || setextRE.Re().MatchString(l) {
			return false
		}
	}
	return true
}

// transcriptSafe reports whether northstar reads a transcript in a fenced
// Full Transcript section as it is: it has no "```", which would end the
// fence where northstar looks for the end, and names none of the sections
// northstar looks for by name anywhere in the file.
func transcriptSafe(text string) bool {
	if strings.Contains(text, "```") || hasControl(text) {
		return false
	}
	lower := strings.ToLower(text)
	for _, name := range []string{"executive summary", "summary", "key points", "action items", "sentiment", "full transcript", "transcript", "export payload"} {
		if strings.Contains(lower, "## "+name) {
			return false
		}
	}
	return true
}

// exportPayload is the JSON of the export payload, in northstar's shape.
func exportPayload(s Source, id, transcript string) []byte {
	type agent struct {
		ID           string `json:"id,omitempty"`
		Name         string `json:"name"`
		Created      string `json:"created,omitempty"`
		ReadableDate string `json:"readableDate,omitempty"`
		SourceType   string `json:"sourceType,omitempty"`
		App          string `json:"app"`
	}
	type source struct {
		InputMode string `json:"inputMode,omitempty"`
	}
	type analysis struct {
		Summary     string `json:"summary"`
		KeyPoints   string `json:"keyPoints"`
		ActionItems string `json:"actionItems"`
		Sentiment   string `json:"sentiment"`
		Transcript  string `json:"transcript"`
	}
	type document struct {
		Schema        string        `json:"schema"`
		SchemaVersion int           `json:"schemaVersion"`
		Agent         agent         `json:"agent"`
		Source        source        `json:"source"`
		Analysis      analysis      `json:"analysis"`
		SotMetadata   *metadataJSON `json:"sotMetadata,omitempty"`
		Sot           *sotJSON      `json:"sot,omitempty"`
	}
	d := document{
		Schema:        "northstar-agent-md",
		SchemaVersion: 2,
		Agent:         agent{ID: id, Name: s.Title, SourceType: s.Type, App: "sot"},
		Source:        source{InputMode: s.Type},
		Analysis: analysis{
			Summary:     s.Summary,
			KeyPoints:   renderList(s.KeyPoints, false, false),
			ActionItems: renderList(s.ActionItems, true, false),
			Sentiment:   s.Sentiment,
			Transcript:  transcript,
		},
		SotMetadata: newMetadataJSON(s.Metadata),
	}
	if s.Extra != "" {
		d.Sot = &sotJSON{Extra: s.Extra}
	}
	if !s.Date.IsZero() {
		d.Agent.Created = s.Date.Format(time.RFC3339Nano)
		d.Agent.ReadableDate = s.Date.Format("Monday, January 2, 2006")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		panic("corpus: encoding an export payload: " + err.Error()) // strings, ints and slices always encode
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// sotJSON is what sot adds to a payload: the fields northstar has no
// member for.
type sotJSON struct {
	Extra string `json:"extra,omitempty"`
}

// metadataJSON is Metadata in the shape northstar writes it: every list
// present, empty or not.
type metadataJSON struct {
	MeetingType          string               `json:"meetingType"`
	KeyEntities          keyEntitiesJSON      `json:"keyEntities"`
	TemporalContext      *temporalContextJSON `json:"temporalContext"`
	TopicTags            []string             `json:"topicTags"`
	ContentSignals       *ContentSignals      `json:"contentSignals,omitempty"`
	SuggestedPerspective *string              `json:"suggestedPerspective"`
}

type keyEntitiesJSON struct {
	People        []string `json:"people"`
	Projects      []string `json:"projects"`
	Organizations []string `json:"organizations"`
	Products      []string `json:"products"`
}

type temporalContextJSON struct {
	Quarter       *string  `json:"quarter"`
	ExplicitDates []string `json:"explicitDates"`
	Deadlines     []string `json:"deadlines"`
	Timeframe     *string  `json:"timeframe"`
}

func newMetadataJSON(m *Metadata) *metadataJSON {
	if m == nil {
		return nil
	}
	list := func(l []string) []string {
		if l == nil {
			return []string{}
		}
		return l
	}
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	j := &metadataJSON{
		MeetingType: m.MeetingType,
		KeyEntities: keyEntitiesJSON{
			People:        list(m.KeyEntities.People),
			Projects:      list(m.KeyEntities.Projects),
			Organizations: list(m.KeyEntities.Organizations),
			Products:      list(m.KeyEntities.Products),
		},
		TopicTags:            list(m.TopicTags),
		ContentSignals:       m.ContentSignals,
		SuggestedPerspective: opt(m.SuggestedPerspective),
	}
	if tc := m.TemporalContext; tc != nil {
		j.TemporalContext = &temporalContextJSON{
			Quarter:       opt(tc.Quarter),
			ExplicitDates: list(tc.ExplicitDates),
			Deadlines:     list(tc.Deadlines),
			Timeframe:     opt(tc.Timeframe),
		}
	}
	return j
}
