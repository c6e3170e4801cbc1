package review

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/middleware"
	"github.com/sotlabs/sot/review/synthesis"
)

var continuationSummaryRe = regexp.MustCompile(`^Summarize continuation (\d+)\.`)

// calledIn reads the fake provider's request log and returns, for each
// exchange of a debate ("round 1", "round 2", "continuation 1", ...), the
// specialists that were called in it. Continuations run one after the
// other, each followed by the lead's summary of it, so a continuation call
// belongs to the continuation after the last summarized one.
func calledIn(recs []llmtest.Recorded) map[string][]string {
	out := map[string][]string{}
	summarized := 0
	for _, r := range recs {
		if m := continuationSummaryRe.FindStringSubmatch(r.LastUser()); m != nil {
			summarized++
			continue
		}
		m := specialistRe.FindStringSubmatch(r.System)
		if m == nil {
			continue
		}
		name := "round 1"
		switch {
		case strings.Contains(r.System, "# Debate continuation"):
			name = exchangeName(maxRounds + summarized + 1)
		case roundRe.MatchString(r.System):
			all := roundRe.FindAllStringSubmatch(r.System, -1)
			name = "round " + all[len(all)-1][1]
		}
		if !slices.Contains(out[name], m[1]) {
			out[name] = append(out[name], m[1])
		}
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

// The Debate Trace shows only what happened: a specialist that agreed in
// the global rounds and was never called again does not appear in the
// continuations, which are labelled as such, name the specialists called,
// and are never called rounds; review.json and the REVIEW files say the
// same, checked against the fake provider's request log.
func TestDebateTraceShowsOnlyWhatHappened(t *testing.T) {
	s := script{
		findings: map[string]map[int][]map[string]any{"security": {1: {rawFinding(1, "the session token reaches the cookie without any validation step")}}},
		positions: map[string]map[int]map[string]string{
			"security":    {2: {"T1": "maintain"}, 3: {"T1": "maintain"}, 9: {"T1": "maintain"}},
			"correctness": {2: {"T1": "disagree"}, 3: {"T1": "disagree"}, 9: {"T1": "disagree"}},
			"testing":     {2: {"T1": "agree"}, 3: {"T1": "agree"}, 9: {"T1": "agree"}},
		},
		kind: "factual",
	}
	out, srv := runDebateScript(t, s, "security,correctness,testing")
	called := calledIn(srv.Requests())
	if got := called["continuation 1"]; !slices.Equal(got, []string{"correctness", "security"}) {
		t.Fatalf("continuation 1 called %v; the test needs security and correctness, and testing left out", got)
	}
	if _, ok := called["continuation 2"]; !ok {
		t.Fatal("the test needs a second continuation")
	}
	if _, ok := called["round 4"]; ok {
		t.Fatal("the debate ran a fourth global round")
	}

	dir := out.Plan.OutputDir
	if _, err := WriteFormats(dir, out.Result, []string{"json"}, "test"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "review.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Threads []synthesis.Thread `json:"threads"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	th := func(ts []synthesis.Thread) *synthesis.Thread {
		for i := range ts {
			if ts[i].ID == "T1" {
				return &ts[i]
			}
		}
		t.Fatal("review.json has no thread T1")
		return nil
	}(doc.Threads)
	continuations := 0
	for _, r := range th.Rounds {
		var name string
		switch {
		case r.Continuation > 0 && r.Round == 0:
			name = exchangeName(maxRounds + r.Continuation)
			continuations++
			var specs []string
			for _, src := range r.Called {
				spec, _, _ := strings.Cut(src, "/")
				specs = append(specs, spec)
			}
			slices.Sort(specs)
			if !slices.Equal(specs, called[name]) {
				t.Errorf("%s lists %v as called; the request log shows %v", name, r.Called, called[name])
			}
		case r.Continuation == 0 && r.Round >= 1 && r.Round <= maxRounds:
			name = exchangeName(r.Round)
		default:
			t.Errorf("an exchange numbered round %d, continuation %d: there are %d rounds and continuations are not rounds", r.Round, r.Continuation, maxRounds)
			continue
		}
		for _, resp := range r.Responses {
			spec, _, _ := strings.Cut(resp.Source, "/")
			if !slices.Contains(called[name], spec) {
				t.Errorf("the trace has %s say %q in %s, but %s was not called in it (called: %v)", resp.Source, resp.Stance, name, resp.Source, called[name])
			}
		}
	}
	if continuations != 2 {
		t.Errorf("T1 records %d continuations, want 2: %+v", continuations, th.Rounds)
	}

	md, err := os.ReadFile(filepath.Join(dir, synthesisFile))
	if err != nil {
		t.Fatal(err)
	}
	trace := string(md[strings.Index(string(md), "## Debate Trace"):])
	for _, bad := range []string{"Round 4", "Round 5"} {
		if strings.Contains(trace, bad) {
			t.Errorf("the Debate Trace shows a %q:\n%s", bad, trace)
		}
	}
	for _, want := range []string{"**Continuation 1** (security, correctness)", "**Continuation 2** (security, correctness)"} {
		if !strings.Contains(trace, want) {
			t.Errorf("the Debate Trace lacks %q:\n%s", want, trace)
		}
	}
	for _, block := range strings.Split(trace, "- **Continuation")[1:] {
		if i := strings.Index(block, "- **"); i >= 0 {
			block = block[:i]
		}
		if strings.Contains(block, "testing") {
			t.Errorf("a continuation shows testing, which was never called after round 3:\n%s", block)
		}
	}
	rf, err := os.ReadFile(filepath.Join(dir, "REVIEW-TESTING.md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(rf), "## Continuation") || strings.Contains(string(rf), "## Round 4") {
		t.Errorf("REVIEW-TESTING.md records an exchange testing was not called in:\n%s", rf)
	}
	sf, err := os.ReadFile(filepath.Join(dir, "REVIEW-SECURITY.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sf), "## Continuation 1") || strings.Contains(string(sf), "## Round 4") {
		t.Errorf("REVIEW-SECURITY.md should record its continuations as such:\n%s", sf)
	}
}

// gitRepo makes a repository in a temporary directory and returns it with
// a function that runs git there.
func gitRepo(t *testing.T) (string, func(args ...string)) {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) { gitIn(t, dir, args...) }
	git("init", "-q", "-b", "main")
	return dir, git
}

// goLines is a Go file of n lines whose line k (1-based) says mark[k], or
// its default text.
func goLines(n int, mark map[int]string) string {
	var b strings.Builder
	b.WriteString("package a\n")
	for k := 2; k <= n; k++ {
		if m, ok := mark[k]; ok {
			b.WriteString(m + "\n")
		} else {
			fmt.Fprintf(&b, "var v%d = %d\n", k, k)
		}
	}
	return b.String()
}

// findingAt answers every specialist with one finding on file's lines
// start..end, and the triage lead with nothing.
func findingAt(file string, start, end int) llmtest.Rule {
	return llmtest.Rule{Respond: func(rec *llmtest.Recorded) llmtest.Reply {
		if strings.HasPrefix(rec.System, "You are the triage lead") {
			return llmtest.Reply{JSON: map[string]any{"clusters": []any{}, "narrative": ""}}
		}
		f := rawFinding(1, "the changed variable is never validated before use")
		f["severity"], f["file"], f["start_line"], f["end_line"] = "must-fix", file, start, end
		f["grounds"] = fmt.Sprintf("%s:%d assigns it without a check", file, start)
		return llmtest.Reply{JSON: map[string]any{"findings": []any{f}, "examined": "the diff"}}
	}}
}

// A SARIF region never runs past its file's last line, whichever side of
// which diff the file's new version comes from.
func TestSARIFRegionsStayInsideTheFile(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string, git func(...string)) // leaves a.go's new side with 36 lines
		diff  string
		stage bool
	}{
		{"work tree", func(t *testing.T, dir string, git func(...string)) {
			putFile(t, dir, "a.go", goLines(36, map[int]string{35: "var changed = 1"}))
		}, "", false},
		{"range", func(t *testing.T, dir string, git func(...string)) {
			putFile(t, dir, "a.go", goLines(36, map[int]string{35: "var changed = 1"}))
			git("commit", "-qam", "change")
			putFile(t, dir, "a.go", goLines(80, nil)) // the work tree is not the new side
		}, "HEAD~1..HEAD", false},
		{"staged", func(t *testing.T, dir string, git func(...string)) {
			putFile(t, dir, "a.go", goLines(36, map[int]string{35: "var changed = 1"}))
			git("add", "a.go")
			putFile(t, dir, "a.go", goLines(80, nil))
		}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, git := gitRepo(t)
			putFile(t, dir, ".gitignore", "/out/\n")
			putFile(t, dir, "a.go", goLines(40, nil))
			git("add", ".")
			git("commit", "-qm", "base")
			tt.setup(t, dir, git)
			srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{findingAt("a.go", 35, 500)}})
			t.Cleanup(srv.Close)
			o := benchOptions(t, dir, srv, "openai:gpt-4.1")
			o.Context.Specialists, o.Context.Perspectives = "security", "none"
			o.Diff, o.Staged = tt.diff, tt.stage
			out := runReview(t, o)
			if len(out.Result.Items) != 1 {
				t.Fatalf("items %+v, observations %+v; want the finding as an item", out.Result.Items, out.Result.Observations)
			}
			if _, err := WriteFormats(out.Plan.OutputDir, out.Result, []string{"sarif"}, "v1.0.0"); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(out.Plan.OutputDir, "review.sarif"))
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Runs []struct {
					Results []struct {
						Locations []struct {
							PhysicalLocation struct {
								Region struct{ StartLine, EndLine int } `json:"region"`
							} `json:"physicalLocation"`
						} `json:"locations"`
					} `json:"results"`
				} `json:"runs"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			rg := doc.Runs[0].Results[0].Locations[0].PhysicalLocation.Region
			if rg.StartLine != 35 || rg.EndLine != 36 {
				t.Errorf("region %d-%d, want 35-36: the new a.go has 36 lines", rg.StartLine, rg.EndLine)
			}
		})
	}
}

func putFile(t *testing.T, dir, name, body string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Every output in a run directory belongs to the latest synthesis, and
// the optional ones are those asked for: a re-run of the same review
// renders the formats it is asked for from its own synthesis and removes
// those an earlier invocation wrote that it is not asked for again;
// resolving renders again the outputs the run has; an empty result written
// into a directory leaves only the outputs it was asked for.
func TestNoStaleOutputs(t *testing.T) {
	repo := benchRepo(t, 1, 30)
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{manyFindings(3)}})
	t.Cleanup(srv.Close)
	o := benchOptions(t, repo, srv, "openai:gpt-4.1")
	o.Context.Specialists, o.Context.Perspectives = "security", "none"
	exists := func(dir, name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	sarifResults := func(dir string) int {
		b, err := os.ReadFile(filepath.Join(dir, "review.sarif"))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Runs []struct{ Results []json.RawMessage } `json:"runs"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		return len(doc.Runs[0].Results)
	}

	var first *Outcome
	steps := []struct {
		name     string
		findings int
		formats  []string
		want     map[string]bool
	}{
		{"every format", 3, []string{"json", "sarif", "rdjson", "html"},
			map[string]bool{"review.json": true, "review.sarif": true, "review.rdjsonl": true, "review.html": true}},
		{"again, sarif only, after the specialist changed its mind", 1, []string{"sarif"},
			map[string]bool{"review.json": false, "review.sarif": true, "review.rdjsonl": false, "review.html": false}},
		{"again, no format", 1, nil,
			map[string]bool{"review.json": false, "review.sarif": false, "review.rdjsonl": false, "review.html": false}},
		{"again, html", 1, []string{"html"},
			map[string]bool{"review.json": false, "review.sarif": false, "review.rdjsonl": false, "review.html": true}},
	}
	for i, step := range steps {
		srv.SetConfig(llmtest.Config{Rules: []llmtest.Rule{manyFindings(step.findings)}})
		o.Formats = step.formats
		var out *Outcome
		if i == 0 {
			out = runReview(t, o)
			first = out
		} else {
			var err error
			if out, err = Execute(context.Background(), first.Plan, o); err != nil {
				t.Fatal(err)
			}
			if out.Plan.RunID != first.Plan.RunID {
				t.Fatal("the re-run is another run")
			}
		}
		dir := out.Plan.OutputDir
		for name, want := range step.want {
			if exists(dir, name) != want {
				t.Errorf("%s: %s exists = %v, want %v", step.name, name, !want, want)
			}
		}
		if exists(dir, "review.sarif") {
			if n := sarifResults(dir); n != step.findings {
				t.Errorf("%s: %d SARIF results, want the latest synthesis' %d", step.name, n, step.findings)
			}
		}
	}

	// Resolving renders again the outputs the run has, and no other.
	dir := first.Plan.OutputDir
	o.Formats = []string{"sarif"}
	if _, err := Execute(context.Background(), first.Plan, o); err != nil {
		t.Fatal(err)
	}
	run, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Save("test"); err != nil {
		t.Fatal(err)
	}
	if n := sarifResults(dir); n != 1 || exists(dir, "review.json") || exists(dir, "review.rdjsonl") {
		t.Errorf("after saving the run: %d SARIF results (want 1), review.json %v, review.rdjsonl %v (want neither)", n, exists(dir, "review.json"), exists(dir, "review.rdjsonl"))
	}

	empty := t.TempDir()
	res := EmptyResult(Context{Type: "diff"}, "no changes to review", nil)
	if _, err := WriteEmpty(empty, res, []string{"json", "sarif", "rdjson"}, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteEmpty(empty, res, []string{"sarif"}, "test"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"review.json": false, "review.sarif": true, "review.rdjsonl": false} {
		if exists(empty, name) != want {
			t.Errorf("after the second empty result with --format sarif: %s exists = %v, want %v", name, !want, want)
		}
	}
}

