package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/review/synthesis"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run go test ./report -update after checking the change)\n--- got ---\n%s", name, got)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func TestGolden(t *testing.T) {
	failed := finding.Report{Specialist: "performance", Lens: "premortem", Model: "openai:gpt-4.1", Chunk: 2,
		Error: "openai: 429 Too Many Requests after 4 retries"}
	empty := finding.Report{Specialist: "correctness", Model: "openai:gpt-4.1",
		Examined: "Checked every changed function for nil handling, error paths and off-by-one bounds.\nNothing qualified: the changes are guarded and tested."}
	for _, tc := range []struct {
		file   string
		render func() []byte
	}{
		{"synthesis_parallel.md", func() []byte { return []byte(SynthesisMarkdown(fixture(false))) }},
		{"synthesis_debate.md", func() []byte { return []byte(SynthesisMarkdown(fixture(true))) }},
		{"specialist.md", func() []byte { return []byte(SpecialistMarkdown(specialistReport(), fixture(false))) }},
		{"specialist_empty.md", func() []byte { return []byte(SpecialistMarkdown(empty, fixture(false))) }},
		{"specialist_failed.md", func() []byte { return []byte(SpecialistMarkdown(failed, fixture(false))) }},
		{"review.json", func() []byte { return must(JSON(fixture(false))) }},
		{"review.sarif", func() []byte { return must(SARIF(fixture(false), "0.3.0")) }},
		{"review.rdjsonl", func() []byte { return must(RDJSONL(fixture(false))) }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got := tc.render()
			if !bytes.HasSuffix(got, []byte("\n")) || bytes.HasSuffix(got, []byte("\n\n")) || bytes.Contains(got, []byte("\n\n\n")) {
				t.Error("output does not end in exactly one newline, or has runs of blank lines")
			}
			for range 5 { // map iteration must not leak into the output
				if again := tc.render(); !bytes.Equal(got, again) {
					t.Fatal("output differs between two renders of the same input")
				}
			}
			golden(t, tc.file, got)
		})
	}
}

// headings lists the lines that open a section at the given level
// ("## " for level 2); lines inside fenced code are not headings.
func headings(md, prefix string) []string {
	var out []string
	fenced := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(l, prefix) {
			out = append(out, strings.TrimPrefix(l, prefix))
		}
	}
	return out
}

func TestSynthesisSections(t *testing.T) {
	base := []string{"Review Summary", "Perspective Diversity", "Must-Fix Findings", "Should-Fix Findings", "Consider",
		"Trade-offs Requiring Decision", "Observations", "Dissent Log"}
	for _, tc := range []struct {
		name string
		res  *synthesis.Result
		want []string
	}{
		{"parallel", fixture(false), append(slices.Clone(base), "Synthesis Trace")},
		{"debate", fixture(true), append(slices.Clone(base), "Debate Trace", "Synthesis Trace")},
		{"empty", &synthesis.Result{}, append(slices.Clone(base), "Synthesis Trace")},
		{"nil", nil, append(slices.Clone(base), "Synthesis Trace")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := SynthesisMarkdown(tc.res)
			if got := headings(md, "## "); !slices.Equal(got, tc.want) {
				t.Errorf("sections:\n got %q\nwant %q", got, tc.want)
			}
			if got := headings(md, "# "); !slices.Equal(got, []string{"Review Synthesis"}) {
				t.Errorf("titles: %q", got)
			}
			if !slices.Equal(Sections(tc.name == "debate"), tc.want) {
				t.Errorf("Sections(%v) = %q", tc.name == "debate", Sections(tc.name == "debate"))
			}
		})
	}
}

func TestDebateOnlyContent(t *testing.T) {
	par := SynthesisMarkdown(fixture(false))
	for _, s := range []string{"Debate Trace", "- Rounds:", "- Threads:", "T1"} {
		if strings.Contains(par, s) {
			t.Errorf("parallel synthesis contains %q", s)
		}
	}
	deb := SynthesisMarkdown(fixture(true))
	for _, s := range []string{
		"- Mode: society-of-thought (debate)",
		"- Rounds: 3",
		"- Threads: 3 (1 agreed, 1 contested, 1 trade-off)",
		"### T2: ",
		"- **Round 2** (state: contested)",
		"  - security/red-team, challenges:\n    > server.go:30 builds one cache per tenant.\n    > So keys never collide across tenants.",
		"- **Round 3** (state: contested)\n  - no responses",
		"- **Final state**: contested",
		"- **Resolution method**: budget exhaustion",
	} {
		if !strings.Contains(deb, s) {
			t.Errorf("debate synthesis lacks %q", s)
		}
	}
}

