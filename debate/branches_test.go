package debate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

// With the three built-in observers: three branch questions in one step,
// three branch debates in lockstep (turn t of every branch in one step),
// each branch's debaters seeing the passage, the observer's summary of the
// main debate and the question but not the main transcript; then one step
// of syntheses, one of merge-backs and the final merge.
func TestBranchesInLockstep(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: responder}}})
	defer srv.Close()
	o := testOptions(t, testProject(t), srv.OpenAIBaseURL(), nil)
	o.Rounds = 1
	p, out := runDebate(t, o)
	res := out.Result
	if err := out.Verdict(); err != nil {
		t.Fatalf("verdict %v: %+v", err, res.Missing)
	}
	if len(res.Questions) != 3 || len(res.Branches) != 3 || len(res.Merged) != 0 {
		t.Fatalf("%d questions, %d branches, merged %v", len(res.Questions), len(res.Branches), res.Merged)
	}
	for i, b := range res.Branches {
		q := branchQuestions[i]
		if b.N != i+1 || b.Question.Question != q.Question || b.Question.Name != q.Observer || !b.Complete() {
			t.Errorf("branch %d: %+v", i+1, b)
		}
		if len(b.Debate.Turns) != 6 {
			t.Errorf("branch %d has %d turns, want 3 debaters × 2 rounds", b.N, len(b.Debate.Turns))
		}
		for k, turn := range b.Debate.Turns {
			if want := turnReply(q.Where, k+1, fmt.Sprint(k/3+1), turn.Name); turn.Text != want {
				t.Errorf("branch %d turn %d: %q, want %q", b.N, k+1, turn.Text, want)
			}
			if turn.Summary == "" {
				t.Errorf("branch %d turn %d has no summary", b.N, k+1)
			}
		}
		if b.Debate.Summary == "" || b.Synthesis == nil || b.Synthesis.Summary != "The "+q.Where+" debate settles the pace and leaves Death's kindness open." {
			t.Errorf("branch %d: summary %q, synthesis %+v", b.N, b.Debate.Summary, b.Synthesis)
		}
		if want := "Merged back from " + q.Where + ": the ride reframes the Symbolist's courtship."; b.MergeBack != want {
			t.Errorf("branch %d merge-back %q, want %q", b.N, b.MergeBack, want)
		}
	}
	if !strings.HasPrefix(res.Final, "The final understanding") {
		t.Errorf("final %q", res.Final)
	}
	// The steps: 3 main turns, the questions, 6 lockstep branch steps of
	// three turns each, the syntheses, the merge-backs, the final merge.
	var whats []string
	for _, st := range res.Steps {
		whats = append(whats, fmt.Sprintf("%d calls", len(st.Calls)))
	}
	want := []string{"1 calls", "1 calls", "1 calls", "3 calls", "3 calls", "3 calls", "3 calls", "3 calls", "3 calls", "3 calls", "3 calls", "3 calls", "1 calls"}
	if !slices.Equal(whats, want) || len(res.Steps) != p.Steps() {
		t.Fatalf("steps %v, want %v (plan: %d)", whats, want, p.Steps())
	}
	for k, st := range res.Steps[4:10] {
		for b, c := range st.Calls {
			if want := fmt.Sprintf("debate/branch/%d/turn/%02d", b+1, k+1); c != want {
				t.Errorf("lockstep step %d call %d is %s, want %s", st.N, b, c, want)
			}
		}
	}
	if syn := res.Steps[10]; !slices.Contains(syn.Riders, "debate/branch/2/summary") || !slices.Contains(syn.Riders, "debate/branch/3/turn/06/summary") {
		t.Errorf("the synthesis step carried %v", syn.Riders)
	}
	// What a branch debater sees.
	for _, r := range srv.Requests() {
		if !strings.Contains(r.System, "# The branch debate") {
			continue
		}
		u := r.LastUser()
		if !strings.Contains(r.System, "Because I could not stop for Death") || !strings.Contains(u, "# Where the main debate stands") ||
			!strings.Contains(u, "They disagree on whether Immortality is a person.") || !strings.Contains(u, "# The question for this branch") {
			t.Errorf("a branch turn lacks the passage, the summary of the main debate or the question:\n%s", u)
		}
		for _, turn := range res.Main.Turns {
			if strings.Contains(u, turn.Text) {
				t.Errorf("a branch turn holds the main debate's turn %d", turn.N)
			}
		}
	}
	// The temperatures of the later kinds of call.
	temps := map[string]float64{}
	for _, r := range srv.Requests() {
		switch {
		case r.SchemaName == questionSchemaName:
			temps["question"] = *r.Temperature
		case r.SchemaName == synthesisSchemaName:
			temps["synthesis"] = *r.Temperature
		case strings.Contains(r.LastUser(), "Write the enriched understanding."), strings.Contains(r.LastUser(), "Write the final enriched understanding."):
			temps["merge"] = *r.Temperature
		}
	}
	if temps["question"] != 0.55 || temps["synthesis"] != 0.5 || temps["merge"] != 0.6 {
		t.Errorf("temperatures %v", temps)
	}
	if n := len(srv.Requests()); n > p.Calls() {
		t.Errorf("%d calls, over the plan's bound %d", n, p.Calls())
	}
}

