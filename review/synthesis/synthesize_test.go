package synthesis

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/tokens"
	"github.com/sotlabs/sot/lexical"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/middleware"
	"github.com/sotlabs/sot/llm/openai"
	"github.com/sotlabs/sot/prompt"
	"github.com/sotlabs/sot/review/finding"
)

// diffAnchor is the material of these tests: auth/session.go lines 40-60
// shown, 41-43 changed; api/routes.go 10-30 shown, 12 changed.
type diffAnchor struct{}

func (diffAnchor) HasFile(p string) bool { return p == "auth/session.go" || p == "api/routes.go" }
func (diffAnchor) IsShown(p string, l int) bool {
	return (p == "auth/session.go" && l >= 40 && l <= 60) || (p == "api/routes.go" && l >= 10 && l <= 30)
}
func (diffAnchor) IsChanged(p string, l int) bool {
	return (p == "auth/session.go" && l >= 41 && l <= 43) || (p == "api/routes.go" && l == 12)
}

func f(id, spec, lens string, sev finding.Severity, conf finding.Confidence, file string, line int, claim string) finding.Finding {
	return finding.Finding{ID: id, Specialist: spec, Lens: lens, Claim: claim, Severity: sev, Confidence: conf, Category: "c",
		Grounds: "grounds of " + id, Location: finding.Location{File: file, StartLine: line}, Warrant: "because " + id, Rebuttal: "unless " + id}
}

func reports(fs ...finding.Finding) []finding.Report {
	by := map[string]*finding.Report{}
	var order []string
	for _, x := range fs {
		k := x.Source()
		if by[k] == nil {
			by[k] = &finding.Report{Specialist: x.Specialist, Lens: x.Lens}
			order = append(order, k)
		}
		by[k].Findings = append(by[k].Findings, x)
	}
	var out []finding.Report
	for _, k := range order {
		out = append(out, *by[k])
	}
	return out
}

// triage starts llmtest answering the triage lead with the given JSON and
// returns a schema-checked OpenAI provider pointed at it.
func triage(t *testing.T, answer any) (llm.Provider, *llmtest.Server) {
	t.Helper()
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{System: "triage lead", JSON: answer}}})
	t.Cleanup(srv.Close)
	p, err := openai.New(openai.Config{Name: "openai", BaseURL: srv.OpenAIBaseURL(), APIKey: "test-key-123"})
	if err != nil {
		t.Fatal(err)
	}
	return middleware.CheckSchema(p), srv
}

