package scenario_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/stack"
	"github.com/sotlabs/sot/prompt"
)

// A fourth scenario, "poll", written the way a new one would be: it asks
// several voices the same question and writes POLL.md and poll.json. All of
// its glue is the block below; everything else (the stack and its budgets,
// the run directory, the record, the journal and resume, the verdict, the
// listing) is the runner's.

// pollOptions are the poll's options: the shared ones, and its own.
type pollOptions struct {
	scenario.Options
	Question string
	Voices   []string
}

// pollRecord is the poll's part of run.json.
type pollRecord struct {
	Kind     string `json:"kind"`
	Question string `json:"question"`
	Command  string `json:"command,omitempty"`
}

// pollResult is poll.json.
type pollResult struct {
	Question string            `json:"question"`
	Answers  map[string]string `json:"answers"`
	Missing  []string          `json:"missing,omitempty"`
	Calls    int               `json:"calls"`
}

var pollLayout = run.Layout{
	Owns:    func(name string) bool { return name == "POLL.md" || name == "poll.json" },
	Outputs: []string{"POLL.md", "poll.json"},
	Field:   "--output-dir",
}

// pollPlan is the plan: the run's id, its directory, and a call per voice.
type pollPlan struct {
	runID, nonce, top, dir string
	tasks                  []*engine.Task
}

func planPoll(o *pollOptions) *pollPlan {
	id := run.NewID("poll-v1")
	id.Add(o.Question, o.Model)
	id.Add(o.Voices...)
	p := &pollPlan{runID: id.String(), top: o.Dir, dir: o.OutputDir}
	if p.dir == "" {
		p.dir = filepath.Join(o.Dir, ".sot", "polls", p.runID)
	}
	p.nonce = prompt.NonceFor(run.Key(), p.runID)
	for _, v := range o.Voices {
		p.tasks = append(p.tasks, &engine.Task{ID: v, Group: v, Request: &llm.Request{Model: o.Model, Label: "poll/" + v,
			System:   "You are " + v + ". Answer in one sentence.",
			Messages: []llm.Message{{Role: llm.RoleUser, Content: prompt.Fence(o.Question, p.nonce)}}}})
	}
	return p
}

// executePoll is the protocol (one step) between the runner's Begin and
// Finish, and the renderers.
func executePoll(ctx context.Context, p *pollPlan, o *pollOptions) (*pollResult, error) {
	r, err := scenario.Begin(&o.Options, scenario.Spec{What: "a poll", Other: "another poll", Top: p.top, OutputDir: p.dir, Layout: pollLayout,
		State: run.State{RunID: p.runID, Nonce: p.nonce, Payload: &pollRecord{Kind: "poll", Question: o.Question, Command: o.Command}}, Models: []string{o.Model}})
	if err != nil {
		return nil, scenario.UserErrors(err)
	}
	defer r.Close()
	res := &pollResult{Question: o.Question, Answers: map[string]string{}}
	for _, out := range r.Executor("").Execute(ctx, p.tasks) {
		if out.Err != nil {
			res.Missing = append(res.Missing, out.Task.ID)
			continue
		}
		res.Answers[out.Task.ID] = out.Resp.Text
	}
	if err := ctx.Err(); err != nil {
		return nil, scenario.Interrupted(err)
	}
	res.Calls = r.Spent().Calls
	js, _ := json.MarshalIndent(res, "", "  ")
	var md strings.Builder
	fmt.Fprintf(&md, "# %s\n\n", o.Question)
	for _, v := range o.Voices {
		if a, ok := res.Answers[v]; ok {
			fmt.Fprintf(&md, "- **%s**: %s\n", v, a)
		} else {
			fmt.Fprintf(&md, "- **%s**: missing\n", v)
		}
	}
	files, err := r.Write(scenario.File{Name: "POLL.md", Data: []byte(md.String())}, scenario.File{Name: "poll.json", Data: append(js, '\n')})
	if err != nil {
		return nil, err
	}
	if err := r.Finish(files); err != nil {
		return nil, err
	}
	if len(res.Missing) > 0 {
		return res, &scenario.PartialError{Result: "the poll", Missing: len(res.Missing), See: "POLL.md"}
	}
	return res, nil
}

// listPolls lists the polls of a project.
func listPolls(top string) ([]run.Listed, error) {
	return run.ListOf(top, []string{filepath.Join(".sot", "polls", "*")}, nil, func(e run.Entry, rec *pollRecord) run.Described {
		d := run.Described{Kind: rec.Kind, Material: rec.Question, Command: rec.Command}
		if r, ok := run.ReadResult[pollResult](e, "poll.json"); ok {
			d.Finished = &run.Finished{Missing: len(r.Missing), Calls: r.Calls}
			d.Items = len(r.Answers)
		}
		return d
	})
}

// The end of the poll's glue; the test follows.