// Two observers asking nearly the same question make one branch: the later
// question is folded into the earlier one's, and the result says so.
func TestDuplicateQuestionsMerged(t *testing.T) {
	dup := "What is the slow ride like from inside the carriage, and why does the speaker feel no haste at all?"
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: func(r *llmtest.Recorded) llmtest.Reply {
		if r.SchemaName == questionSchemaName && strings.Contains(r.System, "# You are The Materialist Historian") {
			a := questionReply("The Materialist Historian")
			a["question"] = dup
			return llmtest.Reply{JSON: a}
		}
		return responder(r)
	}}}})
	defer srv.Close()
	o := testOptions(t, testProject(t), srv.OpenAIBaseURL(), nil)
	o.Rounds = 1
	_, out := runDebate(t, o)
	res := out.Result
	if len(res.Questions) != 3 || len(res.Branches) != 2 {
		t.Fatalf("%d questions in %d branches", len(res.Questions), len(res.Branches))
	}
	if len(res.Merged) != 1 {
		t.Fatalf("merged %+v", res.Merged)
	}
	m := res.Merged[0]
	if m.Observer != "The Materialist Historian" || m.Into != 1 || m.IntoAsker != "The Phenomenologist" || m.Question != dup || m.Similarity < 0.5 {
		t.Errorf("merge %+v", m)
	}
	if b := res.Branches[0]; !slices.Equal(b.Observers, []string{"phenomenologist", "materialist-historian"}) {
		t.Errorf("branch 1 asked by %v", b.Observers)
	}
	if b := res.Branches[1]; b.Question.Name != "The Pragmatist Engineer" || b.N != 2 {
		t.Errorf("branch 2: %+v", b.Question)
	}
	if res.Questions[1].Branch != 1 {
		t.Errorf("the merged question points to branch %d", res.Questions[1].Branch)
	}
	if err := out.Verdict(); err != nil {
		t.Errorf("a merge is no missing part: %v", err)
	}
}