func TestMechanicalSynthesis(t *testing.T) {
	in := reports(
		f("security.1", "security", "", finding.MustFix, finding.High, "auth/session.go", 41, "The refresh token from the query string is written to the cookie unchecked."),
		f("correctness.1", "correctness", "", finding.ShouldFix, finding.Medium, "auth/session.go", 42, "The refresh token read from the query string reaches the cookie without validation."),
		f("performance.1", "performance", "", finding.Consider, finding.Medium, "api/routes.go", 20, "The route table is rebuilt on every request."),
		f("architecture.1", "architecture", "", finding.ShouldFix, finding.High, "internal/db/pool.go", 5, "The pool size ignores the configuration."),
		f("testing.1", "testing", "", finding.Consider, finding.Low, "", 0, "No test covers token refresh at all."),
	)
	s, err := Synthesize(context.Background(), in, Options{Type: "diff", Anchor: diffAnchor{}, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Items) != 2 || len(s.Observations) != 2 {
		t.Fatalf("items %d, observations %d; want 2 and 2", len(s.Items), len(s.Observations))
	}
	first := s.Items[0]
	if first.ID != "S1" || first.Severity != finding.MustFix || first.Grounding != Direct || len(first.Sources) != 2 {
		t.Errorf("S1 = %+v; want the merged must-fix, direct, with both sources", first)
	}
	if got := strings.Join(first.SourceIDs(), ","); got != "correctness.1,security.1" {
		t.Errorf("S1 sources = %s", got)
	}
	if s.Items[1].Grounding != Inferential || s.Items[1].Chain == "" {
		t.Errorf("a finding on a context line is inferential with its chain shown: %+v", s.Items[1])
	}
	for _, o := range s.Observations {
		if o.Grounding != Contextual {
			t.Errorf("observation %s has grounding %s", o.ID, o.Grounding)
		}
	}
	if len(s.Trace) != 4 || len(s.InputOrder) != 5 {
		t.Errorf("trace %d entries, input order %d; want 4 and 5", len(s.Trace), len(s.InputOrder))
	}
}

func TestTriageCannotInventFindings(t *testing.T) {
	in := reports(
		f("security.1", "security", "", finding.MustFix, finding.High, "auth/session.go", 41, "The refresh token from the query string is written to the cookie unchecked."),
		f("correctness.1", "correctness", "", finding.ShouldFix, finding.Medium, "auth/session.go", 42, "The refresh token read from the query string reaches the cookie without validation."),
		f("edge-cases.1", "edge-cases", "", finding.ShouldFix, finding.Medium, "api/routes.go", 12, "An empty route list panics at startup."),
	)
	answer := map[string]any{
		"clusters": []any{
			map[string]any{"cluster_id": "C1", "relation": "agreement", "finding_ids": []string{"security.1", "correctness.1"},
				"merged_claim": "The database migration drops the users table without a backup.", "reason": "same problem", "positions": []any{}, "decision_axis": ""},
			map[string]any{"cluster_id": "C2", "relation": "agreement", "finding_ids": []string{"performance.9"}, "merged_claim": "", "reason": "", "positions": []any{}, "decision_axis": ""},
			map[string]any{"cluster_id": "C9", "relation": "agreement", "finding_ids": []string{"security.1"}, "merged_claim": "", "reason": "", "positions": []any{}, "decision_axis": ""},
		},
		"narrative": "The token handling is the main risk [security.1]. Logging leaks passwords too [security.7]. Startup can crash [edge-cases.1].",
	}
	p, srv := triage(t, answer)
	s, err := Synthesize(context.Background(), in, Options{Type: "diff", Anchor: diffAnchor{}, Seed: 1, Executor: &engine.Local{Provider: p}, Model: "openai:gpt-4.1"})
	if err != nil {
		t.Fatal(err)
	}
	if s.TriageError != nil {
		t.Fatal(s.TriageError)
	}
	if srv.Count() != 1 {
		t.Errorf("triage lead called %d times, want 1", srv.Count())
	}
	for _, it := range append(s.Items, s.Observations...) {
		if strings.Contains(it.Claim, "migration") {
			t.Errorf("an invented claim reached the synthesis: %q", it.Claim)
		}
	}
	if s.Items[0].Claim != in[0].Findings[0].Claim {
		t.Errorf("the merged item should fall back to its best source's claim, got %q", s.Items[0].Claim)
	}
	if len(s.Items) != 2 {
		t.Errorf("%d items; the item that cites only an unknown finding must not add one", len(s.Items))
	}
	rej := strings.Join(s.Rejected, "\n")
	for _, want := range []string{"states what no specialist said", "cites no finding any specialist made", "no such cluster", "cites security.7"} {
		if !strings.Contains(rej, want) {
			t.Errorf("rejections lack %q:\n%s", want, rej)
		}
	}
	if strings.Contains(s.Narrative, "passwords") || !strings.Contains(s.Narrative, "[security.1]") {
		t.Errorf("narrative = %q; the sentence citing a finding nobody made must go, the rest stay", s.Narrative)
	}
}

func TestDisputesAndTradeOffs(t *testing.T) {
	perf := f("performance.1", "performance", "", finding.ShouldFix, finding.Medium, "auth/session.go", 41, "Validating the refresh token on every request doubles token lookups.")
	sec := f("security.1", "security", "", finding.MustFix, finding.High, "auth/session.go", 41, "Refresh token must be validated on every request before it is stored.")
	weak := f("correctness.1", "correctness", "", finding.Consider, finding.Low, "api/routes.go", 12, "The route handler returns the wrong status code for missing routes.")
	strong := f("testing.1", "testing", "", finding.MustFix, finding.High, "api/routes.go", 12, "The route handler returns the correct status code for missing routes; the test proves it.")
	tests := []struct {
		name     string
		in       []finding.Report
		relation string
		check    func(t *testing.T, s *Synthesis)
	}{
		{"trade-off resolved by the priority hierarchy", reports(perf, sec), RelTradeOff, func(t *testing.T, s *Synthesis) {
			if len(s.TradeOffs) != 1 {
				t.Fatalf("%d trade-offs", len(s.TradeOffs))
			}
			it := s.Items[0]
			if it.Decision == nil || it.Decision.By != "priority hierarchy" || !it.Decision.Flagged || !strings.Contains(it.Decision.Choice, "Security") {
				t.Errorf("decision = %+v; Security outranks Performance and the decision is flagged", it.Decision)
			}
		}},
		{"factual dispute settled by evidence, not by count", reports(weak, strong), RelFactual, func(t *testing.T, s *Synthesis) {
			d := s.Dissent[0]
			if d.Unresolved || !strings.Contains(d.Resolution, "testing.1") {
				t.Errorf("dispute = %+v; the HIGH, direct finding should prevail", d)
			}
			if s.Items[0].Severity != finding.MustFix {
				t.Errorf("severity %s, want the winner's", s.Items[0].Severity)
			}
		}},
		{"close evidence stays unresolved at the conservative severity", reports(
			f("a.1", "correctness", "", finding.Consider, finding.High, "api/routes.go", 12, "The handler returns the wrong status code for missing routes."),
			f("b.1", "testing", "", finding.MustFix, finding.High, "api/routes.go", 12, "The handler returns the right status code for missing routes.")), RelFactual, func(t *testing.T, s *Synthesis) {
			if !s.Dissent[0].Unresolved || s.Items[0].Severity != finding.MustFix {
				t.Errorf("dispute %+v, severity %s", s.Dissent[0], s.Items[0].Severity)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ids []string
			var pos []any
			for _, r := range tt.in {
				for _, x := range r.Findings {
					ids = append(ids, x.ID)
					obj := "Performance"
					if x.Specialist == "security" {
						obj = "Security"
					}
					pos = append(pos, map[string]any{"finding_id": x.ID, "summary": "position of " + x.ID, "objective": obj})
				}
			}
			p, _ := triage(t, map[string]any{"clusters": []any{map[string]any{"cluster_id": "C1", "relation": tt.relation, "finding_ids": ids,
				"merged_claim": "", "reason": "they disagree", "positions": pos, "decision_axis": "safety against latency"}}, "narrative": ""})
			s, err := Synthesize(context.Background(), tt.in, Options{Type: "diff", Anchor: diffAnchor{}, Executor: &engine.Local{Provider: p}, Model: "openai:gpt-4.1"})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Items) != 1 || s.Items[0].Dispute == nil {
				t.Fatalf("want one disputed item, got %+v", s.Items)
			}
			tt.check(t, s)
		})
	}
}

func TestLensDisagreementIsHighSignal(t *testing.T) {
	in := reports(
		f("security.baseline.1", "security", "baseline", finding.Consider, finding.Medium, "auth/session.go", 41, "The refresh token is copied into the cookie."),
		f("security.red-team.1", "security", "red-team", finding.MustFix, finding.High, "auth/session.go", 41, "An attacker can plant a refresh token in the cookie through the query string."),
	)
	p, _ := triage(t, map[string]any{"clusters": []any{map[string]any{"cluster_id": "C1", "relation": "agreement", "finding_ids": []string{"security.baseline.1", "security.red-team.1"},
		"merged_claim": "", "reason": "", "positions": []any{}, "decision_axis": ""}}, "narrative": ""})
	s, err := Synthesize(context.Background(), in, Options{Type: "diff", Anchor: diffAnchor{}, Executor: &engine.Local{Provider: p}, Model: "openai:gpt-4.1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Dissent) != 1 || !s.Dissent[0].HighSignal {
		t.Fatalf("dissent = %+v; two lenses of one specialist disagreeing is high-signal", s.Dissent)
	}
	if len(s.Items[0].Sources) != 2 || s.Items[0].Sources[0].Lens == s.Items[0].Sources[1].Lens {
		t.Error("both perspective-attributed sources must be kept")
	}
}

func TestInputOrderIsSeeded(t *testing.T) {
	var fs []finding.Finding
	for _, s := range []string{"architecture", "assumptions", "correctness", "edge-cases", "maintainability", "performance", "security", "testing"} {
		fs = append(fs, f(s+".1", s, "", finding.Consider, finding.Low, "", 0, "Distinct concern number "+s))
	}
	run := func(seed int64) string {
		s, err := Synthesize(context.Background(), reports(fs...), Options{Type: "diff", Anchor: diffAnchor{}, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(s.InputOrder, ",")
	}
	if first, again := run(42), run(42); first != again {
		t.Error("the same seed must give the same order")
	}
	if run(42) == run(43) && run(42) == run(44) {
		t.Error("different seeds should shuffle differently")
	}
}

func TestTriageFailureFallsBack(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{System: "triage lead", Fault: llmtest.Fault401}}})
	t.Cleanup(srv.Close)
	p, err := openai.New(openai.Config{Name: "openai", BaseURL: srv.OpenAIBaseURL(), APIKey: "test-key-123"})
	if err != nil {
		t.Fatal(err)
	}
	in := reports(f("security.1", "security", "", finding.MustFix, finding.High, "auth/session.go", 41, "Token unchecked."))
	s, err := Synthesize(context.Background(), in, Options{Type: "diff", Anchor: diffAnchor{}, Executor: &engine.Local{Provider: p}, Model: "openai:gpt-4.1"})
	if err != nil {
		t.Fatal(err)
	}
	if s.TriageError == nil || len(s.Items) != 1 {
		t.Errorf("a failed triage lead should be reported and the findings kept: err %v, items %d", s.TriageError, len(s.Items))
	}
}

// TestItemsDoNotDependOnSeed checks that the randomized presentation order
// changes only what the triage lead sees, never which source leads a merged
// item: score ties go to the more severe source, then to the lower ID.
func TestItemsDoNotDependOnSeed(t *testing.T) {
	tests := []struct {
		name      string
		in        []finding.Report
		wantClaim string
	}{
		{"equal score and severity: the lower id leads", reports(
			f("security.1", "security", "", finding.ShouldFix, finding.High, "auth/session.go", 41, "The refresh token from the query string is written to the cookie unchecked."),
			f("correctness.1", "correctness", "", finding.ShouldFix, finding.High, "auth/session.go", 42, "The refresh token read from the query string reaches the cookie unchecked."),
			f("testing.1", "testing", "", finding.ShouldFix, finding.High, "auth/session.go", 43, "The refresh token copied from the query string into the cookie is unchecked."),
		), "The refresh token read from the query string reaches the cookie unchecked."},
		{"equal score: the more severe leads", reports(
			f("a.1", "correctness", "", finding.ShouldFix, finding.High, "api/routes.go", 12, "The route table keeps a stale handler after reload."),
			f("b.1", "testing", "", finding.MustFix, finding.High, "api/routes.go", 12, "The route table keeps the stale handler after a reload."),
		), "The route table keeps the stale handler after a reload."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var first string
			for seed := int64(0); seed < 40; seed++ {
				s, err := Synthesize(context.Background(), tt.in, Options{Type: "diff", Anchor: diffAnchor{}, Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				if len(s.Items) != 1 {
					t.Fatalf("seed %d: %d items, want one merged item", seed, len(s.Items))
				}
				got := s.Items[0].Claim + " | " + strings.Join(s.Items[0].SourceIDs(), ",")
				if seed == 0 {
					first = got
					if s.Items[0].Claim != tt.wantClaim {
						t.Errorf("claim %q, want %q", s.Items[0].Claim, tt.wantClaim)
					}
				} else if got != first {
					t.Fatalf("seed %d gives %q, seed 0 gave %q", seed, got, first)
				}
			}
		})
	}
}

func TestTier(t *testing.T) {
	at := func(file string, start, end int, section string) *finding.Finding {
		return &finding.Finding{Location: finding.Location{File: file, StartLine: start, EndLine: end, Section: section}}
	}
	tests := []struct {
		name       string
		f          *finding.Finding
		reviewType string
		want       Grounding
	}{
		{"diff: a changed line", at("auth/session.go", 42, 0, ""), "diff", Direct},
		{"diff: a range reaching a changed line", at("auth/session.go", 38, 41, ""), "diff", Direct},
		{"diff: a context line", at("auth/session.go", 50, 0, ""), "diff", Inferential},
		{"diff: a changed file without lines", at("auth/session.go", 0, 0, ""), "diff", Inferential},
		{"diff: a line of a changed file far from any hunk", at("auth/session.go", 300, 0, ""), "diff", Contextual},
		{"diff: a range outside what is shown", at("api/routes.go", 200, 240, ""), "diff", Contextual},
		{"diff: a file not in the diff", at("internal/db/pool.go", 5, 0, ""), "diff", Contextual},
		{"diff: no location", at("", 0, 0, ""), "diff", Contextual},
		{"artifacts: a shown line", at("auth/session.go", 45, 0, ""), "artifacts", Direct},
		{"artifacts: a section", at("auth/session.go", 0, 0, "Rollout"), "artifacts", Direct},
		{"artifacts: a section without a file", at("", 0, 0, "Rollout"), "artifacts", Inferential},
		{"artifacts: a line past the end of the document", at("auth/session.go", 300, 0, ""), "artifacts", Contextual},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Tier(tt.f, diffAnchor{}, tt.reviewType); got != tt.want {
				t.Errorf("Tier = %s, want %s", got, tt.want)
			}
		})
	}
	// An anchor that knows the documents' sections demotes a finding that
	// cites a section no document has.
	withSections := []struct {
		name string
		f    *finding.Finding
		want Grounding
	}{
		{"a section the document has", at("auth/session.go", 0, 0, "Rollout"), Direct},
		{"a section the document lacks", at("auth/session.go", 0, 0, "Security Model"), Contextual},
		{"a section some document has, no file", at("", 0, 0, "Rollout"), Inferential},
		{"a section no document has, no file", at("", 0, 0, "Security Model"), Contextual},
	}
	for _, tt := range withSections {
		t.Run("sections: "+tt.name, func(t *testing.T) {
			if got := Tier(tt.f, sectionAnchor{}, "artifacts"); got != tt.want {
				t.Errorf("Tier = %s, want %s", got, tt.want)
			}
		})
	}
}

