package report

import (
	"strings"
	"testing"

	"github.com/sotlabs/sot/review/finding"
)

// escapes is what a model's answer or a reviewed repository's file name
// may carry to act on the terminal of whoever reads the report with cat:
// a window title (OSC), a cleared screen (CSI), a carriage return that
// overwrites a line, a C1 CSI and a bidirectional override.
const escapes = "x\x1b]0;pwned\x07\x1b[2J\rfake\u009b31m\u202eevil\x1b\\"

// controls are the characters no report may hold raw.
const controls = "\x1b\x07\r\u009b\u202e"

// Every value of a report that comes from a model or the material is
// written with its control characters escaped, in REVIEW-SYNTHESIS.md
// and in each specialist's REVIEW-*.md, rounds appended included.
func TestReportsEscapeControlCharacters(t *testing.T) {
	res := fixture(true)
	res.Items[0].Claim = "Token compare" + escapes
	res.Items[0].Sources[0].Grounds = "grounds" + escapes
	res.Items[0].Sources[0].Warrant = "multi\nline" + escapes
	res.Items[1].Chain = "step one\nstep two" + escapes
	res.Items[1].Category = escapes
	res.Items[4].Decision.Reason = escapes
	res.Observations[0].Claim = escapes
	res.TradeOffs[0].Axis = escapes
	res.TradeOffs[0].Options = []string{escapes}
	res.Dissent[0].Positions[0].Summary = escapes
	res.Dissent[0].Resolution = escapes
	res.Threads[0].Claim = escapes
	res.Threads[0].Rounds[0].Responses[0].Argument = "arg\nmore" + escapes
	res.Threads[1].Rounds[1].Responses[0].Stance = escapes
	res.Narrative = "narrative\n" + escapes
	res.Notes = []string{escapes}
	res.Rejected = []string{escapes}
	res.Skipped[0].Path = "evil" + escapes + ".go"
	res.Skipped[0].Reason = escapes
	res.Reviewed = append(res.Reviewed, "file"+escapes+".go")
	res.Missing[0].Error = escapes
	res.PerspectivesSkipped = []string{escapes}
	res.Trace[0].Resolution = escapes
	res.InputOrder = []string{escapes}
	res.Coordinates = escapes
	res.SelectionRationale = escapes
	res.Specialists = append(res.Specialists, "spec"+escapes)

	check := func(name, md string) {
		t.Helper()
		if i := strings.IndexAny(md, controls); i >= 0 {
			t.Errorf("%s holds a control character at byte %d: %q", name, i, md[max(0, i-40):min(len(md), i+40)])
		}
		if !strings.Contains(md, `\x1b]0;pwned\x07\x1b[2J`) {
			t.Errorf("%s does not show the escapes as text", name)
		}
	}
	check("REVIEW-SYNTHESIS.md", SynthesisMarkdown(res))

	r := specialistReport()
	for i := range r.Findings {
		f := &r.Findings[i]
		f.Claim, f.Grounds, f.Warrant, f.Rebuttal, f.Verification, f.Category = "claim"+escapes, "g"+escapes, "w"+escapes, "r"+escapes, "v"+escapes, escapes
		f.ID = "id" + escapes
		f.Location.File = "file" + escapes + ".go"
	}
	r.Examined = "examined\n" + escapes
	check("REVIEW-SECURITY.md", SpecialistMarkdown(r, res))
	check("a failed specialist's REVIEW-*.md", SpecialistMarkdown(finding.Report{Specialist: "x" + escapes, Lens: escapes, Error: "boom\n" + escapes}, res))
	check("a round appended", AppendRound(SpecialistMarkdown(specialistReport(), res), 2, "- **T1** — agree: fine\n"+escapes+"\n\tindented"+escapes))
}

// Clean text is written as it was: tabs, line breaks and non-ASCII text
// are no control characters.
func TestReportsKeepCleanText(t *testing.T) {
	out := AppendRound("", 2, "a\tb\nZürich — 会議")
	if !strings.Contains(out, "a\tb\nZürich — 会議\n") {
		t.Errorf("clean text changed:\n%q", out)
	}
}
