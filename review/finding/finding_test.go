package finding

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFromJSON(t *testing.T) {
	answer := json.RawMessage(`{"examined": "auth/session.go", "findings": [
	 {"finding": "Tokens from the query string reach the cookie unchecked.", "severity": "Must-Fix", "confidence": "high", "category": "input validation",
	  "grounds": "auth/session.go:41 reads token from the URL", "file": "./auth/session.go", "start_line": 41, "end_line": 43, "section": "",
	  "warrant": "Query strings are attacker controlled.", "rebuttal_conditions": "A middleware validates it.", "suggested_verification": "Send a forged token."},
	 {"finding": "", "severity": "consider", "confidence": "LOW", "category": "x", "grounds": "y", "file": "", "start_line": 0, "end_line": 0, "section": "", "warrant": "z", "rebuttal_conditions": "", "suggested_verification": ""},
	 {"finding": "Grounds carry the location.", "severity": "consider", "confidence": "MEDIUM", "category": "x", "grounds": "see ` + "`b/api/routes.ts:12-18`" + `", "file": "", "start_line": 0, "end_line": 0, "section": "", "warrant": "w", "rebuttal_conditions": "", "suggested_verification": ""},
	 {"finding": "Bad severity.", "severity": "blocker", "confidence": "HIGH", "category": "x", "grounds": "g", "file": "", "start_line": 0, "end_line": 0, "section": "", "warrant": "w", "rebuttal_conditions": "", "suggested_verification": ""}
	]}`)
	r, problems, err := FromJSON(answer, "security", "red-team", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 2 || len(problems) != 2 {
		t.Fatalf("kept %d findings, %d problems (%v); want 2 and 2", len(r.Findings), len(problems), problems)
	}
	f := r.Findings[0]
	want := Finding{ID: "security.red-team.1", Specialist: "security", Lens: "red-team",
		Claim: "Tokens from the query string reach the cookie unchecked.", Severity: MustFix, Confidence: High, Category: "input validation",
		Grounds: "auth/session.go:41 reads token from the URL", Location: Location{File: "auth/session.go", StartLine: 41, EndLine: 43},
		Warrant: "Query strings are attacker controlled.", Rebuttal: "A middleware validates it.", Verification: "Send a forged token."}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("finding (-want +got):\n%s", diff)
	}
	if got := r.Findings[1].Location; got != (Location{File: "api/routes.ts", StartLine: 12, EndLine: 18}) {
		t.Errorf("location from grounds = %+v", got)
	}
	if r.Findings[1].ID != "security.red-team.3" {
		t.Errorf("IDs should keep the answer's numbering: %s", r.Findings[1].ID)
	}
	if r.Examined != "auth/session.go" {
		t.Errorf("examined = %q", r.Examined)
	}
	if _, _, err := FromJSON(json.RawMessage(`[1,2]`), "security", "", 0); err == nil {
		t.Error("a non-object answer must be an error")
	}
}

func TestMarkdownRoundTrip(t *testing.T) {
	f := Finding{ID: "testing.1", Specialist: "testing", Lens: "premortem", Claim: "The retry path has no test.", Severity: ShouldFix, Confidence: Medium,
		Category: "coverage", Grounds: "no test calls Retry", Location: Location{File: "llm/retry.go", StartLine: 10, EndLine: 20},
		Warrant: "Untested branches regress.", Rebuttal: "An integration test covers it.", Verification: "Run coverage on retry.go."}
	md := Markdown(&f)
	for _, want := range []string{"### Finding: The retry path has no test.", "- **Severity**: should-fix", "- **Grounds**: `llm/retry.go:10-20` — no test calls Retry", "- **Perspective**: premortem"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	got, problems := ParseMarkdown("Some preamble.\n\n"+md+"\n### Finding: Half a finding\n- **Severity**: consider\n", "testing", "", 0)
	if len(got) != 1 || len(problems) != 1 {
		t.Fatalf("parsed %d findings, problems %v", len(got), problems)
	}
	g := got[0]
	if g.Claim != f.Claim || g.Severity != f.Severity || g.Confidence != f.Confidence || g.Lens != "premortem" || g.Location != f.Location || g.Verification != f.Verification {
		t.Errorf("round trip lost data: %+v", g)
	}
}

func TestLocation(t *testing.T) {
	tests := []struct {
		a, b Location
		want bool
	}{
		{Location{File: "a.go", StartLine: 10, EndLine: 20}, Location{File: "a.go", StartLine: 20, EndLine: 25}, true},
		{Location{File: "a.go", StartLine: 10, EndLine: 20}, Location{File: "a.go", StartLine: 21}, false},
		{Location{File: "a.go", StartLine: 10}, Location{File: "a.go", StartLine: 10}, true},
		{Location{File: "a.go", StartLine: 10}, Location{File: "b.go", StartLine: 10}, false},
		{Location{File: "a.go"}, Location{File: "a.go"}, true},
		{Location{Section: "Goals"}, Location{Section: "Goals"}, false},
	}
	for _, tt := range tests {
		if got := tt.a.Overlaps(tt.b); got != tt.want {
			t.Errorf("%v overlaps %v = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	for in, want := range map[string]Severity{"MUST FIX": MustFix, "should_fix": ShouldFix, " consider ": Consider} {
		if got, err := ParseSeverity(in); err != nil || got != want {
			t.Errorf("ParseSeverity(%q) = %v, %v", in, got, err)
		}
	}
}

func TestReportSchemaIsStrictCompatible(t *testing.T) {
	var s struct {
		Required   []string `json:"required"`
		Properties struct {
			Findings struct {
				Items struct {
					Properties map[string]any `json:"properties"`
					Required   []string       `json:"required"`
				} `json:"items"`
			} `json:"findings"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(ReportSchema, &s); err != nil {
		t.Fatal(err)
	}
	items := s.Properties.Findings.Items
	if len(items.Required) != len(items.Properties) {
		t.Errorf("every finding property must be required for strict mode: %d of %d", len(items.Required), len(items.Properties))
	}
}