// sectionAnchor is diffAnchor whose documents have one section, Rollout.
type sectionAnchor struct{ diffAnchor }

func (sectionAnchor) HasSection(path, section string) bool { return section == "Rollout" }

func TestHighSignal(t *testing.T) {
	m := func(id, spec, lens string, sev finding.Severity) *scored {
		x := f(id, spec, lens, sev, finding.High, "auth/session.go", 41, "claim of "+id)
		return &scored{Finding: x}
	}
	tests := []struct {
		name    string
		members []*scored
		want    bool
	}{
		{"two lenses of one specialist agree on severity", []*scored{
			m("security.baseline.1", "security", "baseline", finding.MustFix),
			m("security.red-team.1", "security", "red-team", finding.MustFix)}, false},
		{"two lenses of one specialist rate it differently", []*scored{
			m("security.baseline.1", "security", "baseline", finding.Consider),
			m("security.red-team.1", "security", "red-team", finding.MustFix)}, true},
		{"different specialists rate it differently", []*scored{
			m("correctness.1", "correctness", "", finding.Consider),
			m("security.1", "security", "", finding.MustFix)}, false},
		{"one lens twice at different severities", []*scored{
			m("security.red-team.1", "security", "red-team", finding.Consider),
			m("security.red-team.2", "security", "red-team", finding.MustFix)}, false},
		{"lenses agree, another specialist dissents", []*scored{
			m("correctness.1", "correctness", "", finding.Consider),
			m("security.baseline.1", "security", "baseline", finding.ShouldFix),
			m("security.premortem.1", "security", "premortem", finding.ShouldFix)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if a, _ := lensConflict(&cluster{members: tt.members}, nil); (a != nil) != tt.want {
				t.Errorf("lens conflict %v, want %v", a != nil, tt.want)
			}
		})
	}
}