// manyFindings answers every specialist with n findings on distinct lines
// of the bench repository's file, and the triage lead with nothing.
func manyFindings(n int) llmtest.Rule {
	return llmtest.Rule{Respond: func(rec *llmtest.Recorded) llmtest.Reply {
		if strings.HasPrefix(rec.System, "You are the triage lead") {
			return llmtest.Reply{JSON: map[string]any{"clusters": []any{}, "narrative": ""}}
		}
		claims := []string{"the handler never closes the request body it reads",
			"a negative length from the caller panics the slice expression",
			"the retry loop ignores the context and never gives up"}
		var fs []any
		for i := range n {
			f := rawFinding(4*i+1, claims[i])
			f["severity"] = "must-fix"
			fs = append(fs, f)
		}
		return llmtest.Reply{JSON: map[string]any{"findings": fs, "examined": "the diff"}}
	}}
}

// A review of a removal can still find must-fix problems: findings citing
// lines of a deleted file are graded against the old file's lines, and the
// synthesis says when a deleted file was shown only in part.
func TestDeletedFilesAreGradedAgainstTheirOldLines(t *testing.T) {
	dir, git := gitRepo(t)
	putFile(t, dir, ".gitignore", "/out/\n")
	putFile(t, dir, "auth/check.go", goLines(120, map[int]string{100: "func Check(token string) bool { return token != \"\" }"}))
	putFile(t, dir, "auth/small.go", goLines(12, nil))
	git("add", ".")
	git("commit", "-qm", "base")
	git("rm", "-q", "auth/check.go", "auth/small.go")
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: func(rec *llmtest.Recorded) llmtest.Reply {
		if strings.HasPrefix(rec.System, "You are the triage lead") {
			return llmtest.Reply{JSON: map[string]any{"clusters": []any{}, "narrative": ""}}
		}
		removed := rawFinding(1, "removing the only token check lets every caller through")
		removed["severity"], removed["file"], removed["start_line"], removed["end_line"] = "must-fix", "auth/check.go", 100, 100
		past := rawFinding(2, "an unrelated helper beyond the old file's end")
		past["severity"], past["file"], past["start_line"], past["end_line"] = "should-fix", "auth/check.go", 400, 401
		return llmtest.Reply{JSON: map[string]any{"findings": []any{removed, past}, "examined": "the deletions"}}
	}}}})
	t.Cleanup(srv.Close)
	o := benchOptions(t, dir, srv, "openai:gpt-4.1")
	o.Context.Specialists, o.Context.Perspectives = "security", "none"
	out := runReview(t, o)
	res := out.Result
	if len(res.Items) != 1 || res.Items[0].Severity != "must-fix" || res.Items[0].Grounding != synthesis.Direct {
		t.Fatalf("items %+v; want the finding on the deleted file's line 100 as a direct must-fix", res.Items)
	}
	if len(res.Observations) != 1 || res.Observations[0].Location.StartLine != 400 {
		t.Errorf("observations %+v; want the finding past the old file's 120 lines", res.Observations)
	}
	notes := strings.Join(res.Notes, "\n")
	if !strings.Contains(notes, "auth/check.go (40 of 120 lines)") || strings.Contains(notes, "auth/small.go") {
		t.Errorf("the notes must say auth/check.go was shown only in part, and only it: %s", notes)
	}
	md, err := os.ReadFile(filepath.Join(out.Plan.OutputDir, synthesisFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "auth/check.go (40 of 120 lines)") {
		t.Error("REVIEW-SYNTHESIS.md does not say the deleted file was cut short")
	}
	if res.FileLines["auth/check.go"] != 120 {
		t.Errorf("file lines %v; a deleted file's lines are its old lines", res.FileLines)
	}
}