// sectionBody returns the text of one "## " section.
func sectionBody(md, title string) string {
	_, rest, ok := strings.Cut(md, "\n## "+title+"\n")
	if !ok {
		return ""
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

func TestItemsAndSources(t *testing.T) {
	res := fixture(false)
	md := SynthesisMarkdown(res)
	sectionOf := map[finding.Severity]string{finding.MustFix: SectionMustFix, finding.ShouldFix: SectionShouldFix, finding.Consider: SectionConsider}
	for _, it := range res.Items {
		body := sectionBody(md, sectionOf[it.Severity])
		_, block, ok := strings.Cut(body, "### "+it.ID+": ")
		if !ok {
			t.Errorf("%s is not under %s", it.ID, sectionOf[it.Severity])
			continue
		}
		if i := strings.Index(block, "\n### "); i >= 0 {
			block = block[:i]
		}
		for _, s := range it.Sources {
			want := "`" + s.ID + "` by " + s.Source() + " (" + string(s.Confidence) + "): "
			if !strings.Contains(block, want) {
				t.Errorf("%s: source %s not attributed as %q", it.ID, s.ID, want)
			}
		}
		if !strings.Contains(block, "- **Grounding**: "+string(it.Grounding)) {
			t.Errorf("%s: grounding missing", it.ID)
		}
	}
	obs := sectionBody(md, SectionObservations)
	for _, it := range res.Observations {
		if !strings.Contains(obs, "### "+it.ID+": ") {
			t.Errorf("observation %s missing", it.ID)
		}
		for _, s := range it.SourceIDs() {
			if !strings.Contains(obs, "`"+s+"`") {
				t.Errorf("observation %s: source %s missing", it.ID, s)
			}
		}
	}
	trace := sectionBody(md, SectionTrace)
	for _, tr := range res.Trace {
		for _, s := range tr.Sources {
			if !strings.Contains(trace, "`"+s+"`") {
				t.Errorf("trace of %s lacks %s", tr.ItemID, s)
			}
		}
	}
	for _, s := range []string{"- Seed: 20260101", "- Order: performance/premortem, security/red-team, correctness",
		"### Rejected triage-lead output", "cites no finding"} {
		if !strings.Contains(trace, s) {
			t.Errorf("Synthesis Trace lacks %q", s)
		}
	}

	s2 := sectionBody(md, SectionMustFix)
	for _, s := range []string{"- **Reasoning chain**:\n  > 1. retry.go:44", "  > 3. A permanently failing upstream", "- **Perspective**: premortem"} {
		if !strings.Contains(s2, s) {
			t.Errorf("Must-Fix lacks %q", s)
		}
	}
	should := sectionBody(md, SectionShouldFix)
	for _, s := range []string{"**unresolved**", "high-signal perspective disagreement",
		"- **Decision**: by priority hierarchy: Keep per-request buffers — Security ranks above Performance. **(flagged for review",
		"- **Perspective**: premortem, red-team"} {
		if !strings.Contains(should, s) {
			t.Errorf("Should-Fix lacks %q", s)
		}
	}
	if !strings.Contains(sectionBody(md, SectionConsider), "- **Outcome**: deferred — Tracked separately.") {
		t.Error("outcome missing")
	}
}

func TestTradeOffsAndDissent(t *testing.T) {
	md := SynthesisMarkdown(fixture(false))
	to := sectionBody(md, SectionTradeOffs)
	for _, s := range []string{
		"### D2: Performance vs. Security (request isolation)",
		"- **Affects**: S5",
		"  - performance (`performance.2`): Pool the buffers",
		"  - security/premortem (`security.premortem.4`): Pooling risks",
		"- **Decision axis**: Performance vs. Security",
		"  - Pool buffers and clear them before reuse",
		"- **Recommendation**: Keep per-request buffers: Security ranks above Performance. (priority hierarchy: Correctness > Security > Reliability > Performance > Maintainability > Developer Experience)",
		"- **Decision needed**: yes — decided by priority hierarchy without a person",
	} {
		if !strings.Contains(to, s) {
			t.Errorf("Trade-offs lacks %q", s)
		}
	}
	dl := sectionBody(md, SectionDissent)
	for _, s := range []string{
		"### D1 (factual dispute) — high-signal perspective disagreement",
		"- **High-signal perspective disagreement**:",
		// Both positions, each with the perspective it came from.
		"  - security/premortem (`security.premortem.3`): The key must include the tenant id.",
		"  - security/red-team (`security.red-team.2`): Caches are per tenant, so the key is safe.",
		"- **Resolution**: **unresolved** — Both sides cite code",
		"### D2 (trade-off)\n",
		"- **Resolution**: Decided by the priority hierarchy",
	} {
		if !strings.Contains(dl, s) {
			t.Errorf("Dissent Log lacks %q", s)
		}
	}
	if strings.Count(dl, "High-signal perspective disagreement") != 1 {
		t.Error("only D1 is high-signal")
	}
}

func TestEmptySections(t *testing.T) {
	md := SynthesisMarkdown(&synthesis.Result{Mode: "debate"})
	for _, s := range []string{SectionMustFix, SectionShouldFix, SectionConsider, SectionTradeOffs, SectionObservations, SectionDissent, SectionDebate} {
		if got := strings.TrimSpace(sectionBody(md, s)); got != "None." {
			t.Errorf("empty %s = %q, want None.", s, got)
		}
	}
	if !strings.Contains(sectionBody(md, SectionDiversity), "Perspectives were not used") {
		t.Error("Perspective Diversity does not say perspectives were not used")
	}
	for _, s := range []string{"- Context: none", "- Perspectives: none", "- Specialists: none"} {
		if !strings.Contains(md, s) {
			t.Errorf("summary lacks %q", s)
		}
	}
	if strings.Contains(md, "Partial review") {
		t.Error("a complete review is marked partial")
	}
}

func TestSummaryCoverage(t *testing.T) {
	md := SynthesisMarkdown(fixture(false))
	sum := sectionBody(md, SectionSummary)
	for _, s := range []string{
		"- **Partial review**: 1 part of the review did not complete",
		"  - performance/premortem (chunk 2: internal/client/retry.go): openai: 429 Too Many Requests after 4 retries",
		"- Files reviewed: 6",
		"- Files skipped: 3",
		"  - `vendor/github.com/example/jwt/jwt.go`: vendored",
		"  - `assets/logo.png`: binary",
		"  - `api/service.pb.go`: generated",
		"- Chunks: 2",
		"- Models:\n  - correctness → openai:gpt-4.1\n  - performance → openai:gpt-4.1\n  - security → anthropic:claude-sonnet-4-5",
		"- Usage: 11 calls, 184,233 input tokens (151,002 cached), 9,120 output tokens, $0.4127, wall time 48.213s; 2 calls replayed from the journal",
		"- Selection rationale: adaptive:3",
		"- Perspective cap: 2",
		"- Context: backend",
		"- Notes:\n  - Model openai:o3 is unavailable",
		"> Two must-fix problems dominate",
	} {
		if !strings.Contains(sum, s) {
			t.Errorf("Review Summary lacks %q", s)
		}
	}
	if !strings.HasPrefix(strings.TrimSpace(sum), "- **Partial review**") {
		t.Error("the partial-review line is not the first line of the summary")
	}
	div := sectionBody(md, SectionDiversity)
	for _, s := range []string{"  - premortem → performance, security", "  - red-team → security", "- Selection mode: auto",
		"- Perspectives skipped:\n  - retrospective: over the perspective cap of 2"} {
		if !strings.Contains(div, s) {
			t.Errorf("Perspective Diversity lacks %q", s)
		}
	}
}

const injection = "looks fine\n## Must-Fix Findings\n# Injected title\nInjected\n===\n  ## indented\n"

func TestInjection(t *testing.T) {
	res := fixture(true)
	res.Items[0].Claim = "Token compare" + injection
	res.Items[0].Sources[0].Grounds = "grounds" + injection
	res.Items[1].Chain = "step one" + injection
	res.Items[4].Decision.Reason = injection
	res.Observations[0].Claim = injection
	res.TradeOffs[0].Axis = injection
	res.TradeOffs[0].Options = []string{injection}
	res.Dissent[0].Positions[0].Summary = injection
	res.Dissent[0].Resolution = injection
	res.Threads[0].Claim = injection
	res.Threads[0].Rounds[0].Responses[0].Argument = "arg" + injection
	res.Threads[1].Rounds[1].Responses[0].Stance = injection
	res.Narrative = "narrative" + injection
	res.Notes = []string{injection}
	res.Rejected = []string{injection}
	res.Skipped[0].Reason = injection
	res.Missing[0].Error = injection
	res.PerspectivesSkipped = []string{injection}
	res.Trace[0].Resolution = injection
	res.InputOrder = []string{injection}
	res.Coordinates = injection
	res.SelectionRationale = injection

	md := SynthesisMarkdown(res)
	if got := headings(md, "## "); !slices.Equal(got, Sections(true)) {
		t.Errorf("injected text changed the sections: %q", got)
	}
	if got := headings(md, "# "); len(got) != 1 {
		t.Errorf("injected text added a title: %q", got)
	}
	for i, l := range strings.Split(md, "\n") {
		if strings.TrimSpace(l) == "===" || strings.TrimSpace(l) == "## indented" {
			t.Errorf("line %d: unescaped %q", i+1, l)
		}
	}

	r := specialistReport()
	r.Findings[0].Claim = "claim" + injection
	r.Examined = "examined" + injection
	sm := SpecialistMarkdown(r, res)
	if got := headings(sm, "## "); !slices.Equal(got, []string{"Findings", "Examined"}) {
		t.Errorf("specialist sections: %q", got)
	}
	r.Findings = nil
	sm = SpecialistMarkdown(r, res)
	if got := headings(sm, "## "); !slices.Equal(got, []string{"No findings"}) {
		t.Errorf("specialist sections without findings: %q", got)
	}
	sm = SpecialistMarkdown(finding.Report{Specialist: "x" + injection, Lens: injection, Error: "boom" + injection}, res)
	if got := headings(sm, "## "); !slices.Equal(got, []string{"This specialist failed"}) {
		t.Errorf("failed specialist sections: %q", got)
	}
	if got := headings(sm, "# "); len(got) != 1 {
		t.Errorf("failed specialist titles: %q", got)
	}

	out := AppendRound(SpecialistMarkdown(specialistReport(), res), 2, "body"+injection)
	if got := headings(out, "## "); !slices.Equal(got, []string{"Findings", "Examined", "Round 2"}) {
		t.Errorf("round sections: %q", got)
	}
}

func TestSpecialistMarkdown(t *testing.T) {
	res := fixture(false)
	md := SpecialistMarkdown(specialistReport(), res)
	for _, s := range []string{
		"# security review — red-team perspective",
		"- **Review type**: diff",
		"- **Coordinates**: main...feature/session-cache",
		"- **Model**: anthropic:claude-sonnet-4-5",
		"- **Run**: 20260101-120000-ab12",
		"- **Chunks**: 2",
		"- **Findings**: 2 (1 must-fix, 0 should-fix, 1 consider)",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("specialist review lacks %q", s)
		}
	}
	mustAt := strings.Index(md, "### Finding: "+fTokenCompare.Claim)
	considerAt := strings.Index(md, "### Finding: "+fCacheKeyNo.Claim)
	if mustAt < 0 || considerAt < 0 || mustAt > considerAt {
		t.Errorf("findings not ordered must-fix first (must-fix at %d, consider at %d)", mustAt, considerAt)
	}

	// A chunk report names its chunk; a model missing from the report
	// comes from the run's assignment.
	chunk := finding.Report{Specialist: "performance", Chunk: 2, Findings: []finding.Finding{fBuffer}}
	md = SpecialistMarkdown(chunk, res)
	for _, s := range []string{"- **Chunk**: 2 of 2", "- **Model**: openai:gpt-4.1", "\n# performance review\n"} {
		if !strings.Contains("\n"+md, s) {
			t.Errorf("chunk review lacks %q", s)
		}
	}

	empty := SpecialistMarkdown(finding.Report{Specialist: "correctness", Examined: "Looked at every changed line."}, nil)
	if !strings.Contains(empty, "## No findings\n") || !strings.Contains(empty, "> Looked at every changed line.") {
		t.Errorf("empty review:\n%s", empty)
	}
	failed := SpecialistMarkdown(finding.Report{Specialist: "correctness", Error: "timeout", Examined: "partial notes"}, nil)
	if !strings.Contains(failed, "## This specialist failed\n") || !strings.Contains(failed, "> timeout") ||
		strings.Contains(failed, "No findings") || strings.Contains(failed, "### Finding") {
		t.Errorf("failed review:\n%s", failed)
	}
}

func TestMergeReports(t *testing.T) {
	c2 := finding.Report{Specialist: "security", Lens: "premortem", Model: "m1", Chunk: 2, Findings: []finding.Finding{fBufferSec}, Examined: "handlers"}
	c1 := finding.Report{Specialist: "security", Lens: "premortem", Model: "m1", Chunk: 1, Findings: []finding.Finding{fCacheKey}, Examined: "cache package"}
	c3 := finding.Report{Specialist: "security", Lens: "premortem", Model: "m2", Chunk: 3, Error: "timeout"}
	m := MergeReports([]finding.Report{c2, c3, c1})
	if m.Specialist != "security" || m.Lens != "premortem" || m.Chunk != 0 {
		t.Errorf("identity: %+v", m)
	}
	if ids := []string{m.Findings[0].ID, m.Findings[1].ID}; !slices.Equal(ids, []string{fCacheKey.ID, fBufferSec.ID}) || len(m.Findings) != 2 {
		t.Errorf("findings in chunk order: %q", ids)
	}
	if m.Examined != "Chunk 1: cache package\n\nChunk 2: handlers" {
		t.Errorf("examined = %q", m.Examined)
	}
	if m.Model != "m1, m2" || m.Error != "chunk 3: timeout" {
		t.Errorf("model %q, error %q", m.Model, m.Error)
	}
	md := SpecialistMarkdown(m, fixture(false))
	if !strings.Contains(md, "## This specialist partly failed") || !strings.Contains(md, "### Finding: ") {
		t.Errorf("partly failed merge:\n%s", md)
	}
	if got := MergeReports([]finding.Report{c1}); got.Examined != "cache package" {
		t.Errorf("single report changed: %+v", got)
	}
	if got := MergeReports(nil); got.Specialist != "" || got.Findings != nil {
		t.Errorf("no reports: %+v", got)
	}
}

func TestAppendRound(t *testing.T) {
	base := "# security review\n\n## Findings\n\nround one\n"
	r2 := AppendRound(base, 2, "second")
	if want := base + "\n## Round 2\n\nsecond\n"; r2 != want {
		t.Errorf("append:\n%q\nwant\n%q", r2, want)
	}
	r3 := AppendRound(r2, 3, "third\n")
	if again := AppendRound(r3, 3, "third"); again != r3 {
		t.Errorf("re-appending round 3 is not idempotent:\n%q\n%q", again, r3)
	}
	replaced := AppendRound(r3, 2, "second, revised")
	if want := base + "\n## Round 2\n\nsecond, revised\n\n## Round 3\n\nthird\n"; replaced != want {
		t.Errorf("replace:\n%q\nwant\n%q", replaced, want)
	}
	if got := AppendRound("", 2, ""); got != "## Round 2\n\nNo new findings or positions in this round.\n" {
		t.Errorf("empty: %q", got)
	}
	if got := AppendRound("x", 2, "# Big\n## Mid\n### Small\n    ## code"); got != "x\n\n## Round 2\n\n### Big\n#### Mid\n### Small\n    ## code\n" {
		t.Errorf("demotion: %q", got)
	}
}

func TestJSON(t *testing.T) {
	res := fixture(false)
	data, err := JSON(res)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		SchemaVersion int    `json:"schema_version"`
		Tool          string `json:"tool"`
		Summary       Summary
		RunID         string `json:"run_id"`
		Items         []struct {
			ID        string `json:"id"`
			Grounding string `json:"grounding"`
			Sources   []struct {
				ID string `json:"id"`
			} `json:"sources"`
		} `json:"items"`
		Skipped []synthesis.SkippedFile `json:"skipped_files"`
		Missing []synthesis.Missing     `json:"missing"`
		Usage   synthesis.Usage         `json:"usage"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SchemaVersion != 1 || doc.Tool != "sot" || doc.RunID != res.RunID {
		t.Errorf("header: %d %q %q", doc.SchemaVersion, doc.Tool, doc.RunID)
	}
	want := Summary{MustFix: 3, ShouldFix: 2, Consider: 2, Observations: 1, TradeOffs: 1, Disputes: 2, Unresolved: 1, FilesSkipped: 3, Missing: 1, Partial: true}
	if doc.Summary != want {
		t.Errorf("summary %+v, want %+v", doc.Summary, want)
	}
	if len(doc.Items) != len(res.Items) || doc.Items[1].Grounding != "inferential" || len(doc.Items[0].Sources) != 2 {
		t.Errorf("items: %+v", doc.Items)
	}
	if len(doc.Skipped) != 3 || len(doc.Missing) != 1 || doc.Usage != res.Usage {
		t.Errorf("skipped %v missing %v usage %+v", doc.Skipped, doc.Missing, doc.Usage)
	}
	// The whole result round-trips.
	var back synthesis.Result
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Items[4].Decision == nil || !back.Items[4].Decision.Flagged || back.Items[3].Dispute == nil || !back.Items[3].Dispute.HighSignal {
		t.Error("decision or dispute lost in JSON")
	}

	// Empty lists are [], not null; the input is not modified.
	empty := &synthesis.Result{Items: []synthesis.Item{{ID: "S1"}}}
	data, err = JSON(empty)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"observations": []`, `"trade_offs": []`, `"dissent": []`, `"trace": []`, `"sources": []`, `"models": {}`, `"partial": false`} {
		if !bytes.Contains(data, []byte(s)) {
			t.Errorf("empty result JSON lacks %s", s)
		}
	}
	if bytes.Contains(data, []byte("null")) {
		t.Errorf("null in JSON:\n%s", data)
	}
	if empty.Items[0].Sources != nil || empty.Models != nil {
		t.Error("JSON modified its input")
	}
	if _, err := JSON(nil); err == nil {
		t.Error("JSON(nil) did not fail")
	}
}