func TestLensesOfOneSpecialistCluster(t *testing.T) {
	tests := []struct {
		name     string
		a, b     finding.Finding
		clusters int
	}{
		{"same specialist, different lenses, overlapping lines, different words",
			f("security.baseline.1", "security", "baseline", finding.Consider, finding.Medium, "auth/session.go", 41, "The refresh token is copied into the cookie."),
			f("security.red-team.1", "security", "red-team", finding.MustFix, finding.High, "auth/session.go", 41, "An attacker plants credentials through a crafted link."), 1},
		{"different specialists, overlapping lines, different words",
			f("correctness.1", "correctness", "", finding.Consider, finding.Medium, "auth/session.go", 41, "The refresh token is copied into the cookie."),
			f("security.1", "security", "", finding.MustFix, finding.High, "auth/session.go", 41, "An attacker plants credentials through a crafted link."), 2},
		{"same specialist and lens, overlapping lines, different words",
			f("security.red-team.1", "security", "red-team", finding.Consider, finding.Medium, "auth/session.go", 41, "The refresh token is copied into the cookie."),
			f("security.red-team.2", "security", "red-team", finding.MustFix, finding.High, "auth/session.go", 41, "An attacker plants credentials through a crafted link."), 2},
		{"same specialist, different lenses, lines apart",
			f("security.baseline.1", "security", "baseline", finding.Consider, finding.Medium, "auth/session.go", 41, "The refresh token is copied into the cookie."),
			f("security.red-team.1", "security", "red-team", finding.MustFix, finding.High, "auth/session.go", 55, "An attacker plants credentials through a crafted link."), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := []*scored{{Finding: tt.a, words: lexical.Words(tt.a.Claim)}, {Finding: tt.b, words: lexical.Words(tt.b.Claim)}}
			if got := len(clusterFindings(fs)); got != tt.clusters {
				t.Errorf("%d clusters, want %d", got, tt.clusters)
			}
		})
	}
}

