package review_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/review"
	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/review/synthesis"
)

// lookPAT is a GitHub token in a file a specialist reads with its tools.
var lookPAT = "ghp_" + "R7kP2mQ9xW4vT8nL3bJ6hF1cZ5yD0aS2eG9u"

// lookRepo is the golden repository with files the diff does not touch,
// committed: a store a specialist reads with its tools (holding a token),
// and an .env file it is refused.
func lookRepo(t *testing.T) string {
	t.Helper()
	dir := goldenRepo(t)
	files := map[string]string{
		"svc/store.go": "package svc\n\n// Save writes the session without a lock.\nfunc Save(s *Session) { sessions[s.Token] = s } // " + lookPAT + "\n",
		".env":         "SESSION_SECRET=" + lookPAT + "\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"add", "-f", "svc/store.go", ".env"}, {"commit", "-q", "-m", "store", "--", "svc/store.go", ".env"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// looker scripts the specialists of a review with tools: security reads
// svc/store.go (and tries .env and a path out of the project) before it
// answers with a finding on the store; correctness cites a file nobody
// showed it; testing finds nothing. The triage lead is the golden one's.
type looker struct {
	golden responder
	mu     sync.Mutex
	second string // the text of security's round-2 request
}

func (l *looker) respond(rec *llmtest.Recorded) llmtest.Reply {
	if rec.SchemaName != "specialist_review" {
		return l.golden.respond(rec)
	}
	m := specialistRe.FindStringSubmatch(rec.System)
	if m == nil {
		return llmtest.Reply{Fault: llmtest.Fault500}
	}
	answer := func(findings ...map[string]any) llmtest.Reply {
		if findings == nil {
			findings = []map[string]any{}
		}
		return llmtest.Reply{JSON: map[string]any{"examined": "svc/, and what the tools showed", "findings": findings}}
	}
	switch m[1] {
	case "security":
		if len(rec.Tools) > 0 && rec.ToolResults == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{
				{Name: "read_file", Arguments: map[string]any{"path": "svc/store.go"}},
				{Name: "read_file", Arguments: map[string]any{"path": ".env"}},
				{Name: "read_file", Arguments: map[string]any{"path": "../outside.txt"}},
			}}
		}
		var b strings.Builder
		for _, msg := range rec.Messages {
			b.WriteString(msg.Text + "\n")
		}
		l.mu.Lock()
		l.second = b.String()
		l.mu.Unlock()
		return answer(lookFinding("Save writes the session map without a lock, so concurrent logins race.", "svc/store.go", 4))
	case "correctness":
		return answer(lookFinding("The ghost helper drops sessions.", "svc/ghost.go", 2))
	}
	return answer()
}

// lookFinding is a should-fix finding in the answer's shape, of no lens.
func lookFinding(claim, file string, line int) map[string]any {
	f := goldenFinding(claim, "should-fix", file, line, "concurrency")
	f["perspective"] = ""
	return f
}

func lookOptions(t *testing.T, baseURL string) *review.Options {
	o := goldenOptions(t, 0, baseURL, nil)
	o.Context.Perspectives = "none"
	return o
}

