package corpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// payload is what Load takes from a northstar export payload. Members
// that are absent or null are empty.
type payload struct {
	agentID, name, created, readableDate, exportedAt string
	sourceType                                       string // agent.sourceType, else source.inputMode, else source.type
	summary, sentiment, transcript, extra            string
	keyPoints, actionItems                           []string
	meta                                             *Metadata
}

// decodePayload reads an export payload. data starts at line first of the
// file at path.
func decodePayload(path string, data []byte, first int) (*payload, error) {
	fail := func(off int64, msg string, err error) error {
		return &PayloadError{Path: path, Line: first - 1 + lineAt(string(data), int(off)), Msg: msg, Err: err}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return nil, fail(se.Offset, strings.TrimPrefix(err.Error(), "json: "), err)
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fail(int64(len(data)), "the JSON ends too soon", err)
		}
		return nil, fail(0, err.Error(), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fail(dec.InputOffset(), "more after the JSON object", nil)
	}
	obj, ok := root.(map[string]any)
	if !ok {
		return nil, fail(0, "not a JSON object", nil)
	}
	r := &reader{}
	p := &payload{}
	agent := r.object(obj, "agent")
	source := r.object(obj, "source")
	analysis := r.object(obj, "analysis")
	p.agentID = r.str(agent, "agent", "id")
	p.name = r.str(agent, "agent", "name")
	p.created = r.str(agent, "agent", "created")
	p.readableDate = r.str(agent, "agent", "readableDate")
	p.exportedAt = r.str(obj, "exportedAt")
	p.sourceType = firstOf(r.str(agent, "agent", "sourceType"), r.str(source, "source", "inputMode"), r.str(source, "source", "type"))
	p.summary = r.text(analysis, "analysis", "summary")
	p.sentiment = r.text(analysis, "analysis", "sentiment")
	p.transcript = r.text(analysis, "analysis", "transcript")
	p.keyPoints = r.items(analysis, false, "analysis", "keyPoints")
	p.actionItems = r.items(analysis, true, "analysis", "actionItems")
	p.meta = r.metadata(obj)
	p.extra = r.text(r.object(obj, "sot"), "sot", "extra")
	if r.err != nil {
		return nil, fail(offsetOf(data, r.errPath), strings.Join(r.errPath, ".")+": "+r.err.Error(), r.err)
	}
	return p, nil
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// applyPayload puts what a payload has over what the sections gave.
func applyPayload(src *Source, p *payload) {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&src.AgentID, p.agentID)
	set(&src.Title, p.name)
	set(&src.Type, p.sourceType)
	for _, d := range []string{p.created, p.readableDate, p.exportedAt} {
		if t, ok := parseDate(d); ok {
			src.Date = t
			break
		}
	}
	set(&src.Summary, p.summary)
	set(&src.Sentiment, p.sentiment)
	set(&src.Transcript, p.transcript)
	set(&src.Extra, p.extra)
	if len(p.keyPoints) > 0 {
		src.KeyPoints = p.keyPoints
	}
	if len(p.actionItems) > 0 {
		src.ActionItems = p.actionItems
	}
	if p.meta != nil {
		src.Metadata = p.meta
	}
}

// reader reads members of decoded JSON, keeping the first member of the
// wrong type.
type reader struct {
	err     error
	errPath []string
}

func (r *reader) fail(path []string, format string, args ...any) {
	if r.err == nil {
		r.err, r.errPath = fmt.Errorf(format, args...), slices.Clone(path)
	}
}

// member returns m[key], or nil.
func member(m map[string]any, path []string) any {
	if m == nil {
		return nil
	}
	return m[path[len(path)-1]]
}

// object reads an object member (path ends in its key).
func (r *reader) object(m map[string]any, path ...string) map[string]any {
	switch v := member(m, path).(type) {
	case nil:
		return nil
	case map[string]any:
		return v
	default:
		r.fail(path, "should be an object, not %s", kind(v))
		return nil
	}
}