func TestAgreeingLensesAreNotHighSignal(t *testing.T) {
	base := f("security.baseline.1", "security", "baseline", finding.MustFix, finding.High, "api/routes.go", 12, "The route handler returns the wrong status code for missing routes.")
	red := f("security.red-team.1", "security", "red-team", finding.MustFix, finding.High, "api/routes.go", 12, "The route handler returns the wrong status code, which leaks which routes exist.")
	other := f("testing.1", "testing", "", finding.Consider, finding.Low, "api/routes.go", 12, "The route handler returns the correct status code for missing routes.")
	redLow := red
	redLow.Severity = finding.Consider
	tests := []struct {
		name     string
		in       []finding.Report
		relation string
		want     bool
	}{
		{"factual dispute, the lenses on the same side", reports(base, red, other), RelFactual, false},
		{"factual dispute, the lenses on different sides", reports(base, redLow, other), RelFactual, true},
		{"trade-off, the lenses on the same side", reports(base, red, other), RelTradeOff, false},
		{"agreement, the lenses agree", reports(base, red), RelAgreement, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ids []string
			for _, r := range tt.in {
				for _, x := range r.Findings {
					ids = append(ids, x.ID)
				}
			}
			p, _ := triage(t, map[string]any{"clusters": []any{map[string]any{"cluster_id": "C1", "relation": tt.relation, "finding_ids": ids,
				"merged_claim": "", "reason": "", "positions": []any{}, "decision_axis": ""}}, "narrative": ""})
			s, err := Synthesize(context.Background(), tt.in, Options{Type: "diff", Anchor: diffAnchor{}, Executor: &engine.Local{Provider: p}, Model: "openai:gpt-4.1"})
			if err != nil {
				t.Fatal(err)
			}
			got := false
			for _, d := range s.Dissent {
				got = got || d.HighSignal
			}
			if got != tt.want {
				t.Errorf("high-signal %v, want %v; dissent %+v", got, tt.want, s.Dissent)
			}
		})
	}
}

