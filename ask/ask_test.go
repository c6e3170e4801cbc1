package ask

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/stack"
	"github.com/sotlabs/sot/persona"
)

// A small corpus of meeting notes that disagree about one decision.
var notes = map[string]string{
	"2025-07-02-planning.md": "# Q3 planning\n\nWe decided to delay the billing migration to Q4 because the vendor contract is not signed. Risk: the old system's license ends in October.\n",
	"2025-08-20-retro.md":    "# Q3 retro\n\nThe billing migration pilot shipped in August and customers liked the new invoices. The team wants to finish the migration before Q4.\n",
	"2025-10-01-board.md":    "# Board update\n\nThe board asked whether the billing migration will be done this year and what it costs.\n",
	"2025-05-10-office.md":   "# Office move\n\nThe office moves to the fourth floor in May.\n",
}

func testCorpus(t *testing.T) string {
	t.Helper()
	top := t.TempDir()
	os.MkdirAll(filepath.Join(top, ".git"), 0o755)
	dir := filepath.Join(top, ".sot", "corpus")
	os.MkdirAll(dir, 0o755)
	for name, body := range notes {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return top
}

// answerOf finds the id of the answer read from the source titled title in
// a debate or reduce prompt.
func answerOf(rec *llmtest.Recorded, title string) string {
	m := regexp.MustCompile(`(A\d+) \([^)]*from the source ` + regexp.QuoteMeta(title) + `\)`).FindStringSubmatch(rec.LastUser())
	if m == nil {
		return "A0"
	}
	return m[1]
}

// responder answers each step of a question from what its prompt holds.
func responder(rec *llmtest.Recorded) llmtest.Reply {
	plan, retro := answerOf(rec, "Q3 planning"), answerOf(rec, "Q3 retro")
	switch rec.SchemaName {
	case mapSchemaName:
		switch {
		case strings.Contains(rec.System, "vendor contract"):
			return llmtest.Reply{JSON: map[string]any{"addresses": true, "summary": "The billing migration was delayed to Q4 because the vendor contract is not signed.",
				"points": []any{map[string]any{"point": "The migration was delayed to Q4.", "quote": "delay the billing migration to Q4"}}}}
		case strings.Contains(rec.System, "pilot shipped"):
			return llmtest.Reply{JSON: map[string]any{"addresses": true, "summary": "The billing migration pilot shipped in August and the team wants to finish before Q4.",
				"points": []any{map[string]any{"point": "The pilot shipped in August.", "quote": "pilot shipped in August"}}}}
		}
		return llmtest.Reply{JSON: map[string]any{"addresses": false, "summary": "It does not say when the migration happens.", "points": []any{}}}
	case debateSchemaName:
		return llmtest.Reply{JSON: map[string]any{
			"tensions": []any{map[string]any{"topic": "when the migration finishes", "sides": []any{
				map[string]any{"position": "in Q4, after the contract", "answers": []any{plan}},
				map[string]any{"position": "before Q4", "answers": []any{retro}}}}},
			"unique_risks": []any{}, "assumptions": []any{}, "recommendations": []any{"give both dates"}}}
	case reduceSchemaName:
		return llmtest.Reply{JSON: map[string]any{
			"sentences": []any{
				map[string]any{"text": "The billing migration was delayed to Q4 because the vendor contract is not signed.", "answers": []any{plan}, "quote": "delay the billing migration to Q4"},
				map[string]any{"text": "The team wants to finish the migration before Q4, after the pilot shipped in August.", "answers": []any{retro}, "quote": ""}},
			"tensions": []any{map[string]any{"id": "T1", "treatment": "open", "how": "the notes give two dates"}}}}
	}
	return llmtest.Reply{}
}

func testOptions(t *testing.T, top, baseURL string) *Options {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	cfg := config.Defaults()
	p := cfg.Providers["openai"]
	p.BaseURL = baseURL
	cfg.Providers["openai"] = p
	cfg.DefaultModel = "openai:gpt-4.1"
	cfg.Cache.Disabled = true
	lib, err := persona.Discover(persona.Dirs{})
	if err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-ask-0123456789"
		}
		return ""
	}
	return &Options{Options: scenario.Options{Dir: top, Config: &cfg, Getenv: getenv, NewStack: func(journal string) (*stack.Stack, error) {
		return stack.New(&cfg, stack.Options{JournalPath: journal, Getenv: getenv})
	}}, Question: "Why did the billing migration slip, and what do the teams disagree about?", Library: lib}
}

