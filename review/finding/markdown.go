package finding

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sotlabs/sot/internal/lazyre"
)

// Markdown renders findings in the Toulmin format of the shared rules.
func Markdown(f *Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Finding: %s\n\n", oneLine(f.Claim))
	field := func(name, v string) {
		if strings.TrimSpace(v) != "" {
			fmt.Fprintf(&b, "- **%s**: %s\n", name, oneLine(v))
		}
	}
	field("ID", "`"+f.ID+"`")
	field("Severity", string(f.Severity))
	field("Confidence", string(f.Confidence))
	field("Category", f.Category)
	grounds := f.Grounds
	if loc := f.Location.String(); loc != "" && !strings.Contains(grounds, loc) {
		grounds = "`" + loc + "` — " + grounds
	}
	field("Grounds", grounds)
	field("Warrant", f.Warrant)
	field("Rebuttal Conditions", f.Rebuttal)
	field("Suggested Verification", f.Verification)
	field("Perspective", f.Lens)
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

var (
	mdFinding = lazyre.New(`(?m)^#{2,4}\s*Finding:\s*(.+)$`)
	mdField   = lazyre.New(`(?m)^\s*[-*]?\s*\*\*([A-Za-z ]+)\*\*:\s*(.*)$`)
	// citePattern finds path:line or path:line-line in grounds.
	citePattern = lazyre.New("`?([A-Za-z0-9_./@+-]+\\.[A-Za-z0-9]+):(\\d+)(?:[-–](\\d+))?`?")
)

// ParseMarkdown reads findings written in the documented Markdown format, for
// models that answer in prose instead of JSON. Findings that lack a field the
// format requires are returned as problems.
func ParseMarkdown(text, specialist, lens string, chunk int) ([]Finding, []string) {
	idx := mdFinding.Re().FindAllStringSubmatchIndex(text, -1)
	var out []Finding
	var problems []string
	for i, m := range idx {
		end := len(text)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		f := Finding{ID: IDFor(specialist, lens, chunk, len(out)+1), Specialist: specialist, Lens: lens, Chunk: chunk,
			Claim: strings.TrimSpace(text[m[2]:m[3]])}
		for _, fm := range mdField.Re().FindAllStringSubmatch(text[m[1]:end], -1) {
			v := strings.TrimSpace(fm[2])
			switch strings.ToLower(strings.TrimSpace(fm[1])) {
			case "severity":
				f.Severity, _ = ParseSeverity(v)
			case "confidence":
				f.Confidence, _ = ParseConfidence(v)
			case "category":
				f.Category = v
			case "grounds":
				f.Grounds = v
			case "warrant":
				f.Warrant = v
			case "rebuttal conditions":
				f.Rebuttal = v
			case "suggested verification":
				f.Verification = v
			case "perspective":
				if f.Lens == "" {
					f.Lens = v
				}
			}
		}
		f.Location = LocationFromGrounds(f.Grounds, "")
		if err := f.Validate(); err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out = append(out, f)
	}
	return out, problems
}

// LocationFromGrounds finds the first file:line citation in grounds.
func LocationFromGrounds(grounds, section string) Location {
	m := citePattern.Re().FindStringSubmatch(grounds)
	if m == nil {
		return Location{Section: section}
	}
	start, _ := strconv.Atoi(m[2])
	end, _ := strconv.Atoi(m[3])
	return Location{File: cleanPath(m[1]), StartLine: start, EndLine: end, Section: section}
}