func TestGroundedKeepsPolarity(t *testing.T) {
	src := func(id, claim, grounds string) *scored {
		x := finding.Finding{ID: id, Claim: claim, Grounds: grounds, Warrant: "Attackers control the query string."}
		return &scored{Finding: x, words: lexical.Words(claim)}
	}
	notValidated := []*scored{
		src("security.1", "The token is not validated before it is written to the cookie.", "session.go:41 copies the token into the cookie."),
		src("correctness.1", "The token isn't validated before the cookie is set.", "Nothing checks the token at session.go:42."),
	}
	validated := []*scored{
		src("security.1", "The token is validated before it is written to the cookie.", "session.go:41 calls Validate on the token."),
	}
	tests := []struct {
		name    string
		claim   string
		sources []*scored
		want    bool
	}{
		{"same words, opposite polarity", "The token is validated before it is written to the cookie, so there is no problem.", notValidated, false},
		{"negation dropped", "The token is validated before it is written to the cookie.", notValidated, false},
		{"negation kept", "The token is not validated before it is written to the cookie.", notValidated, true},
		{"another negation form, same polarity", "The token is never validated before it is written to the cookie.", notValidated, true},
		{"negation added", "The token is not validated before it is written to the cookie.", validated, false},
		{"matching positive claim", "The token is validated before it is written to the cookie.", validated, true},
		{"invented claim", "The database migration drops the users table without a backup.", notValidated, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := grounded(tt.claim, tt.sources); got != tt.want {
				t.Errorf("grounded(%q) = %v, want %v", tt.claim, got, tt.want)
			}
		})
	}
}

func TestNarrativeEnforced(t *testing.T) {
	known := map[string]*scored{}
	for _, x := range []finding.Finding{
		{ID: "security.red-team.1", Specialist: "security", Lens: "red-team", Claim: "The logger writes passwords to the access log in plain text.",
			Grounds: "log.go:12 logs the whole request body.", Warrant: "Log files are readable by operators."},
		{ID: "security.baseline.2", Specialist: "security", Lens: "baseline", Claim: "The session cookie lacks the Secure flag.",
			Grounds: "session.go:41 sets the cookie without Secure.", Warrant: "The cookie travels over plain HTTP."},
		{ID: "correctness.1", Specialist: "correctness", Claim: "The retry loop never stops when the upstream keeps failing.",
			Grounds: "retry.go:40 loops without an attempt limit.", Warrant: "A dead upstream pins a goroutine."},
		{ID: "testing.1", Specialist: "testing", Claim: "The retry loop is validated by a test.",
			Grounds: "retry_test.go covers the loop.", Warrant: "Tests catch regressions."},
	} {
		known[x.ID] = &scored{Finding: x, words: lexical.Words(x.Claim)}
	}
	tests := []struct {
		name     string
		sentence string
		kept     bool
		reason   string
	}{
		{"cites a real finding and says what it says", "Passwords leak into the access log [security.red-team.1].", true, ""},
		{"several ids, commas", "The security perspectives flag plain-text passwords in the log and a cookie without the Secure flag [security.red-team.1, security.baseline.2].", true, ""},
		{"several ids, semicolons and spaces", "Passwords reach the log; the cookie lacks Secure [security.red-team.1; security.baseline.2 correctness.1].", true, ""},
		{"ids in separate brackets", "Passwords reach the log [security.red-team.1] and the cookie lacks Secure [security.baseline.2].", true, ""},
		{"only narrative words", "Security and correctness reviewers agree this is must-fix [security.red-team.1, correctness.1].", true, ""},
		{"one of several ids invented", "Passwords leak [security.red-team.1, security.baseline.4].", false, "cites security.baseline.4, which no specialist reported"},
		{"an item id is not a finding id", "See [S9].", false, "cites S9, which no specialist reported"},
		{"no citation", "The SQL query in db.go is injectable.", false, "cites no finding"},
		{"real id, unsupported content", "The SQL query in the database layer is injectable by crafted input [security.red-team.1].", false, "do not say"},
		{"real id, opposite polarity", "The retry loop stops when the upstream keeps failing [correctness.1].", false, "contradicts"},
		{"support must come from the cited finding", "The retry loop never stops when the upstream keeps failing [security.baseline.2].", false, "do not say"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kept, rejected := checkNarrative(tt.sentence, known)
			if (kept != "") != tt.kept {
				t.Fatalf("kept %q, rejected %q; want kept=%v", kept, rejected, tt.kept)
			}
			if !tt.kept && (len(rejected) != 1 || !strings.Contains(rejected[0], tt.reason)) {
				t.Errorf("rejections %q, want one saying %q", rejected, tt.reason)
			}
			if tt.kept && len(rejected) != 0 {
				t.Errorf("kept sentence also rejected: %q", rejected)
			}
		})
	}
}

