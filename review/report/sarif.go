package report

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/sotlabs/sot/internal/lazyre"
	"github.com/sotlabs/sot/internal/markdown"
	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/review/synthesis"
)

// SARIF constants.
const (
	SARIFVersion   = "2.1.0"
	SARIFSchema    = "https://json.schemastore.org/sarif-2.1.0.json"
	InformationURI = "https://github.com/sotlabs/sot"
	// HelpURI documents what a review's results are; every rule points at it.
	HelpURI = InformationURI + "#reviews"
	// DevVersion is the tool version a SARIF log carries when the binary
	// knows none (a build from a work tree says "(devel)").
	DevVersion = "0.0.0-dev"
	// FingerprintKey names the partial fingerprint SARIF results carry.
	FingerprintKey = "sotFinding/v1"
	srcRoot        = "%SRCROOT%"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
	Properties  map[string]any    `json:"properties,omitempty"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name            string      `json:"name"`
	Version         string      `json:"version"`
	SemanticVersion string      `json:"semanticVersion,omitempty"`
	InformationURI  string      `json:"informationUri"`
	Rules           []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name"`
	ShortDescription     sarifText      `json:"shortDescription"`
	FullDescription      sarifText      `json:"fullDescription"`
	Help                 sarifHelp      `json:"help"`
	HelpURI              string         `json:"helpUri"`
	DefaultConfiguration sarifRuleConf  `json:"defaultConfiguration"`
	Properties           map[string]any `json:"properties"`
}

// sarifHelp is a rule's help: what its results mean and what to do.
type sarifHelp struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown"`
}

type sarifRuleConf struct {
	Level string `json:"level"`
}

type sarifInvocation struct {
	ExecutionSuccessful bool                `json:"executionSuccessful"`
	Notifications       []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Descriptor sarifDescriptor `json:"descriptor"`
	Level      string          `json:"level"`
	Message    sarifText       `json:"message"`
}

type sarifDescriptor struct {
	ID string `json:"id"`
}

type sarifResult struct {
	RuleID              string             `json:"ruleId"`
	RuleIndex           int                `json:"ruleIndex"`
	Level               string             `json:"level"`
	Message             sarifText          `json:"message"`
	Locations           []sarifLocation    `json:"locations"`
	PartialFingerprints map[string]string  `json:"partialFingerprints"`
	BaselineState       string             `json:"baselineState,omitempty"`
	Suppressions        []sarifSuppression `json:"suppressions,omitempty"`
	Properties          map[string]any     `json:"properties"`
}

// sarifSuppression marks a result the user dismissed with sot review
// --resolve: it stays in the log, and code scanning treats it as dismissed.
type sarifSuppression struct {
	Kind          string `json:"kind"`
	Justification string `json:"justification,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical  `json:"physicalLocation"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
}

// sarifLogical is a logical location: for sot, the section of a document
// a finding names. SARIF's suggested kinds are for code, XML and JSON;
// where none fits, a tool may use its own, so a section is "section".
type sarifLogical struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
	EndLine   int `json:"endLine"`
}

// SARIFLevel maps a severity to a SARIF level: must-fix "error",
// should-fix "warning", anything else "note".
func SARIFLevel(s finding.Severity) string {
	switch s {
	case finding.MustFix:
		return "error"
	case finding.ShouldFix:
		return "warning"
	}
	return "note"
}

func levelRank(l string) int {
	switch l {
	case "error":
		return 3
	case "warning":
		return 2
	}
	return 1
}