// A question over the project's corpus: the relevant notes are read from
// their roles, the debate names the tension, the answer cites its
// sources, and ANSWER.md and answer.json land in the run's directory. The
// same command again replays every call from the journal.
func TestAskEndToEnd(t *testing.T) {
	top := testCorpus(t)
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: responder}}})
	defer srv.Close()
	o := testOptions(t, top, srv.OpenAIBaseURL())
	ctx := context.Background()
	o.Debate = true // the question is not analytical or comparative by the rules
	p, err := Prepare(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if !p.SoT || len(p.Readings) < 3 {
		t.Fatalf("plan: sot %v, %d readings (%s)", p.SoT, len(p.Readings), p.SoTNote)
	}
	for _, r := range p.Readings {
		if r.Role == nil {
			t.Errorf("%s has no role", r.ID)
		}
	}
	out, err := Execute(ctx, p, o)
	if err != nil {
		t.Fatal(err)
	}
	a := out.Answer
	if a.Partial() || len(a.Sentences) != 2 || a.Debate == nil || len(a.Debate.Tensions) != 1 || a.Debate.Tensions[0].Treatment != "open" {
		t.Fatalf("answer: missing %v, %d sentences, debate %+v", a.Missing, len(a.Sentences), a.Debate)
	}
	md, err := os.ReadFile(filepath.Join(p.OutputDir, AnswerFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Conflict summary", "## Tensions", "## Perspectives", "## Sources", "Q3 planning"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("ANSWER.md lacks %q:\n%s", want, md)
		}
	}
	if _, err := os.Stat(filepath.Join(p.OutputDir, AnswerJSONFile)); err != nil {
		t.Error(err)
	}
	sent := len(srv.Requests())
	if sent != a.Usage.Calls {
		t.Errorf("%d requests, usage says %d calls", sent, a.Usage.Calls)
	}

	// Again: nothing is sent.
	p2, err := Prepare(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if p2.RunID != p.RunID {
		t.Fatalf("the same question is another run: %s, %s", p2.RunID, p.RunID)
	}
	out2, err := Execute(ctx, p2, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(srv.Requests()); got != sent {
		t.Errorf("the re-run sent %d more requests", got-sent)
	}
	if out2.Answer.Usage.Replayed != sent || out2.Answer.Usage.Calls != sent {
		t.Errorf("re-run usage %+v, want %d replayed calls", out2.Answer.Usage, sent)
	}
}

// With enough sources falling into several groups and a question that is
// not simple, the sources are read by group: each group takes one role,
// and every source of a group is read from it.
func TestAskDecomposesByGroup(t *testing.T) {
	top := t.TempDir()
	os.MkdirAll(filepath.Join(top, ".git"), 0o755)
	dir := filepath.Join(top, ".sot", "corpus")
	os.MkdirAll(dir, 0o755)
	for i, typ := range []string{"meeting", "meeting", "meeting", "report", "report", "retrospective", "meeting"} {
		body := fmt.Sprintf("---\nsource_type: %s\n---\n# Note %d\n\nAll the billing migration decisions in note %d.\n", typ, i, i)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("note%d.md", i)), []byte(body), 0o644)
	}
	o := testOptions(t, top, "http://127.0.0.1:1")
	o.Question = "Summarize all the billing migration decisions across every note."
	p, err := Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Groups) != 0 {
		t.Fatalf("groups without --groups: %v", p.Groups)
	}
	o.Groups = "source"
	p, err = Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Groups) < 2 {
		t.Fatalf("groups %v (%s), want the sources read by source type", p.Groups, p.GroupsWhy)
	}
	roleOf := map[string]string{}
	for _, g := range p.Groups {
		for _, m := range g.Group.Members {
			roleOf[m] = g.Role
		}
	}
	for i, c := range p.Chosen {
		if got := p.Assignments[i].Role; got != roleOf[c.ID] {
			t.Errorf("%s is read as %s, its group's role is %s", c.ID, got, roleOf[c.ID])
		}
	}
	for _, u := range p.answer().Sources {
		if u.Group == "" || len(u.Answers) != 1 {
			t.Errorf("source %s: group %q, answers %v; want its group and the group's answer", u.Title, u.Group, u.Answers)
		}
	}
	// One reading a group, covering its members, from its role.
	if len(p.Readings) != len(p.Groups) {
		t.Fatalf("%d readings for %d groups", len(p.Readings), len(p.Groups))
	}
	for i, r := range p.Readings {
		g := p.Groups[i]
		if r.Role == nil || r.Role.ID != g.Role || len(r.Members) != len(g.Group.Members) {
			t.Errorf("reading %s: role %v, %d members; want group %s's role %s and its %d members", r.ID, r.Role, len(r.Members), g.Group.Name, g.Role, len(g.Group.Members))
		}
		for _, m := range r.Members {
			if !strings.Contains(r.Text, p.Sources[m].Title) {
				t.Errorf("reading %s lacks its member %s", r.ID, p.Sources[m].Title)
			}
		}
	}
}

// An answer whose every sentence fails the check is written, with what was
// dropped and why, but its verdict says nothing in it stands on the
// sources.
func TestAskUnfoundedAnswer(t *testing.T) {
	top := testCorpus(t)
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: func(rec *llmtest.Recorded) llmtest.Reply {
		if rec.SchemaName == reduceSchemaName {
			return llmtest.Reply{JSON: map[string]any{"sentences": []any{map[string]any{"text": "Everything went to plan.", "answers": []any{}, "quote": ""}}, "tensions": []any{}}}
		}
		return responder(rec)
	}}}})
	defer srv.Close()
	o := testOptions(t, top, srv.OpenAIBaseURL())
	ctx := context.Background()
	p, err := Prepare(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Execute(ctx, p, o)
	if err != nil {
		t.Fatal(err)
	}
	var ue *UnfoundedError
	if err := out.Verdict(); !errors.As(err, &ue) || ue.Dropped != 1 {
		t.Errorf("Verdict = %v, want an UnfoundedError with the one dropped sentence", err)
	}
}