// A branch whose turn fails stops there and is recorded as missing; the
// other branches are synthesized and merged back, the final merge covers
// them, and the run ends partial.
func TestFailedBranch(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: func(rec *llmtest.Recorded) llmtest.Reply {
		if strings.Contains(unfenced(rec.LastUser()), branchQuestions[1].Question+"\n\n# The branch debate so far\n\n## Turn 1") {
			return llmtest.Reply{Fault: llmtest.Fault500}
		}
		return responder(rec)
	}}}})
	defer srv.Close()
	o := testOptions(t, testProject(t), srv.OpenAIBaseURL(), nil)
	o.Rounds = 1
	p, out := runDebate(t, o)
	res := out.Result
	var pe *PartialError
	if err := out.Verdict(); !errors.As(err, &pe) || pe.Missing != 1 {
		t.Fatalf("verdict %v, missing %+v", err, res.Missing)
	}
	b2 := res.Branches[1]
	if b2.Failed != "debate (turn 2)" || b2.Synthesis != nil || b2.MergeBack != "" || len(b2.Debate.Turns) != 1 {
		t.Errorf("branch 2: failed %q, %d turns, synthesis %v", b2.Failed, len(b2.Debate.Turns), b2.Synthesis)
	}
	if m := res.Missing[0]; m.Step != "branch 2" || !strings.Contains(m.What, "turn 2 (The Symbolist, round 1) of branch 2") || !strings.Contains(m.Error, "500") {
		t.Errorf("missing %+v", m)
	}
	for _, n := range []int{0, 2} {
		if !res.Branches[n].Complete() {
			t.Errorf("branch %d did not complete: %+v", n+1, res.Branches[n])
		}
	}
	var final []string
	for _, r := range srv.Requests() {
		if strings.Contains(r.LastUser(), "Write the final enriched understanding.") {
			final = append(final, r.LastUser())
		}
	}
	if len(final) != 1 || !strings.Contains(final[0], "## Branch 1") || strings.Contains(final[0], "## Branch 2") || !strings.Contains(final[0], "## Branch 3") {
		t.Errorf("the final merge: %q", final)
	}
	// Branch 2 sent nothing after its failed turn.
	for _, st := range res.Steps {
		for _, c := range st.Calls {
			if strings.HasPrefix(c, "debate/branch/2/") && c != "debate/branch/2/turn/01" && c != "debate/branch/2/turn/02" {
				t.Errorf("branch 2 went on after its failure: %s", c)
			}
		}
	}
	if p.RunID == "" || res.Final == "" {
		t.Errorf("no final understanding")
	}
}

// A structured answer wrapped in prose and a code fence is read; one that
// fails the schema is asked for once more with the error, and read.
func TestJSONWrappedInProse(t *testing.T) {
	prose := func(v any) string {
		b, _ := json.MarshalIndent(v, "", "  ")
		return "Here is the question I would ask, as JSON:\n\n```json\n" + string(b) + "\n```\n\nI hope it helps the debate."
	}
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{
		{System: "# You are The Pragmatist Engineer", Fault: llmtest.FaultSchemaViolation, Times: 1},
		{Respond: func(r *llmtest.Recorded) llmtest.Reply {
			switch {
			case r.SchemaName == questionSchemaName && strings.Contains(r.System, "# You are The Phenomenologist"):
				return llmtest.Reply{Text: prose(questionReply("The Phenomenologist"))}
			case r.SchemaName == synthesisSchemaName:
				rep := responder(r)
				return llmtest.Reply{Text: "Synthesis follows.\n" + prose(rep.JSON)}
			}
			return responder(r)
		}}}})
	defer srv.Close()
	o := testOptions(t, testProject(t), srv.OpenAIBaseURL(), nil)
	o.Rounds = 1
	_, out := runDebate(t, o)
	res := out.Result
	if err := out.Verdict(); err != nil {
		t.Fatalf("verdict %v: %+v", err, res.Missing)
	}
	if len(res.Branches) != 3 || res.Branches[0].Question.Question != branchQuestions[0].Question || res.Branches[2].Question.Question != branchQuestions[2].Question {
		t.Fatalf("questions %+v", res.Questions)
	}
	for _, b := range res.Branches {
		if b.Synthesis == nil || len(b.Synthesis.Perspectives) != 1 {
			t.Errorf("branch %d synthesis %+v", b.N, b.Synthesis)
		}
	}
	asked := 0
	for _, r := range requestsWith(srv, "# You are The Pragmatist Engineer") {
		if r.SchemaName == questionSchemaName {
			asked++
			if asked == 2 && !strings.Contains(r.LastUser(), "does not validate against the required JSON Schema") {
				t.Errorf("the second request does not say what was wrong: %q", r.LastUser())
			}
		}
	}
	if asked != 2 {
		t.Errorf("the pragmatist was asked %d times, want twice", asked)
	}
}