// sarifDoc is the part of SARIF the tests read back.
type sarifDoc struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name           string `json:"name"`
				Version        string `json:"version"`
				InformationURI string `json:"informationUri"`
				Rules          []struct {
					ID                   string `json:"id"`
					Name                 string `json:"name"`
					ShortDescription     struct{ Text string }
					FullDescription      struct{ Text string }
					DefaultConfiguration struct{ Level string }
					Properties           struct{ Tags []string }
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Invocations []struct {
			ExecutionSuccessful bool `json:"executionSuccessful"`
			Notifications       []struct {
				Level   string `json:"level"`
				Message struct{ Text string }
			} `json:"toolExecutionNotifications"`
		} `json:"invocations"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex int    `json:"ruleIndex"`
			Level     string `json:"level"`
			Message   struct{ Text string }
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI       string `json:"uri"`
						URIBaseID string `json:"uriBaseId"`
					} `json:"artifactLocation"`
					Region *struct {
						StartLine int `json:"startLine"`
						EndLine   int `json:"endLine"`
					} `json:"region"`
				} `json:"physicalLocation"`
				LogicalLocations []struct {
					Name string `json:"name"`
					Kind string `json:"kind"`
				} `json:"logicalLocations"`
			} `json:"locations"`
			PartialFingerprints map[string]string `json:"partialFingerprints"`
			Properties          struct {
				ID          string   `json:"id"`
				Severity    string   `json:"severity"`
				Confidence  string   `json:"confidence"`
				Grounding   string   `json:"grounding"`
				Sources     []string `json:"sources"`
				Perspective string   `json:"perspective"`
			} `json:"properties"`
		} `json:"results"`
	} `json:"runs"`
}

func TestSARIF(t *testing.T) {
	res := fixture(false)
	data, err := SARIF(res, "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	var doc sarifDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Version != "2.1.0" || doc.Schema != "https://json.schemastore.org/sarif-2.1.0.json" || len(doc.Runs) != 1 {
		t.Fatalf("header: %q %q %d runs", doc.Version, doc.Schema, len(doc.Runs))
	}
	run := doc.Runs[0]
	d := run.Tool.Driver
	if d.Name != "sot" || d.Version != "1.2.3" || d.InformationURI != "https://github.com/sotlabs/sot" {
		t.Errorf("driver: %+v", d)
	}
	// One rule per specialist with results: S1 security, S2 performance,
	// S4 security, S5 performance, S6 security, S7 correctness; S3 has no file.
	var ruleIDs []string
	for _, r := range d.Rules {
		ruleIDs = append(ruleIDs, r.ID)
		if r.Name == "" || r.ShortDescription.Text == "" || r.FullDescription.Text == "" || r.DefaultConfiguration.Level == "" || len(r.Properties.Tags) == 0 {
			t.Errorf("rule %s incomplete: %+v", r.ID, r)
		}
	}
	if !slices.Equal(ruleIDs, []string{"correctness", "performance", "security"}) {
		t.Errorf("rules: %q", ruleIDs)
	}
	if d.Rules[2].Name != "SecuritySpecialistFinding" || d.Rules[2].DefaultConfiguration.Level != "error" || d.Rules[0].DefaultConfiguration.Level != "note" {
		t.Errorf("rule names/levels: %+v", d.Rules)
	}

	wantResults := []struct{ id, rule, level, uri string }{
		{"S1", "security", "error", "internal/auth/session.go"},
		{"S2", "performance", "error", "internal/client/retry.go"},
		{"S4", "security", "warning", "internal/cache/key.go"},
		{"S5", "performance", "warning", "internal/server/handler.go"},
		{"S6", "security", "note", "internal/server/log.go"},
		{"S7", "correctness", "note", "docs/design%20notes.md"},
	}
	if len(run.Results) != len(wantResults) {
		t.Fatalf("%d results, want %d", len(run.Results), len(wantResults))
	}
	fps := map[string]bool{}
	for i, w := range wantResults {
		r := run.Results[i]
		if r.Properties.ID != w.id || r.RuleID != w.rule || r.Level != w.level {
			t.Errorf("result %d: %s %s %s, want %+v", i, r.Properties.ID, r.RuleID, r.Level, w)
		}
		if r.RuleIndex < 0 || r.RuleIndex >= len(d.Rules) || d.Rules[r.RuleIndex].ID != r.RuleID {
			t.Errorf("%s: ruleIndex %d does not name rule %s", w.id, r.RuleIndex, r.RuleID)
		}
		pl := r.Locations[0].PhysicalLocation
		if pl.ArtifactLocation.URI != w.uri || pl.ArtifactLocation.URIBaseID != "%SRCROOT%" {
			t.Errorf("%s: location %+v", w.id, pl.ArtifactLocation)
		}
		fp := r.PartialFingerprints["sotFinding/v1"]
		if len(fp) != 32 || fps[fp] {
			t.Errorf("%s: fingerprint %q missing or repeated", w.id, fp)
		}
		fps[fp] = true
		if len(r.Properties.Sources) == 0 || r.Properties.Severity == "" || r.Properties.Confidence == "" || r.Properties.Grounding == "" {
			t.Errorf("%s: properties %+v", w.id, r.Properties)
		}
		if !strings.Contains(r.Message.Text, " — ") || !strings.Contains(r.Message.Text, "Sources: ") {
			t.Errorf("%s: message %q", w.id, r.Message.Text)
		}
	}
	if rg := run.Results[0].Locations[0].PhysicalLocation.Region; rg == nil || rg.StartLine != 88 || rg.EndLine != 91 {
		t.Errorf("S1 region: %+v", rg)
	}
	if rg := run.Results[2].Locations[0].PhysicalLocation.Region; rg == nil || rg.StartLine != 12 || rg.EndLine != 12 {
		t.Errorf("S4 region: %+v", rg)
	}
	if rg := run.Results[5].Locations[0].PhysicalLocation.Region; rg != nil {
		t.Errorf("S7 has no line but a region: %+v", rg)
	}
	if run.Results[2].Properties.Perspective != "premortem, red-team" {
		t.Errorf("S4 perspective %q", run.Results[2].Properties.Perspective)
	}
	if bytes.Contains(data, []byte(`"region": {`+"\n"+`                  "startLine": 0`)) {
		t.Error("zero region written")
	}
	// Observations are not results.
	if bytes.Contains(data, []byte("JWT library")) {
		t.Error("an observation became a SARIF result")
	}

	inv := run.Invocations[0]
	if inv.ExecutionSuccessful {
		t.Error("a partial review is reported as successful")
	}
	var texts []string
	for _, n := range inv.Notifications {
		texts = append(texts, n.Level+": "+n.Message.Text)
	}
	want := []string{
		"note: 1 finding has no file location and is listed in REVIEW-SYNTHESIS.md only (section: Rollout plan).",
		"error: Partial review: performance/premortem (chunk 2: internal/client/retry.go) did not complete: openai: 429 Too Many Requests after 4 retries.",
		"warning: 3 changed files were not reviewed: vendor/github.com/example/jwt/jwt.go (vendored); assets/logo.png (binary); api/service.pb.go (generated).",
	}
	if !slices.Equal(texts, want) {
		t.Errorf("notifications:\n got %q\nwant %q", texts, want)
	}

	// A complete review with several unlocated items.
	res.Missing = nil
	res.Skipped = nil
	res.Items[0].Location = finding.Location{}
	data, _ = SARIF(res, "")
	doc = sarifDoc{}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	inv = doc.Runs[0].Invocations[0]
	if !inv.ExecutionSuccessful || len(inv.Notifications) != 1 ||
		inv.Notifications[0].Message.Text != "2 findings have no file location and are listed in REVIEW-SYNTHESIS.md only (section: Rollout plan)." {
		t.Errorf("complete review invocation: %+v", inv)
	}
	if bytes.Contains(data, []byte(`"version": ""`)) || !bytes.Contains(data, []byte(`"version": "0.0.0-dev"`)) {
		t.Error("an unknown tool version must be written as 0.0.0-dev, never empty")
	}

	// An empty result is still a valid log with empty arrays.
	data, _ = SARIF(&synthesis.Result{}, "dev")
	for _, s := range []string{`"results": []`, `"rules": []`, `"executionSuccessful": true`} {
		if !bytes.Contains(data, []byte(s)) {
			t.Errorf("empty SARIF lacks %s", s)
		}
	}
}

func TestFingerprintStable(t *testing.T) {
	a := Fingerprint("security", "./internal/a.go", "Token  compare\nleaks")
	b := Fingerprint("security", "internal/a.go", "token compare leaks")
	if a != b {
		t.Error("fingerprint depends on whitespace, case or ./")
	}
	if a == Fingerprint("performance", "internal/a.go", "token compare leaks") || a == Fingerprint("security", "internal/b.go", "token compare leaks") {
		t.Error("fingerprint ignores specialist or file")
	}
}

// rdDoc is a reviewdog Diagnostic as the tests read it back.
type rdDoc struct {
	Message  string `json:"message"`
	Location struct {
		Path  string `json:"path"`
		Range *struct {
			Start struct{ Line int } `json:"start"`
			End   struct{ Line int } `json:"end"`
		} `json:"range"`
	} `json:"location"`
	Severity string `json:"severity"`
	Source   struct {
		Name string `json:"name"`
		URL  string `json:"url"`
	} `json:"source"`
	Code struct {
		Value string `json:"value"`
	} `json:"code"`
}

func TestRDJSONL(t *testing.T) {
	res := fixture(false)
	data, err := RDJSONL(res)
	if err != nil {
		t.Fatal(err)
	}
	var got []rdDoc
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Bytes()
		if !json.Valid(line) {
			t.Fatalf("not one JSON object: %s", line)
		}
		var d rdDoc
		if err := json.Unmarshal(line, &d); err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	if !bytes.HasSuffix(data, []byte("\n")) || bytes.Count(data, []byte("\n")) != 6 || len(got) != 6 {
		t.Fatalf("%d lines:\n%s", len(got), data)
	}
	want := []struct{ path, sev, code string }{
		{"internal/auth/session.go", "ERROR", "security/must-fix"},
		{"internal/client/retry.go", "ERROR", "performance/must-fix"},
		{"internal/cache/key.go", "WARNING", "security/should-fix"},
		{"internal/server/handler.go", "WARNING", "performance/should-fix"},
		{"internal/server/log.go", "INFO", "security/consider"},
		{"docs/design notes.md", "INFO", "correctness/consider"},
	}
	for i, w := range want {
		g := got[i]
		if g.Location.Path != w.path || g.Severity != w.sev || g.Code.Value != w.code || g.Source.Name != "sot" || g.Source.URL != "https://github.com/sotlabs/sot" || g.Message == "" {
			t.Errorf("line %d: %+v, want %+v", i+1, g, w)
		}
	}
	if r := got[0].Location.Range; r == nil || r.Start.Line != 88 || r.End.Line != 91 {
		t.Errorf("line 1 range: %+v", r)
	}
	if r := got[4].Location.Range; r == nil || r.Start.Line != 5 || r.End.Line != 5 {
		t.Errorf("line 5 range: %+v", r)
	}
	if got[5].Location.Range != nil {
		t.Error("a finding without lines has a range")
	}
	if out, _ := RDJSONL(&synthesis.Result{}); len(out) != 0 {
		t.Errorf("empty result: %q", out)
	}
}

func TestSARIFRulePerSpecialist(t *testing.T) {
	located := func(id string, sev finding.Severity, src ...finding.Finding) synthesis.Item {
		return synthesis.Item{ID: id, Claim: src[0].Claim, Severity: sev, Confidence: finding.High, Grounding: synthesis.Direct,
			Location: src[0].Location, Sources: src}
	}
	tests := []struct {
		name        string
		specialists []string
		items       []synthesis.Item
		want        []string // rule id=level
	}{
		{"a specialist without results still gets a rule", []string{"correctness", "security", "testing"},
			[]synthesis.Item{located("S1", finding.MustFix, fTokenCompare)},
			[]string{"correctness=note", "security=error", "testing=note"}},
		{"no results at all", []string{"performance", "security"}, nil,
			[]string{"performance=note", "security=note"}},
		{"a source outside the listed specialists keeps its rule", []string{"security"},
			[]synthesis.Item{located("S1", finding.ShouldFix, fBuffer)},
			[]string{"performance=warning", "security=note"}},
		{"blank and repeated names are one rule or none", []string{"security", " ", "security"},
			[]synthesis.Item{located("S1", finding.Consider, fLogURL)},
			[]string{"security=note"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := SARIF(&synthesis.Result{Specialists: tt.specialists, Items: tt.items}, "1")
			if err != nil {
				t.Fatal(err)
			}
			var doc sarifDoc
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range doc.Runs[0].Tool.Driver.Rules {
				got = append(got, r.ID+"="+r.DefaultConfiguration.Level)
				if r.Name == "" || r.ShortDescription.Text == "" || len(r.Properties.Tags) == 0 {
					t.Errorf("rule %s incomplete: %+v", r.ID, r)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("rules %q, want %q", got, tt.want)
			}
			for _, r := range doc.Runs[0].Results {
				if rules := doc.Runs[0].Tool.Driver.Rules; r.RuleIndex >= len(rules) || rules[r.RuleIndex].ID != r.RuleID {
					t.Errorf("result ruleIndex %d does not name rule %s", r.RuleIndex, r.RuleID)
				}
			}
		})
	}
}

// TestSectionLocations checks that SARIF and rdjsonl carry the document
// section a finding names: as a logical location and in the message, with
// the file alone (no region) when no line is given, and in the one file
// reviewed when the finding names no file.
func TestSectionLocations(t *testing.T) {
	item := func(l finding.Location) synthesis.Item {
		src := fnd("architecture.1", "architecture", "", finding.ShouldFix, finding.High,
			"Storage has no retention limit.", "The Storage section keeps every event forever.", l)
		return synthesis.Item{ID: "S1", Claim: src.Claim, Severity: src.Severity, Confidence: src.Confidence,
			Grounding: synthesis.Direct, Location: l, Sources: []finding.Finding{src}, Lead: src.ID}
	}
	single := []string{"docs/design.md"}
	several := []string{"docs/design.md", "docs/plan.md"}
	tests := []struct {
		name     string
		typ      string
		reviewed []string
		loc      finding.Location
		file     string // the file of the result; "" for no result
		line     int    // the start line of the region; 0 for none
		section  string // the section carried; "" for none
	}{
		{"file and section", "artifacts", several, finding.Location{File: "docs/plan.md", Section: "Storage"}, "docs/plan.md", 0, "Storage"},
		{"file, lines and section", "artifacts", several, finding.Location{File: "docs/plan.md", StartLine: 12, EndLine: 14, Section: "Storage"}, "docs/plan.md", 12, "Storage"},
		{"section in the one document reviewed", "artifacts", single, finding.Location{Section: "Storage"}, "docs/design.md", 0, "Storage"},
		{"section and line without a file", "artifacts", single, finding.Location{StartLine: 3, Section: "Storage"}, "docs/design.md", 0, "Storage"},
		{"section in one of several documents", "artifacts", several, finding.Location{Section: "Storage"}, "", 0, "Storage"},
		{"section of standard input", "freeform", []string{"stdin"}, finding.Location{Section: "Storage"}, "", 0, "Storage"},
		{"section of a named freeform file", "freeform", []string{"notes.md"}, finding.Location{Section: "Storage"}, "notes.md", 0, "Storage"},
		{"no file and no section", "artifacts", single, finding.Location{}, "", 0, ""},
		{"file without a section", "artifacts", several, finding.Location{File: "docs/plan.md"}, "docs/plan.md", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &synthesis.Result{Type: tt.typ, Reviewed: tt.reviewed, Specialists: []string{"architecture"}, Items: []synthesis.Item{item(tt.loc)}}
			data, err := SARIF(res, "1")
			if err != nil {
				t.Fatal(err)
			}
			var doc sarifDoc
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			run := doc.Runs[0]
			mention := "(section: " + tt.section + ")"
			if tt.file == "" {
				if len(run.Results) != 0 {
					t.Fatalf("a finding without a file became a result: %+v", run.Results)
				}
				n := run.Invocations[0].Notifications
				if len(n) != 1 || (tt.section != "" && !strings.HasSuffix(n[0].Message.Text, mention+".")) {
					t.Errorf("notifications %+v should mention %q", n, mention)
				}
			} else {
				if len(run.Results) != 1 || len(run.Results[0].Locations) != 1 {
					t.Fatalf("results: %+v", run.Results)
				}
				r := run.Results[0]
				l := r.Locations[0]
				if l.PhysicalLocation.ArtifactLocation.URI != tt.file {
					t.Errorf("uri %q, want %q", l.PhysicalLocation.ArtifactLocation.URI, tt.file)
				}
				switch rg := l.PhysicalLocation.Region; {
				case tt.line == 0 && rg != nil:
					t.Errorf("region %+v, want none", rg)
				case tt.line != 0 && (rg == nil || rg.StartLine != tt.line):
					t.Errorf("region %+v, want line %d", rg, tt.line)
				}
				var logical []string
				for _, ll := range l.LogicalLocations {
					logical = append(logical, ll.Kind+"="+ll.Name)
				}
				var want []string
				if tt.section != "" {
					want = []string{"section=" + tt.section}
				}
				if !slices.Equal(logical, want) {
					t.Errorf("logical locations %q, want %q", logical, want)
				}
				if got := strings.Contains(r.Message.Text, mention); got != (tt.section != "") {
					t.Errorf("message %q: mentions %q %v", r.Message.Text, mention, got)
				}
				if len(run.Invocations[0].Notifications) != 0 {
					t.Errorf("a located finding is also a notification: %+v", run.Invocations[0].Notifications)
				}
			}

			data, err = RDJSONL(res)
			if err != nil {
				t.Fatal(err)
			}
			if tt.file == "" {
				if len(data) != 0 {
					t.Errorf("rdjsonl for a finding without a file: %s", data)
				}
				return
			}
			var d rdDoc
			if err := json.Unmarshal(data, &d); err != nil {
				t.Fatal(err)
			}
			if d.Location.Path != tt.file || (d.Location.Range != nil) != (tt.line != 0) {
				t.Errorf("rdjsonl location %+v, want %s line %d", d.Location, tt.file, tt.line)
			}
			if got := strings.Contains(d.Message, mention); got != (tt.section != "") {
				t.Errorf("rdjsonl message %q: mentions %q %v", d.Message, mention, got)
			}
		})
	}
}

// TestLeadSourceAttribution checks that SARIF and rdjsonl file an item under
// the source that leads it, with that source's grounds, rather than under
// the alphabetically first source.
func TestLeadSourceAttribution(t *testing.T) {
	item := func(lead string) synthesis.Item {
		// Sources sorted by id, as the synthesis writes them: correctness
		// comes first, the better-scored security finding leads.
		return synthesis.Item{ID: "S1", Claim: fTokenCompare.Claim, Severity: finding.MustFix, Confidence: finding.High,
			Grounding: synthesis.Direct, Location: fTokenCompare.Location, Sources: []finding.Finding{fTokenCompare2, fTokenCompare}, Lead: lead}
	}
	tests := []struct {
		name                 string
		it                   synthesis.Item
		rule, grounds, claim string
	}{
		{"the lead is not the first source", item("security.red-team.1"), "security", fTokenCompare.Grounds, "security/red-team (security.red-team.1)"},
		{"the lead is the first source", item("correctness.1"), "correctness", fTokenCompare2.Grounds, "correctness (correctness.1)"},
		{"no lead recorded: the first source", item(""), "correctness", fTokenCompare2.Grounds, "correctness (correctness.1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &synthesis.Result{Specialists: []string{"correctness", "security"}, Items: []synthesis.Item{tt.it}}
			data, err := SARIF(res, "1")
			if err != nil {
				t.Fatal(err)
			}
			var doc sarifDoc
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			r := doc.Runs[0].Results[0]
			if r.RuleID != tt.rule {
				t.Errorf("SARIF rule %s, want %s", r.RuleID, tt.rule)
			}
			if !strings.Contains(r.Message.Text, tt.grounds) || !strings.Contains(r.Message.Text, tt.claim) {
				t.Errorf("SARIF message %q lacks the lead's grounds %q or attribution %q", r.Message.Text, tt.grounds, tt.claim)
			}
			if fp := Fingerprint(tt.rule, tt.it.Location.File, tt.it.Claim); r.PartialFingerprints[FingerprintKey] != fp {
				t.Error("the fingerprint is not the lead specialist's")
			}
			line, err := RDJSONL(res)
			if err != nil {
				t.Fatal(err)
			}
			var d rdDoc
			if err := json.Unmarshal(line, &d); err != nil {
				t.Fatal(err)
			}
			if d.Code.Value != tt.rule+"/must-fix" || !strings.Contains(d.Message, tt.grounds) || !strings.Contains(d.Message, tt.claim) {
				t.Errorf("rdjsonl %+v: want code %s/must-fix and the lead's grounds and attribution", d, tt.rule)
			}
		})
	}
}

func TestSummaryMode(t *testing.T) {
	tests := []struct {
		name       string
		reviewMode string
		mode       string
		models     map[string]string
		want       string
	}{
		{"society of thought by default", "", "parallel", nil, "- Mode: society-of-thought (parallel)\n"},
		{"society of thought in debate", "society-of-thought", "debate", nil, "- Mode: society-of-thought (debate)\n"},
		{"single model", "single-model", "parallel", map[string]string{"general-openai-gpt-4-1": "openai:gpt-4.1"}, "- Mode: single-model\n"},
		{"multi model", "multi-model", "parallel", map[string]string{
			"general-openai-gpt-4-1":              "openai:gpt-4.1",
			"general-anthropic-claude-sonnet-4-5": "anthropic:claude-sonnet-4-5",
			"general-openai-o3":                   "openai:o3",
		}, "- Mode: multi-model (3 models)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &synthesis.Result{ReviewMode: tt.reviewMode, Mode: tt.mode, Models: tt.models}
			for s := range tt.models {
				res.Specialists = append(res.Specialists, s)
			}
			md := SynthesisMarkdown(res)
			if !strings.Contains(md, tt.want) {
				t.Errorf("summary lacks %q:\n%s", tt.want, sectionBody(md, SectionSummary))
			}
			if tt.reviewMode != "" && tt.reviewMode != "society-of-thought" && strings.Contains(md, "society-of-thought") {
				t.Errorf("a %s run is described as society-of-thought", tt.reviewMode)
			}
		})
	}
}

// A finding the user dismissed stays in SARIF, suppressed with the reason,
// so code scanning shows it dismissed; reviewdog gets nothing for it.
func TestDismissedFindings(t *testing.T) {
	res := fixture(false)
	var dismissed *synthesis.Item
	for i := range res.Items {
		if res.Items[i].Location.File != "" && res.Items[i].Location.StartLine > 0 {
			dismissed = &res.Items[i]
			break
		}
	}
	if dismissed == nil {
		t.Fatal("the fixture has no located item")
	}
	dismissed.Outcome = &synthesis.Outcome{Status: "dismissed", Reason: "Behind the TLS proxy."}

	data, err := SARIF(res, "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			Results []struct {
				Properties   map[string]any     `json:"properties"`
				Suppressions []sarifSuppression `json:"suppressions"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	suppressed := 0
	for _, r := range doc.Runs[0].Results {
		if len(r.Suppressions) == 0 {
			continue
		}
		suppressed++
		if r.Properties["id"] != dismissed.ID || r.Suppressions[0] != (sarifSuppression{Kind: "external", Justification: "Behind the TLS proxy."}) {
			t.Errorf("suppressed %v with %+v", r.Properties["id"], r.Suppressions)
		}
	}
	if suppressed != 1 {
		t.Errorf("%d suppressed results, want 1", suppressed)
	}

	rd, err := RDJSONL(res)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(rd), dismissed.Claim[:min(len(dismissed.Claim), 30)]) {
		t.Errorf("rdjsonl still reports the dismissed finding %s", dismissed.ID)
	}
}