// SARIF renders res as a SARIF 2.1.0 log (review.sarif) with one run: a
// rule per specialist that took part (res.Specialists, and any other
// specialist an item is filed under), and a result per actionable item
// that points at a file, filed under the specialist of its lead source.
// An item that names a document section carries it as a logical location
// of kind "section" and in its message; one that names a section but no
// file points at the one file reviewed, when there is exactly one. Other
// items without a file, missing parts of a partial review and skipped
// files are reported as tool execution notifications: GitHub code scanning
// rejects a whole log when a result has no file. Observations are not
// results, being beyond the change.
func SARIF(res *synthesis.Result, toolVersion string) ([]byte, error) {
	if res == nil {
		return nil, errors.New("report: no result to render")
	}
	items, without := located(res)

	// One rule per specialist, by name; its default level is the most
	// severe of its results, "note" when it has none.
	ruleLevel := map[string]string{}
	ruleTags := map[string]map[string]bool{}
	for _, sp := range res.Specialists {
		if sp = markdown.OneLine(sp); sp != "" {
			ruleLevel[sp] = ""
		}
	}
	for _, it := range items {
		sp := ruleSpecialist(it.Item)
		if lv, seen := SARIFLevel(it.Severity), ruleLevel[sp]; seen == "" || levelRank(lv) > levelRank(seen) {
			ruleLevel[sp] = lv
		}
		if ruleTags[sp] == nil {
			ruleTags[sp] = map[string]bool{}
		}
		if c := strings.ToLower(markdown.OneLine(it.Category)); c != "" {
			ruleTags[sp][c] = true
		}
	}
	names := sortedKeys(ruleLevel)
	index := map[string]int{}
	rules := make([]sarifRule, len(names))
	for i, sp := range names {
		index[sp] = i
		tags := []string{"sot", "specialist"}
		extra := sortedKeys(ruleTags[sp])
		for _, t := range extra {
			if t != "sot" && t != "specialist" {
				tags = append(tags, t)
			}
		}
		rules[i] = sarifRule{
			ID:               sp,
			Name:             pascal(sp) + "SpecialistFinding",
			ShortDescription: sarifText{Text: fmt.Sprintf("Findings of the %s specialist.", sp)},
			FullDescription: sarifText{Text: fmt.Sprintf("Findings raised by the %s specialist persona in a sot society-of-thought review, "+
				"merged with every source attributed and checked for grounding in the change.", sp)},
			Help:                 ruleHelp(sp),
			HelpURI:              HelpURI,
			DefaultConfiguration: sarifRuleConf{Level: cmp.Or(ruleLevel[sp], "note")},
			Properties:           map[string]any{"tags": tags},
		}
	}

	results := make([]sarifResult, 0, len(items))
	for _, it := range items {
		sp := ruleSpecialist(it.Item)
		where := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: artifactURI(it.file), URIBaseID: srcRoot}}}
		// Lines count only in the file the item names.
		if start, end, ok := region(res, it); ok {
			where.PhysicalLocation.Region = &sarifRegion{StartLine: start, EndLine: end}
		}
		if sec := markdown.OneLine(it.Location.Section); sec != "" {
			where.LogicalLocations = []sarifLogical{{Name: sec, Kind: "section"}}
		}
		props := map[string]any{
			"id":         it.ID,
			"severity":   string(it.Severity),
			"confidence": string(it.Confidence),
			"grounding":  string(it.Grounding),
			"sources":    nonNil(it.SourceIDs()),
		}
		if it.Grounding == synthesis.Contextual && looked(it.Item) {
			props["read_by_tool"] = true
		}
		if l := it.LeadSource(); l != nil && l.ID != "" {
			props["lead"] = l.ID
		}
		if ls := lenses(it.Sources); len(ls) > 0 {
			props["perspective"] = strings.Join(ls, ", ")
		}
		if it.Dispute != nil && it.Dispute.Unresolved {
			props["unresolved"] = true
		}
		var suppressed []sarifSuppression
		if o := it.Outcome; o != nil && o.Status == "dismissed" {
			suppressed = []sarifSuppression{{Kind: "external", Justification: o.Reason}}
		}
		baseline := ""
		switch it.History {
		case synthesis.HistoryNew:
			baseline = "new"
		case synthesis.HistoryCarried:
			baseline = "unchanged"
			props["carried_from"] = it.From
		}
		results = append(results, sarifResult{
			BaselineState:       baseline,
			Suppressions:        suppressed,
			RuleID:              sp,
			RuleIndex:           index[sp],
			Level:               SARIFLevel(it.Severity),
			Message:             sarifText{Text: message(it.Item)},
			Locations:           []sarifLocation{where},
			PartialFingerprints: map[string]string{FingerprintKey: Fingerprint(sp, it.file, it.Claim)},
			Properties:          props,
		})
	}

	inv := sarifInvocation{ExecutionSuccessful: !res.Partial()}
	if len(without) > 0 {
		text := fmt.Sprintf("%d findings have no file location and are listed in REVIEW-SYNTHESIS.md only", len(without))
		if len(without) == 1 {
			text = "1 finding has no file location and is listed in REVIEW-SYNTHESIS.md only"
		}
		if secs := sections(without); len(secs) == 1 {
			text += " (section: " + secs[0] + ")"
		} else if len(secs) > 1 {
			text += " (sections: " + strings.Join(secs, "; ") + ")"
		}
		inv.Notifications = append(inv.Notifications, sarifNotification{
			Descriptor: sarifDescriptor{ID: "sot/no-location"},
			Level:      "note",
			Message:    sarifText{Text: sentence(text)},
		})
	}
	for _, m := range res.Missing {
		inv.Notifications = append(inv.Notifications, sarifNotification{
			Descriptor: sarifDescriptor{ID: "sot/missing"},
			Level:      "error",
			Message:    sarifText{Text: sentence(fmt.Sprintf("Partial review: %s did not complete: %s", MissingName(m), orNone(m.Error)))},
		})
	}
	if len(res.Skipped) > 0 {
		parts := make([]string, len(res.Skipped))
		for i, f := range res.Skipped {
			parts[i] = markdown.OneLine(f.Path) + " (" + orNone(f.Reason) + ")"
		}
		inv.Notifications = append(inv.Notifications, sarifNotification{
			Descriptor: sarifDescriptor{ID: "sot/skipped"},
			Level:      "warning",
			Message:    sarifText{Text: sentence(fmt.Sprintf("%s not reviewed: %s", plural(len(res.Skipped), "changed file was", "changed files were"), strings.Join(parts, "; ")))},
		})
	}

	props := map[string]any{"mode": res.Mode}
	if res.ReviewMode != "" {
		props["reviewMode"] = res.ReviewMode
	}
	if res.RunID != "" {
		props["runId"] = res.RunID
	}
	log := sarifLog{
		Schema:  SARIFSchema,
		Version: SARIFVersion,
		Runs: []sarifRun{{
			Tool:        sarifTool{Driver: driver(toolVersion, rules)},
			Invocations: []sarifInvocation{inv},
			Results:     results,
			Properties:  props,
		}},
	}
	return encode(log, true)
}