// str reads a string member, trimmed; a number or boolean is taken as its
// text.
func (r *reader) str(m map[string]any, path ...string) string {
	return strings.TrimSpace(r.raw(m, path...))
}

// raw reads a string member as it is.
func (r *reader) raw(m map[string]any, path ...string) string {
	switch v := member(m, path).(type) {
	case nil:
		return ""
	case string:
		return normalizeNewlines(v)
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	default:
		r.fail(path, "should be a string, not %s", kind(v))
		return ""
	}
}

// text reads a text member: a string, or an array of strings, one a line.
func (r *reader) text(m map[string]any, path ...string) string {
	if a, ok := member(m, path).([]any); ok {
		return clean(strings.Join(r.strings(a, path), "\n"))
	}
	return clean(r.raw(m, path...))
}

// items reads a list member: northstar's text with an item on each line,
// or an array of items.
func (r *reader) items(m map[string]any, checkbox bool, path ...string) []string {
	if a, ok := member(m, path).([]any); ok {
		return normalizeItems(r.strings(a, path))
	}
	return parseList(r.text(m, path...), checkbox)
}

// strings reads an array's elements as strings, leaving out nulls.
func (r *reader) strings(a []any, path []string) []string {
	var out []string
	for _, e := range a {
		switch e := e.(type) {
		case nil:
		case string:
			out = append(out, normalizeNewlines(e))
		case json.Number:
			out = append(out, e.String())
		case bool:
			out = append(out, strconv.FormatBool(e))
		default:
			r.fail(path, "should hold strings, not %s", kind(e))
		}
	}
	return out
}

