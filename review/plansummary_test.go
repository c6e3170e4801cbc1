package review

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sotlabs/sot/llm/llmtest"
)

// The dry-run summary names every file, each specialist with its model and
// lenses, and the calls; in debate mode it bounds the calls a debate adds.
func TestPlanSummary(t *testing.T) {
	repo := benchRepo(t, 3, 20)
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	tests := []struct {
		name        string
		mode        string
		wantDebate  int
		lenses      string
		wantLenses  []string
		specialists string
	}{
		{"parallel with lenses", Parallel, 0, "premortem,red-team", []string{"premortem", "red-team"}, "security,testing"},
		{"debate without lenses", Debate, 2*(1+2) + continuationCallLimit + maxExtraExchanges, "none", []string{}, "security,testing"},
		{"debate of one specialist runs in parallel", Debate, 0, "none", []string{}, "security"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := benchOptions(t, repo, srv, "openai:gpt-4.1")
			o.Context.Specialists = tt.specialists
			o.Context.Perspectives = tt.lenses
			o.Context.InteractionMode = tt.mode
			p, err := Prepare(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			s := p.Summary(p.Estimate(o))
			wantMode := tt.mode
			if tt.wantDebate == 0 {
				wantMode = Parallel
			}
			if len(s.Files) != 3 || s.Chunks != 1 || s.Type != "diff" || s.Mode != wantMode {
				t.Errorf("files %v, chunks %d, type %q, mode %q", s.Files, s.Chunks, s.Type, s.Mode)
			}
			var want []PlannedSpecialist
			for _, id := range strings.Split(tt.specialists, ",") {
				want = append(want, PlannedSpecialist{ID: id, Model: "openai:gpt-4.1", Lenses: tt.wantLenses})
			}
			if d := cmp.Diff(want, s.Specialists); d != "" {
				t.Errorf("specialists (-want +got):\n%s", d)
			}
			if want := len(want) * max(1, len(tt.wantLenses)); s.SpecialistCalls != want || s.SynthesisCalls != 1 {
				t.Errorf("calls %d + %d, want %d + 1", s.SpecialistCalls, s.SynthesisCalls, want)
			}
			if s.DebateCallsMax != tt.wantDebate {
				t.Errorf("debate calls at most %d, want %d", s.DebateCallsMax, tt.wantDebate)
			}
			if s.Estimate.InputTokens == 0 || s.Estimate.CostUSD <= 0 || s.Estimate.CachedInputTokens > s.Estimate.InputTokens {
				t.Errorf("estimate %+v", s.Estimate)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("planning sent %d requests", n)
			}
		})
	}
}
