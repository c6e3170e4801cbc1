package report

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/sotlabs/sot/internal/markdown"
	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/review/synthesis"
)

// SchemaVersion is the version of the JSON document JSON writes; it changes
// only when a field changes meaning or goes away.
const SchemaVersion = 1

// Document is the JSON output: the result's fields at the top level, next
// to the schema version, the tool name and a summary.
type Document struct {
	SchemaVersion int     `json:"schema_version"`
	Tool          string  `json:"tool"`
	Summary       Summary `json:"summary"`
	*synthesis.Result
}

// JSON renders res as one indented JSON document (review.json): every
// finding with its sources and grounding tier, the disputes, the trace and
// the run's usage. Empty lists are written as [] rather than null.
func JSON(res *synthesis.Result) ([]byte, error) {
	if res == nil {
		return nil, errors.New("report: no result to render")
	}
	doc := Document{SchemaVersion: SchemaVersion, Tool: "sot", Summary: Summarize(res), Result: normalized(res)}
	return encode(doc, true)
}

// normalized copies res with nil lists and maps made empty, so consumers
// can iterate without null checks. res is not modified.
func normalized(res *synthesis.Result) *synthesis.Result {
	c := *res
	c.Specialists = nonNil(c.Specialists)
	c.Perspectives = nonNil(c.Perspectives)
	c.InputOrder = nonNil(c.InputOrder)
	c.TradeOffs = disputes(c.TradeOffs)
	c.Dissent = disputes(c.Dissent)
	c.Trace = nonNil(c.Trace)
	for i := range c.Trace {
		c.Trace[i].Sources = nonNil(c.Trace[i].Sources)
	}
	c.Items = items(c.Items)
	c.Observations = items(c.Observations)
	if c.Models == nil {
		c.Models = map[string]string{}
	}
	return &c
}

func items(in []synthesis.Item) []synthesis.Item {
	out := make([]synthesis.Item, len(in))
	copy(out, in)
	for i := range out {
		out[i].Sources = nonNil(out[i].Sources)
		if d := out[i].Dispute; d != nil {
			dd := dispute(*d)
			out[i].Dispute = &dd
		}
	}
	return out
}

func disputes(in []synthesis.Dispute) []synthesis.Dispute {
	out := make([]synthesis.Dispute, len(in))
	for i, d := range in {
		out[i] = dispute(d)
	}
	return out
}

func dispute(d synthesis.Dispute) synthesis.Dispute {
	d.FindingIDs = nonNil(d.FindingIDs)
	d.Positions = nonNil(d.Positions)
	return d
}

// nonNil returns a copy of s, empty rather than nil.
func nonNil[T any](s []T) []T {
	out := make([]T, len(s))
	copy(out, s)
	return out
}

// encode marshals v without HTML escaping, indented or as one line, with
// a trailing newline.
func encode(v any, indent bool) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// placed is an actionable item with the file SARIF and rdjsonl point it at.
type placed struct {
	*synthesis.Item
	file string
}

// located lists the actionable items that point at a file, in order, and
// those that do not. An item that names only a document section is
// placed in the one file reviewed, when exactly one was and it is not
// standard input: the section can only lie there. Observations are never
// included: they are beyond the change under review.
func located(res *synthesis.Result) (in []placed, without []*synthesis.Item) {
	only := ""
	if len(res.Reviewed) == 1 && !(res.Type == "freeform" && res.Reviewed[0] == "stdin") {
		only = res.Reviewed[0]
	}
	for i := range res.Items {
		it := &res.Items[i]
		switch {
		case it.Location.File != "":
			in = append(in, placed{it, it.Location.File})
		case markdown.OneLine(it.Location.Section) != "" && only != "":
			in = append(in, placed{it, only})
		default:
			without = append(without, it)
		}
	}
	return in, without
}

// ruleSpecialist is the specialist an item is filed under in SARIF and
// rdjsonl: the specialist of the source that leads it (Item.LeadSource).
func ruleSpecialist(it *synthesis.Item) string {
	if l := it.LeadSource(); l != nil && markdown.OneLine(l.Specialist) != "" {
		return markdown.OneLine(l.Specialist)
	}
	return "unattributed"
}

// message is the plain-text message of a located item: the claim with the
// document section it names, if any, the source that leads it with its
// grounds, and every source.
func message(it *synthesis.Item) string {
	s := markdown.OneLine(it.Claim)
	if sec := markdown.OneLine(it.Location.Section); sec != "" {
		s += " (section: " + sec + ")"
	}
	if l := it.LeadSource(); l != nil {
		s += " — " + markdown.OneLine(l.Source()) + " (" + markdown.OneLine(l.ID) + ")"
		if g := markdown.OneLine(l.Grounds); g != "" {
			s += ": " + g
		}
		s += " Sources: " + sourceList(it.Sources) + "."
	}
	return s
}

func sourceList(src []finding.Finding) string {
	parts := make([]string, len(src))
	for i, f := range src {
		parts[i] = markdown.OneLine(f.ID) + " (" + markdown.OneLine(f.Source()) + ")"
	}
	return joinOne(parts)
}