// TestNarrativeThroughSynthesis runs the narrative rules end to end, with
// the triage lead's answer coming over the wire.
func TestNarrativeThroughSynthesis(t *testing.T) {
	in := reports(
		f("security.red-team.1", "security", "red-team", finding.MustFix, finding.High, "auth/session.go", 41, "The refresh token from the query string is written to the cookie unchecked."),
		f("security.baseline.1", "security", "baseline", finding.ShouldFix, finding.Medium, "api/routes.go", 12, "The logger writes passwords to the access log."),
	)
	tests := []struct {
		name      string
		narrative string
		kept      string
		rejected  string
	}{
		{"a good sentence stays", "The refresh token from the query string reaches the cookie unchecked [security.red-team.1].",
			"The refresh token from the query string reaches the cookie unchecked [security.red-team.1].", ""},
		{"one invented id among real ones", "Passwords leak to the access log [security.baseline.1, security.baseline.4].", "", "cites security.baseline.4"},
		{"an id that is no finding", "See [S9].", "", "cites S9"},
		{"no citation", "The SQL query in db.go is injectable.", "", "cites no finding"},
		{"a real id, content nobody stated", "The SQL query in db.go is injectable [security.red-team.1].", "", "do not say"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := triage(t, map[string]any{"clusters": []any{}, "narrative": tt.narrative})
			s, err := Synthesize(context.Background(), in, Options{Type: "diff", Anchor: diffAnchor{}, Executor: &engine.Local{Provider: p}, Model: "openai:gpt-4.1"})
			if err != nil {
				t.Fatal(err)
			}
			if s.Narrative != tt.kept {
				t.Errorf("narrative %q, want %q", s.Narrative, tt.kept)
			}
			rej := strings.Join(s.Rejected, "\n")
			if (tt.rejected == "") != (rej == "") || !strings.Contains(rej, tt.rejected) {
				t.Errorf("rejected %q, want one saying %q", rej, tt.rejected)
			}
		})
	}
}

func TestTriageItemRejections(t *testing.T) {
	in := reports(
		f("security.1", "security", "", finding.MustFix, finding.High, "auth/session.go", 41, "The refresh token from the query string is written to the cookie unchecked."),
		f("correctness.1", "correctness", "", finding.ShouldFix, finding.Medium, "auth/session.go", 42, "The refresh token read from the query string reaches the cookie without validation."),
		f("edge-cases.1", "edge-cases", "", finding.ShouldFix, finding.Medium, "api/routes.go", 12, "An empty route list panics at startup."),
		f("testing.1", "testing", "", finding.Consider, finding.Medium, "api/routes.go", 12, "An empty route list makes startup panic, and no test covers it."),
	)
	tests := []struct {
		name string
		ids  []string
		want string
		not  string
	}{
		{"ids of another cluster", []string{"edge-cases.1", "testing.1"}, "cites findings of another cluster (edge-cases.1 of C2, testing.1 of C2)", "no finding any specialist made"},
		{"ids nobody reported", []string{"performance.9"}, "cites no finding any specialist made", "another cluster"},
		{"a mix of both", []string{"performance.9", "testing.1"}, "cites findings of another cluster (testing.1 of C2)", "no finding any specialist made"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := triage(t, map[string]any{"clusters": []any{map[string]any{"cluster_id": "C1", "relation": "agreement", "finding_ids": tt.ids,
				"merged_claim": "", "reason": "", "positions": []any{}, "decision_axis": ""}}, "narrative": ""})
			s, err := Synthesize(context.Background(), in, Options{Type: "diff", Anchor: diffAnchor{}, Executor: &engine.Local{Provider: p}, Model: "openai:gpt-4.1"})
			if err != nil {
				t.Fatal(err)
			}
			var item string
			for _, r := range s.Rejected {
				if strings.HasPrefix(r, "triage item for cluster C1 dropped") {
					item = r
				}
			}
			if !strings.Contains(item, tt.want) || strings.Contains(item, tt.not) {
				t.Errorf("rejection %q, want it to say %q and not %q (all: %q)", item, tt.want, tt.not, s.Rejected)
			}
		})
	}
}