// Each must-fix and should-fix item carries what a reader needs to act on
// it: the reasoning and the suggested check of the source leading it, and
// the REVIEW file that source came from; the summary lists the files
// reviewed.
func TestSynthesisCarriesTheAction(t *testing.T) {
	res := fixture(false)
	md := SynthesisMarkdown(res)
	for _, it := range res.Items {
		start := strings.Index(md, "### "+it.ID+": ")
		if start < 0 {
			t.Fatalf("no section for %s", it.ID)
		}
		section := md[start:]
		if end := strings.Index(section[4:], "\n#"); end >= 0 {
			section = section[:end+4]
		}
		lead := it.LeadSource()
		file := "REVIEW-" + strings.ToUpper(lead.Specialist)
		if lead.Lens != "" {
			file += "-" + strings.ToUpper(lead.Lens)
		}
		file += ".md"
		actionable := it.Severity == finding.MustFix || it.Severity == finding.ShouldFix
		for _, want := range []string{"**Reasoning**", "**Suggested check**", "`" + file + "`"} {
			if got := strings.Contains(section, want); got != actionable {
				t.Errorf("%s (%s): contains %q = %v, want %v:\n%s", it.ID, it.Severity, want, got, actionable, section)
			}
		}
		if actionable && !strings.Contains(section, strings.Split(lead.Verification, "\n")[0]) {
			t.Errorf("%s lacks its lead's suggested check %q:\n%s", it.ID, lead.Verification, section)
		}
	}
	summary := md[:strings.Index(md, "## "+SectionDiversity)]
	for _, f := range res.Reviewed {
		if !strings.Contains(summary, "  - `"+f+"`") {
			t.Errorf("the summary does not list the reviewed file %s:\n%s", f, summary)
		}
	}
}