// driver describes sot as the log's tool. A version the binary does not
// know ("" or Go's "(devel)") becomes DevVersion, so a log never claims a
// version no release has; a semantic version is given as such too.
func driver(version string, rules []sarifRule) sarifDriver {
	v := strings.TrimSpace(version)
	if v == "" || v == "(devel)" {
		v = DevVersion
	}
	d := sarifDriver{Name: "sot", Version: v, InformationURI: InformationURI, Rules: rules}
	if sv := strings.TrimPrefix(v, "v"); semVer.Re().MatchString(sv) {
		d.SemanticVersion = sv
	}
	return d
}

// semVer matches a semantic version (2.0.0) without its "v".
var semVer = lazyre.New(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// ruleHelp explains a specialist's rule: where its results come from, how
// to read their grounding, and where to find the full reasoning.
func ruleHelp(sp string) sarifHelp {
	text := fmt.Sprintf("The %s specialist reviewed the change by its own method and stated each finding with its grounds, "+
		"its reasoning (warrant), the conditions under which it would not hold, and a suggested check. "+
		"A result's level follows its severity: error for must-fix, warning for should-fix, note for consider. "+
		"Its grounding says how it is anchored: direct (it cites changed lines), inferential (it cites context lines or a changed file). "+
		"REVIEW-SYNTHESIS.md in the review's output directory shows the reasoning and the suggested check of every must-fix and should-fix item, "+
		"and names the specialist's REVIEW file holding its full review. Fix the problem, or dismiss it with a reason using sot review --resolve.", sp)
	md := fmt.Sprintf("The **%s** specialist reviewed the change by its own method and stated each finding with its grounds, "+
		"its reasoning (warrant), the conditions under which it would not hold, and a suggested check.\n\n"+
		"- Level follows severity: `error` for must-fix, `warning` for should-fix, `note` for consider.\n"+
		"- Grounding: *direct* cites changed lines; *inferential* cites context lines or a changed file.\n\n"+
		"`REVIEW-SYNTHESIS.md` in the review's output directory shows the reasoning and the suggested check of every must-fix and should-fix item, "+
		"and names the specialist's `REVIEW-*.md` file holding its full review. "+
		"Fix the problem, or dismiss it with a reason using `sot review --resolve`.", sp)
	return sarifHelp{Text: text, Markdown: md}
}

// region is the lines an item points at, clamped to its file: a start
// past the file's last line moves to that line, an end before the start
// moves to the start, and an end past the last line to the last line.
// ok is false when the item names no line. The file's length comes from
// the result (FileLines); a file of unknown length is not clamped.
func region(res *synthesis.Result, it placed) (start, end int, ok bool) {
	if it.Location.StartLine <= 0 || it.Location.File == "" {
		return 0, 0, false
	}
	start, end = it.Location.StartLine, max(it.Location.EndLine, it.Location.StartLine)
	if last := res.LineCount(it.Location.File); last > 0 {
		start, end = min(start, last), min(end, last)
	}
	return start, end, true
}

// sentence ends a message with a period, as SARIF's guidelines ask of
// every message, unless it already ends a sentence.
func sentence(s string) string {
	if s == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

// sections lists the distinct document sections the items name, in order.
func sections(items []*synthesis.Item) []string {
	var out []string
	for _, it := range items {
		if sec := markdown.OneLine(it.Location.Section); sec != "" && !slices.Contains(out, sec) {
			out = append(out, sec)
		}
	}
	return out
}

// Fingerprint is a stable hash of what identifies a finding across runs:
// the specialist, the file and the claim (whitespace and case folded), so
// line shifts do not make code scanning see a new alert.
func Fingerprint(specialist, file, claim string) string {
	h := sha256.New()
	for _, s := range []string{markdown.OneLine(specialist), cleanURIPath(file), strings.ToLower(markdown.OneLine(claim))} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// cleanURIPath makes a path relative with forward slashes.
func cleanURIPath(p string) string {
	p = strings.ReplaceAll(strings.TrimSpace(p), `\`, "/")
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	return strings.TrimLeft(p, "/")
}

// artifactURI is a relative URI reference for a repository path.
func artifactURI(p string) string {
	return (&url.URL{Path: cleanURIPath(p)}).String()
}

// pascal turns "red-team" or "api_design" into "RedTeam" or "ApiDesign".
func pascal(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			up = true
			continue
		}
		if up {
			b.WriteRune(unicode.ToUpper(r))
			up = false
		} else {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "Specialist"
	}
	return b.String()
}