// pollSetup is a project, the fake model server and the poll's options,
// with a call budget of maxCalls (0: none).
func pollSetup(t *testing.T, maxCalls int) (*llmtest.Server, *pollOptions) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: func(r *llmtest.Recorded) llmtest.Reply {
		return llmtest.Reply{Text: "as " + strings.TrimSuffix(strings.Fields(r.System)[2], ".") + " I would say yes"}
	}}}})
	t.Cleanup(srv.Close)
	top := t.TempDir()
	if err := os.Mkdir(filepath.Join(top, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := config.Defaults()
	p := cfg.Providers["openai"]
	p.BaseURL = srv.OpenAIBaseURL()
	cfg.Providers["openai"] = p
	cfg.Cache.Disabled = true
	cfg.Budget.MaxCalls = maxCalls
	getenv := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-test-poll-0123456789"
		}
		return ""
	}
	o := &pollOptions{Question: "Is a fourth scenario one file of glue?", Voices: []string{"sceptic", "builder", "tester"}}
	o.Dir, o.Model, o.Config, o.Getenv, o.Command = top, "openai:gpt-4.1", &cfg, getenv, "sot poll"
	o.NewStack = func(journal string) (*stack.Stack, error) {
		return stack.New(&cfg, stack.Options{JournalPath: journal, Getenv: getenv})
	}
	return srv, o
}

func TestToyScenario(t *testing.T) {
	srv, o := pollSetup(t, 0)
	ctx := context.Background()
	p := planPoll(o)
	res, err := executePoll(ctx, p, o)
	if err != nil {
		t.Fatalf("the poll failed: %v", err)
	}
	if scenario.ExitCode(err) != scenario.ExitOK || len(res.Answers) != 3 || srv.Count() != 3 {
		t.Fatalf("a whole poll: exit %d, %d answers, %d requests; want 0, 3, 3", scenario.ExitCode(err), len(res.Answers), srv.Count())
	}
	md, err := os.ReadFile(filepath.Join(p.dir, "POLL.md"))
	if err != nil || !strings.Contains(string(md), "**tester**: as tester I would say yes") {
		t.Fatalf("POLL.md does not hold the tester's answer: %v\n%s", err, md)
	}

	// The same command again: every answer is replayed from the journal,
	// no request reaches the server, and the files come out the same.
	if _, err := executePoll(ctx, planPoll(o), o); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(filepath.Join(p.dir, "POLL.md"))
	if srv.Count() != 3 || string(again) != string(md) {
		t.Fatalf("the re-run sent %d requests in all (want 3) or wrote another POLL.md:\n%s", srv.Count(), again)
	}

	// The run is listed like any other: finished, its calls, its command.
	runs, err := listPolls(o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Kind != "poll" || runs[0].State != "finished" || runs[0].Calls != 3 || runs[0].Items != 3 || runs[0].Resume != "sot poll" {
		t.Fatalf("the listing: %+v", runs)
	}
}

// A budget the runner's stack enforces stops a voice; the poll is written
// with what came back, says what is missing, exits 3, and the same command
// with the budget raised pays only for the missing voice.
func TestToyScenarioPartialThenResumed(t *testing.T) {
	srv, o := pollSetup(t, 2)
	ctx := context.Background()
	o.Config.Concurrency = 1
	res, err := executePoll(ctx, planPoll(o), o)
	var partial *scenario.PartialError
	if !errors.As(err, &partial) || scenario.ExitCode(err) != scenario.ExitPartial || len(res.Missing) != 1 {
		t.Fatalf("under a budget of 2 calls: %v (exit %d), result %+v; want a partial poll missing one voice, exit 3", err, scenario.ExitCode(err), res)
	}
	if want := "the poll is partial: 1 part(s) missing (see POLL.md)"; err.Error() != want {
		t.Errorf("the message is %q, want %q", err.Error(), want)
	}
	runs, _ := listPolls(o.Dir)
	if len(runs) != 1 || runs[0].State != "partial" || runs[0].Missing != 1 {
		t.Fatalf("the listing of a partial poll: %+v", runs)
	}

	o.Config.Budget.MaxCalls = 0
	if _, err := executePoll(ctx, planPoll(o), o); err != nil {
		t.Fatalf("the resumed poll: %v", err)
	}
	if srv.Count() != 3 {
		t.Fatalf("the resumed poll brought the requests to %d; want 3 (only the missing voice asked)", srv.Count())
	}
}

// A run refused before it starts (a cost cap, and a model with no known
// price) is the caller's to fix: exit 2, and no run directory is made.
func TestToyScenarioRefusedBeforeStart(t *testing.T) {
	srv, o := pollSetup(t, 0)
	o.Config.Budget.MaxCost = 1
	o.Model = "openai:a-model-with-no-price"
	p := planPoll(o)
	_, err := executePoll(context.Background(), p, o)
	if scenario.ExitCode(err) != scenario.ExitUsage {
		t.Fatalf("a poll under a cost cap with an unpriced model: %v (exit %d); want exit 2", err, scenario.ExitCode(err))
	}
	if _, serr := os.Stat(p.dir); !errors.Is(serr, os.ErrNotExist) || srv.Count() != 0 {
		t.Fatalf("the refused poll made %s (%v) or sent %d requests", p.dir, serr, srv.Count())
	}
}