// SARIF that GitHub code scanning and the SARIF Multitool accept without
// warnings: every rule has help, a help URI and a friendly name that is
// not its id; regions lie inside their files; the tool has a version.
func TestSARIFForCodeScanning(t *testing.T) {
	item := func(id, file string, start, end int) synthesis.Item {
		f := fnd(id, "security", "", finding.MustFix, finding.High, "claim "+id, "grounds", loc(file, start, end))
		return synthesis.Item{ID: id, Claim: "claim " + id, Severity: finding.MustFix, Confidence: finding.High, Grounding: synthesis.Direct,
			Location: loc(file, start, end), Sources: []finding.Finding{f}, Lead: id}
	}
	res := &synthesis.Result{
		Specialists: []string{"security", "api-design"},
		Items: []synthesis.Item{
			item("S1", "a.go", 88, 200),   // runs past the end
			item("S2", "a.go", 300, 310),  // starts past the end
			item("S3", "./a.go", 50, 10),  // ends before it starts, spelled with ./
			item("S4", "b.go", 7, 9),      // a file of unknown length
			item("S5", "a.go", 150, 150),  // the last line
			item("S6", "gone.go", 12, 40), // a deleted file: its old lines
		},
		FileLines: map[string]int{"a.go": 150, "gone.go": 28},
	}
	want := []struct{ start, end int }{{88, 150}, {150, 150}, {50, 50}, {7, 9}, {150, 150}, {12, 28}}

	tests := []struct{ version, want, semantic string }{
		{"", DevVersion, "0.0.0-dev"},
		{"(devel)", DevVersion, "0.0.0-dev"},
		{"v1.4.0", "v1.4.0", "1.4.0"},
		{"v0.3.1-0.20260101120000-abcdef123456", "v0.3.1-0.20260101120000-abcdef123456", "0.3.1-0.20260101120000-abcdef123456"},
		{"nightly", "nightly", ""},
	}
	for _, tt := range tests {
		data, err := SARIF(res, tt.version)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Runs []struct {
				Tool struct {
					Driver struct {
						Version         string `json:"version"`
						SemanticVersion string `json:"semanticVersion"`
						Rules           []struct {
							ID      string `json:"id"`
							Name    string `json:"name"`
							HelpURI string `json:"helpUri"`
							Help    struct {
								Text     string `json:"text"`
								Markdown string `json:"markdown"`
							} `json:"help"`
						} `json:"rules"`
					} `json:"driver"`
				} `json:"tool"`
				Results []struct {
					Locations []struct {
						PhysicalLocation struct {
							Region *struct {
								StartLine int `json:"startLine"`
								EndLine   int `json:"endLine"`
							} `json:"region"`
						} `json:"physicalLocation"`
					} `json:"locations"`
				} `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		d := doc.Runs[0].Tool.Driver
		if d.Version != tt.want || d.SemanticVersion != tt.semantic {
			t.Errorf("version %q: driver says %q (semantic %q), want %q (semantic %q)", tt.version, d.Version, d.SemanticVersion, tt.want, tt.semantic)
		}
		if len(d.Rules) != 2 {
			t.Fatalf("%d rules, want 2", len(d.Rules))
		}
		for _, r := range d.Rules {
			if strings.EqualFold(r.Name, r.ID) || r.Name == "" || !unicode.IsUpper(rune(r.Name[0])) || strings.ContainsAny(r.Name, " -_") {
				t.Errorf("rule %s: name %q must be a Pascal-case friendly name, not the id", r.ID, r.Name)
			}
			if r.Help.Text == "" || r.Help.Markdown == "" || !strings.Contains(r.Help.Text, r.ID) || r.HelpURI == "" {
				t.Errorf("rule %s lacks help: %+v", r.ID, r)
			}
		}
		for i, r := range doc.Runs[0].Results {
			rg := r.Locations[0].PhysicalLocation.Region
			if rg == nil || rg.StartLine != want[i].start || rg.EndLine != want[i].end {
				t.Errorf("S%d: region %+v, want %d-%d", i+1, rg, want[i].start, want[i].end)
			}
		}
	}

	data, err := RDJSONL(res)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var d rdDoc
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		if d.Location.Range == nil || d.Location.Range.Start.Line != want[i].start || d.Location.Range.End.Line != want[i].end {
			t.Errorf("rdjsonl S%d: range %+v, want %d-%d", i+1, d.Location.Range, want[i].start, want[i].end)
		}
	}
}