// A specialist whose model can call tools looks at a file outside the
// diff: the file reaches its next round fenced and masked, a secret file
// and a path out of the project are refused, the finding it grounds is
// marked as read by a tool, a finding citing a file nobody showed loses
// its confidence, every round is a call the usage counts, and a second run
// replays them all.
func TestSpecialistsLookWithTools(t *testing.T) {
	goldenEnv(t)
	lookRepo(t)
	l := &looker{}
	srv := llmtest.NewServer(llmtest.Config{Seed: 1, Rules: []llmtest.Rule{{Respond: l.respond}}})
	defer srv.Close()
	ctx := context.Background()
	run := func() *review.Outcome {
		o := lookOptions(t, srv.OpenAIBaseURL())
		plan, err := review.Prepare(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		out, err := review.Execute(ctx, plan, o)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	out := run()
	sent := srv.Count()

	if sent != out.Result.Usage.Calls {
		t.Errorf("the provider got %d calls, the usage says %d", sent, out.Result.Usage.Calls)
	}
	offered := 0
	for _, rec := range srv.Requests() {
		if rec.SchemaName == "specialist_review" && len(rec.Tools) > 0 {
			offered++
		}
	}
	if offered != 4 { // three specialists, and security's second round
		t.Errorf("%d specialist requests offered tools, want 4", offered)
	}

	second := l.second
	if !strings.Contains(second, "Save writes the session") || !strings.Contains(second, "<<<BEGIN MATERIAL "+out.Plan.Nonce) {
		t.Errorf("security's second round does not carry svc/store.go fenced with the run's nonce:\n%s", second)
	}
	if strings.Contains(second, lookPAT) {
		t.Error("the token in svc/store.go reached the model unmasked")
	}
	if strings.Contains(second, "SESSION_SECRET") {
		t.Error(".env was read to the model")
	}
	if strings.Count(second, "The look failed") != 2 {
		t.Errorf("want .env and ../outside.txt refused, each with a reason:\n%s", second)
	}

	var store, ghost *finding.Finding
	for i := range out.Reports {
		for j := range out.Reports[i].Findings {
			f := &out.Reports[i].Findings[j]
			switch f.Location.File {
			case "svc/store.go":
				store = f
			case "svc/ghost.go":
				ghost = f
			}
		}
	}
	if store == nil || !store.Looked || store.Confidence != finding.High {
		t.Fatalf("the store finding = %+v, want it kept HIGH and marked looked", store)
	}
	if ghost == nil || ghost.Looked || ghost.Confidence != finding.Low {
		t.Fatalf("the ghost finding = %+v, want its confidence lowered to LOW", ghost)
	}
	if !strings.Contains(strings.Join(out.Result.Notes, "\n"), `"svc/ghost.go", which neither the material nor its tools showed`) {
		t.Errorf("no note says why the ghost finding was lowered: %q", out.Result.Notes)
	}
	found := false
	for _, it := range append(out.Result.Items, out.Result.Observations...) {
		if it.Location.File == "svc/store.go" && it.Grounding == synthesis.Contextual {
			found = true
		}
	}
	if !found {
		t.Error("the store finding is not a contextual item of the synthesis")
	}
	md, err := os.ReadFile(filepath.Join(out.Plan.OutputDir, "REVIEW-SYNTHESIS.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "contextual (read by a tool)") {
		t.Error("REVIEW-SYNTHESIS.md does not say the contextual finding was read by a tool")
	}

	again := run()
	if n := srv.Count() - sent; n != 0 {
		t.Errorf("the second run sent %d requests, want every round replayed from the journal", n)
	}
	if again.Result.Usage.Calls != out.Result.Usage.Calls {
		t.Errorf("the replayed run counts %d calls, the first %d", again.Result.Usage.Calls, out.Result.Usage.Calls)
	}
}

// --no-tools keeps every specialist to the material: no request offers a
// tool, and the run id differs from a run with tools.
func TestNoToolsKeepsSpecialistsToTheMaterial(t *testing.T) {
	goldenEnv(t)
	lookRepo(t)
	l := &looker{}
	srv := llmtest.NewServer(llmtest.Config{Seed: 1, Rules: []llmtest.Rule{{Respond: l.respond}}})
	defer srv.Close()
	ctx := context.Background()
	with := lookOptions(t, srv.OpenAIBaseURL())
	withPlan, err := review.Prepare(ctx, with)
	if err != nil {
		t.Fatal(err)
	}
	o := lookOptions(t, srv.OpenAIBaseURL())
	o.NoTools = true
	plan, err := review.Prepare(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if plan.RunID == withPlan.RunID {
		t.Error("a review without tools has the run id of one with them")
	}
	if plan.LookCallsMax() != 0 || withPlan.LookCallsMax() == 0 {
		t.Errorf("look calls bounded at %d without tools and %d with; want 0 and more", plan.LookCallsMax(), withPlan.LookCallsMax())
	}
	out, err := review.Execute(ctx, plan, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range srv.Requests() {
		if len(rec.Tools) > 0 {
			t.Fatalf("a request offered tools under --no-tools: %v", rec.Tools)
		}
	}
	ghosts := 0
	for _, r := range out.Reports {
		for _, f := range r.Findings {
			if f.Location.File == "svc/ghost.go" {
				ghosts++
				if f.Confidence != finding.Low {
					t.Errorf("without tools, a finding citing a file outside the material kept %s", f.Confidence)
				}
			}
		}
	}
	if ghosts == 0 {
		t.Error("no finding cited svc/ghost.go: the confidence check checked nothing")
	}
}

// A model whose endpoint refuses tools (one without tool calling) is sent
// its single-shot prompt instead: the specialist still reviews, told it
// cannot look, and the synthesis says so. When the endpoint refuses that
// too, the part is missing with a message that says how to review without
// tools.
func TestToolsRefusedReviewsWithout(t *testing.T) {
	for _, tc := range []struct {
		name   string
		always bool // the endpoint refuses security's calls with or without tools
	}{{"falls back", false}, {"refused again", true}} {
		t.Run(tc.name, func(t *testing.T) {
			goldenEnv(t)
			lookRepo(t)
			l := &looker{}
			srv := llmtest.NewServer(llmtest.Config{Seed: 1, Rules: []llmtest.Rule{{Respond: func(rec *llmtest.Recorded) llmtest.Reply {
				if (len(rec.Tools) > 0 || tc.always) && strings.Contains(rec.System, "# You are the security specialist") {
					return llmtest.Reply{Fault: llmtest.Fault400}
				}
				return l.respond(rec)
			}}}})
			defer srv.Close()
			ctx := context.Background()
			o := lookOptions(t, srv.OpenAIBaseURL())
			plan, err := review.Prepare(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			out, err := review.Execute(ctx, plan, o)
			if err != nil {
				t.Fatal(err)
			}
			var missing []string
			for _, m := range out.Result.Missing {
				missing = append(missing, m.Specialist+": "+m.Error)
			}
			got := strings.Join(missing, "\n")
			if tc.always {
				if !strings.Contains(got, "security: ") || !strings.Contains(got, "run again with --no-tools or set review.tools: false") {
					t.Errorf("missing parts %q; want security's, saying how to review without tools", got)
				}
				return
			}
			if got != "" {
				t.Errorf("missing parts %q; want none: security reviews without its tools", got)
			}
			var single *llmtest.Recorded
			for _, rec := range srv.Requests() {
				if strings.Contains(rec.System, "# You are the security specialist") && len(rec.Tools) == 0 {
					single = &rec
				}
			}
			if single == nil {
				t.Fatal("security was never sent a request without tools")
			}
			if strings.Contains(single.System, "read-only tools") || !strings.Contains(single.System, "you cannot open files") {
				t.Error("the request sent without tools still tells security it may look, or not that it cannot")
			}
			notes := strings.Join(out.Result.Notes, "\n")
			if !strings.Contains(notes, "security: openai:gpt-4.1 refused the tools it was offered") {
				t.Errorf("notes %q; want one saying security reviewed without its refused tools", notes)
			}
			found := false
			for _, r := range out.Reports {
				found = found || (r.Specialist == "security" && r.Error == "")
			}
			if !found {
				t.Error("no report from security")
			}
		})
	}
}