// Without observers one generic question makes the one branch, and its
// merge-back is the enriched understanding: no final merge is called.
func TestNoObservers(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: responder}}})
	defer srv.Close()
	o := testOptions(t, testProject(t), srv.OpenAIBaseURL(), nil)
	o.Rounds, o.BranchRounds, o.Observers = 1, 1, "none"
	p, out := runDebate(t, o)
	res := out.Result
	if err := out.Verdict(); err != nil {
		t.Fatal(err)
	}
	if len(res.Branches) != 1 || res.Branches[0].Question.Observer != "" || res.Branches[0].Question.Question != branchQuestions[3].Question {
		t.Fatalf("branches %+v", res.Branches)
	}
	if res.Final != res.Branches[0].MergeBack || len(res.Notes) == 0 {
		t.Errorf("final %q, notes %v", res.Final, res.Notes)
	}
	for _, r := range srv.Requests() {
		if strings.Contains(r.LastUser(), "Write the final enriched understanding.") {
			t.Errorf("a final merge was called for one branch")
		}
		if r.SchemaName == questionSchemaName && !strings.Contains(r.System, "the most important question it left unresolved") {
			t.Errorf("the generic question's prompt: %s", r.System)
		}
	}
	if len(res.Steps) != p.Steps() {
		t.Errorf("%d steps, plan %d", len(res.Steps), p.Steps())
	}
}

// undetached is an Executor that cannot detach, as a durable executor that
// replays the protocol step by step: the summaries run inline, before the
// step they ride with.
type undetached struct{ x engine.Executor }

func (i undetached) Execute(ctx context.Context, tasks []*engine.Task) []engine.Result {
	return i.x.Execute(ctx, tasks)
}

// A budget stops the run between steps: what was done is written, the run
// is partial, and the same debate with a larger budget finishes it,
// replaying what was paid for. The run goes through an Executor that runs
// the summaries inline, so the calls reach the meter in the protocol's
// order and the run has one outcome: turn 1; turn 1's summary and turn 2;
// turn 2's summary, the fourth call; then turn 3 is refused.
func TestBudgetStopsTheRun(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: responder}}})
	defer srv.Close()
	o := testOptions(t, testProject(t), srv.OpenAIBaseURL(), nil)
	o.Rounds, o.BranchRounds = 1, 1
	o.Config.Budget.MaxCalls = 4
	o.NewExecutor = func(p llm.Provider, h engine.Hooks, fallback string) engine.Executor {
		return undetached{&engine.Local{Provider: p, Hooks: h, Fallback: fallback}}
	}
	_, out := runDebate(t, o)
	var pe *PartialError
	if err := out.Verdict(); out.Stopped == nil || !errors.As(err, &pe) {
		t.Fatalf("stopped %v, verdict %v", out.Stopped, err)
	}
	if n := len(srv.Requests()); n != 4 {
		t.Errorf("%d requests under a budget of 4 calls", n)
	}
	turns := out.Result.Main.Turns
	if len(turns) != 2 || len(out.Result.Branches) != 0 {
		t.Fatalf("%d turns, %d branches", len(turns), len(out.Result.Branches))
	}
	for _, turn := range turns {
		if turn.Summary == "" {
			t.Errorf("turn %d has no summary", turn.N)
		}
	}
	o.NewExecutor = nil
	o.Config.Budget.MaxCalls = 0
	_, out = runDebate(t, o)
	if err := out.Verdict(); err != nil || out.Result.Usage.Replayed != 4 {
		t.Errorf("the second run: %v, usage %+v", err, out.Result.Usage)
	}
}