// list reads a list of names: an array of strings, or one string.
func (r *reader) list(m map[string]any, path ...string) []string {
	var vs []string
	if a, ok := member(m, path).([]any); ok {
		vs = r.strings(a, path)
	} else if s := r.str(m, path...); s != "" {
		vs = []string{s}
	}
	var out []string
	for _, v := range vs {
		if v = strings.Join(strings.Fields(v), " "); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// count reads a count: a whole number, or a string holding one.
func (r *reader) count(m map[string]any, path ...string) int {
	var s string
	switch v := member(m, path).(type) {
	case nil:
		return 0
	case json.Number:
		s = v.String()
	case string:
		s = strings.TrimSpace(v)
	default:
		r.fail(path, "should be a number, not %s", kind(v))
		return 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<31 {
		r.fail(path, "should be a whole number, not %q", s)
		return 0
	}
	return int(f)
}

// metadata reads sotMetadata: nil when it is absent, or holds northstar's
// defaults alone (meetingType "general", no entities, no tags, no
// temporal context, no perspective, every count zero), which is what
// northstar writes for a source it never analysed for SoT.
func (r *reader) metadata(obj map[string]any) *Metadata {
	sot := r.object(obj, "sotMetadata")
	if sot == nil {
		return nil
	}
	p := func(path ...string) []string { return append([]string{"sotMetadata"}, path...) }
	m := &Metadata{
		MeetingType:          r.str(sot, p("meetingType")...),
		TopicTags:            r.list(sot, p("topicTags")...),
		SuggestedPerspective: r.str(sot, p("suggestedPerspective")...),
	}
	if ke := r.object(sot, p("keyEntities")...); ke != nil {
		m.KeyEntities = KeyEntities{
			People:        r.list(ke, p("keyEntities", "people")...),
			Projects:      r.list(ke, p("keyEntities", "projects")...),
			Organizations: r.list(ke, p("keyEntities", "organizations")...),
			Products:      r.list(ke, p("keyEntities", "products")...),
		}
	}
	if tc := r.object(sot, p("temporalContext")...); tc != nil {
		m.TemporalContext = &TemporalContext{
			Quarter:       r.str(tc, p("temporalContext", "quarter")...),
			ExplicitDates: r.list(tc, p("temporalContext", "explicitDates")...),
			Deadlines:     r.list(tc, p("temporalContext", "deadlines")...),
			Timeframe:     r.str(tc, p("temporalContext", "timeframe")...),
		}
	}
	if cs := r.object(sot, p("contentSignals")...); cs != nil {
		m.ContentSignals = &ContentSignals{
			RiskMentions:       r.count(cs, p("contentSignals", "riskMentions")...),
			DecisionsMade:      r.count(cs, p("contentSignals", "decisionsMade")...),
			ActionsAssigned:    r.count(cs, p("contentSignals", "actionsAssigned")...),
			QuestionsRaised:    r.count(cs, p("contentSignals", "questionsRaised")...),
			ConflictIndicators: r.count(cs, p("contentSignals", "conflictIndicators")...),
		}
	}
	if m.placeholder() {
		return nil
	}
	return m
}

// placeholder reports whether m says nothing: northstar's defaults.
func (m *Metadata) placeholder() bool {
	return (m.MeetingType == "" || m.MeetingType == "general") &&
		m.KeyEntities.empty() && m.TemporalContext.empty() && len(m.TopicTags) == 0 &&
		m.SuggestedPerspective == "" && (m.ContentSignals == nil || *m.ContentSignals == ContentSignals{})
}

func (k KeyEntities) empty() bool {
	return len(k.People)+len(k.Projects)+len(k.Organizations)+len(k.Products) == 0
}

func (t *TemporalContext) empty() bool {
	return t == nil || t.Quarter == "" && t.Timeframe == "" && len(t.ExplicitDates)+len(t.Deadlines) == 0
}

// kind names a decoded JSON value's type.
func kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// offsetOf finds where the member at path (object keys from the top) is in
// data: the offset just after its key, or 0.
func offsetOf(data []byte, path []string) int64 {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		object    bool
		expectKey bool
		key       string
	}
	var stack []frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].expectKey = true
		}
	}
	matches := func() bool {
		if len(stack) != len(path) {
			return false
		}
		for i, f := range stack {
			if !f.object || f.key != path[i] {
				return false
			}
		}
		return true
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return 0
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].expectKey {
			if key, ok := tok.(string); ok {
				stack[n-1].key, stack[n-1].expectKey = key, false
				if matches() {
					return dec.InputOffset()
				}
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true, expectKey: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}

// Validate reports how m falls short of what northstar's Agent Builder is
// asked for: a meetingType from MeetingTypes, 3 to 7 topicTags, a
// suggestedPerspective (when there is one) from Perspectives, a timeframe
// (when there is one) of past, present or future, and no negative count.
// Load takes metadata as it comes; Validate is for those who make it.
func (m *Metadata) Validate() error {
	var probs []string
	oneOf := func(field, v string, allowed []string) {
		if !slices.Contains(allowed, v) {
			probs = append(probs, fmt.Sprintf("%s %q is not one of %s", field, v, strings.Join(allowed, ", ")))
		}
	}
	oneOf("meetingType", m.MeetingType, MeetingTypes)
	if n := len(m.TopicTags); n < 3 || n > 7 {
		probs = append(probs, fmt.Sprintf("%d topicTags, want 3 to 7", n))
	}
	if m.SuggestedPerspective != "" {
		oneOf("suggestedPerspective", m.SuggestedPerspective, Perspectives)
	}
	if tc := m.TemporalContext; tc != nil && tc.Timeframe != "" {
		oneOf("temporalContext.timeframe", tc.Timeframe, []string{"past", "present", "future"})
	}
	if cs := m.ContentSignals; cs != nil {
		for _, c := range []struct {
			name string
			n    int
		}{{"riskMentions", cs.RiskMentions}, {"decisionsMade", cs.DecisionsMade}, {"actionsAssigned", cs.ActionsAssigned}, {"questionsRaised", cs.QuestionsRaised}, {"conflictIndicators", cs.ConflictIndicators}} {
			if c.n < 0 {
				probs = append(probs, "contentSignals."+c.name+" is negative")
			}
		}
	}
	if len(probs) == 0 {
		return nil
	}
	return errors.New(strings.Join(probs, "; "))
}