// --max-cost holds for a whole review: with every specialist call ready at
// once, the run stops before it could spend more than the cap.
func TestReviewStaysUnderMaxCost(t *testing.T) {
	repo := benchRepo(t, 2, 200)
	srv := llmtest.NewServer(llmtest.Config{Latency: 20 * time.Millisecond})
	t.Cleanup(srv.Close)
	o := benchOptions(t, repo, srv, "openai:gpt-4.1")
	o.Context.Perspectives = "none"
	p, err := Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	m := middleware.NewMeter(middleware.Budget{}, llm.DefaultPrices(), nil)
	worst := 0.0
	for _, task := range p.Tasks {
		c, _ := m.WorstCost(task.Prompt())
		worst = max(worst, c)
	}
	limit := 1.5 * worst // one call at a time at most, whatever it costs
	o.Config.Budget.MaxCost = limit
	out, err := Execute(context.Background(), p, o)
	if err != nil {
		t.Fatal(err)
	}
	if out.Result.Usage.CostUSD > limit {
		t.Errorf("the review spent $%.4f under --max-cost $%.4f", out.Result.Usage.CostUSD, limit)
	}
	if !errors.Is(out.Stopped, llm.ErrBudget) || !strings.Contains(out.Stopped.Error(), "--max-cost") {
		t.Errorf("stopped: %v; want the cost cap to stop the run", out.Stopped)
	}
	if n := srv.Count(); n == 0 || n >= len(p.Tasks) {
		t.Errorf("%d of %d specialist calls sent; want some, not all", n, len(p.Tasks))
	}
}

// Under --max-cost a model without a known price is refused before any
// call and before the output directory is touched, as a configuration
// error that says to add its price.
func TestReviewRefusesUnpricedModelUnderMaxCost(t *testing.T) {
	repo := benchRepo(t, 1, 30)
	srv := llmtest.NewServer(llmtest.Config{})
	t.Cleanup(srv.Close)
	o := benchOptions(t, repo, srv, "openai:house-model")
	o.Context.Specialists, o.Context.Perspectives = "security", "none"
	o.Config.Budget.MaxCost = 1
	p, err := Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Execute(context.Background(), p, o)
	var ue *middleware.UnpricedError
	if !errors.As(err, &ue) || !errors.Is(err, llm.ErrConfig) || !strings.Contains(err.Error(), "prices:") || !strings.Contains(err.Error(), "openai:house-model") {
		t.Fatalf("err = %v; want a configuration error naming the model and prices:", err)
	}
	if srv.Count() != 0 {
		t.Errorf("%d calls were sent", srv.Count())
	}
	if _, err := os.Stat(p.OutputDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the output directory was created: %v", err)
	}
}