func TestLeadIsTheBestSource(t *testing.T) {
	tests := []struct {
		name string
		in   []finding.Report
		want string
	}{
		{"the higher score leads, not the first id", reports(
			f("correctness.1", "correctness", "", finding.ShouldFix, finding.Low, "auth/session.go", 42, "The refresh token read from the query string reaches the cookie unchecked."),
			f("security.1", "security", "", finding.MustFix, finding.High, "auth/session.go", 41, "The refresh token from the query string is written to the cookie unchecked.")), "security.1"},
		{"a single finding leads itself", reports(
			f("testing.1", "testing", "", finding.Consider, finding.Low, "api/routes.go", 12, "No test covers the empty route list.")), "testing.1"},
		{"ties go to the lower id", reports(
			f("security.1", "security", "", finding.ShouldFix, finding.High, "auth/session.go", 41, "The refresh token from the query string is written to the cookie unchecked."),
			f("correctness.1", "correctness", "", finding.ShouldFix, finding.High, "auth/session.go", 42, "The refresh token read from the query string reaches the cookie unchecked.")), "correctness.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Synthesize(context.Background(), tt.in, Options{Type: "diff", Anchor: diffAnchor{}, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			it := s.Items[0]
			if it.Lead != tt.want || it.LeadSource() == nil || it.LeadSource().ID != tt.want {
				t.Errorf("lead %q (source %+v), want %s", it.Lead, it.LeadSource(), tt.want)
			}
		})
	}
	legacy := Item{Sources: []finding.Finding{{ID: "a.1"}, {ID: "b.1"}}}
	if legacy.LeadSource().ID != "a.1" {
		t.Error("an item without Lead falls back to its first source")
	}
	if (&Item{}).LeadSource() != nil {
		t.Error("an item without sources has no lead")
	}
}

// A triage prompt over the budget is put to the lead in batches, each of
// which fits, and the answers of every batch are used.
func TestTriageBatchesOverTheBudget(t *testing.T) {
	var fs []finding.Finding
	answer := map[string]any{"clusters": []any{}, "narrative": ""}
	for i := range 12 {
		file, line := "auth/session.go", 40+2*i // twelve clusters of two
		id := fmt.Sprintf("security.%d", i+1)
		other := fmt.Sprintf("testing.%d", i+1)
		claim := fmt.Sprintf("Concern %d: %s", i, strings.Repeat(fmt.Sprintf("subject%d detail%d ", i, i), 20))
		fs = append(fs, f(id, "security", "", finding.ShouldFix, finding.High, file, line, claim),
			f(other, "testing", "", finding.ShouldFix, finding.Medium, file, line, claim))
	}
	p, srv := triage(t, answer)
	in := reports(fs...)
	whole, err := Synthesize(context.Background(), in, Options{Type: "diff", Anchor: diffAnchor{}, Executor: &engine.Local{Provider: p}, Model: "openai:gpt-4.1"})
	if err != nil || whole.TriageError != nil {
		t.Fatalf("err %v, triage %v", err, whole.TriageError)
	}
	if n := srv.Count(); n != 1 {
		t.Fatalf("%d triage calls without a budget, want 1", n)
	}
	full := srv.Requests()[0].LastUser()
	budget := tokens.Count(triageSystem) + tokens.Count(full)/3
	s, err := Synthesize(context.Background(), in, Options{Type: "diff", Anchor: diffAnchor{}, Executor: &engine.Local{Provider: p}, Model: "openai:gpt-4.1", MaxPromptTokens: budget})
	if err != nil || s.TriageError != nil {
		t.Fatalf("err %v, triage %v", err, s.TriageError)
	}
	calls := srv.Requests()[1:]
	if len(calls) < 3 {
		t.Fatalf("%d triage calls under a third of the prompt, want at least 3", len(calls))
	}
	seen := map[string]bool{}
	for _, r := range calls {
		if n := tokens.Count(triageSystem) + tokens.Count(r.LastUser()); n > budget {
			t.Errorf("a batch of %d tokens over the budget of %d", n, budget)
		}
		for _, l := range strings.Split(r.LastUser(), "\n") {
			if l = strings.TrimPrefix(l, prompt.Gutter); strings.HasPrefix(l, "### Cluster ") {
				if seen[l] {
					t.Errorf("%s sent twice", l)
				}
				seen[l] = true
			}
		}
	}
	if len(seen) != strings.Count(full, "### Cluster ") {
		t.Errorf("%d clusters sent in batches, %d in the whole prompt", len(seen), strings.Count(full, "### Cluster "))
	}
	if len(s.Items) != len(whole.Items) {
		t.Errorf("%d items from batches, %d from one call", len(s.Items), len(whole.Items))
	}
}
