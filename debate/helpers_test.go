package debate

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/stack"
	"github.com/sotlabs/sot/persona"
	"github.com/sotlabs/sot/prompt"
)

// testPassage is the first three stanzas of Emily Dickinson's "Because I
// could not stop for Death" (1890), in the public domain.
func testPassage(t testing.TB) Passage {
	t.Helper()
	f, err := os.Open("testdata/dickinson.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := ReadPassage("dickinson.txt", f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// testProject is an empty project directory.
func testProject(t testing.TB) string {
	t.Helper()
	top := t.TempDir()
	if err := os.MkdirAll(top+"/.git", 0o755); err != nil {
		t.Fatal(err)
	}
	return top
}

var (
	turnUser  = regexp.MustCompile(`Round (\d+) of (\d+)\. Give (.+)'s turn`)
	turnHead  = regexp.MustCompile(`(?m)^## Turn (\d+), round \d+: `)
	quotedNum = regexp.MustCompile(`turn (\d+)`)
)

// turnReply is the scripted text of turn n by name in debate where
// ("main" or "branch K").
func turnReply(where string, n int, round, name string) string {
	return fmt.Sprintf("In the %s at turn %d of round %s, %s reads the carriage as a journey toward eternity.", where, n, round, name)
}

// whereOf says which debate a turn request belongs to.
func whereOf(rec *llmtest.Recorded) string {
	if !strings.Contains(rec.System, "# The branch debate") {
		return "main"
	}
	for _, q := range branchQuestions {
		if strings.Contains(rec.LastUser(), q.Question) {
			return q.Where
		}
	}
	for q, where := range generatedWhere {
		if strings.Contains(rec.LastUser(), q) {
			return where
		}
	}
	return "branch ?"
}

// branchQuestions are the scripted branch questions of the built-in
// observers and of the generic prompt, each with the branch it becomes
// when the default observers (or none) ask.
var branchQuestions = []struct{ Observer, Question, Where string }{
	{"The Phenomenologist", "What is the slow ride like from inside the carriage, and why does the speaker feel no haste?", "branch 1"},
	{"The Materialist Historian", "Who did the labor the speaker put away, and what did such leisure cost a woman in Amherst around 1860?", "branch 2"},
	{"The Pragmatist Engineer", "Which observable detail of the drive would show whether Death acts as a suitor or as a hired coachman?", "branch 3"},
	{"", "Does Immortality ride as a chaperone, a passenger or a promise, and what changes in the poem with each?", "branch 1"},
}

// generatedWhere are the branches the generated observers' questions
// become (see generatedQuestions).
var generatedWhere = map[string]string{
	"What does the dash after each stanza withhold that the debaters fill in?": "branch 1",
	"Why does the road pass the school before the fields and the setting sun?": "branch 2",
	"Who kept house and paid for the hours while the speaker rode with Death?": "branch 3",
}

// questionReply is an observer's scripted branch question (name "" for
// the generic prompt).
func questionReply(name string) map[string]any {
	for _, q := range branchQuestions {
		if q.Observer == name {
			return map[string]any{"question": q.Question, "missing": "No turn dwells on it.", "why": "It is what " + name + " looks for.",
				"debate_summary": "The Literalist reads a carriage ride, the Symbolist a courtship with Death. They disagree on whether Immortality is a person."}
		}
	}
	return map[string]any{"question": "What does " + name + " want to know?", "missing": "x", "why": "y", "debate_summary": "z"}
}

var youAre = regexp.MustCompile(`(?m)^# You are (.+)$`)

// unfenced is a prompt with the fence's gutter taken off the start of its
// lines, so that the responder reads the turns the prompts fence as it
// reads the rest.
func unfenced(s string) string {
	return strings.ReplaceAll(s, "\n"+prompt.Gutter, "\n")
}

// responder answers each kind of call from what its prompt holds.
func responder(rec *llmtest.Recorded) llmtest.Reply {
	user := unfenced(rec.LastUser())
	switch {
	case rec.SchemaName == questionSchemaName:
		name := ""
		if m := youAre.FindStringSubmatch(unfenced(rec.System)); m != nil {
			name = m[1]
		}
		return llmtest.Reply{JSON: questionReply(name)}
	case rec.SchemaName == synthesisSchemaName:
		where := "?"
		for _, q := range branchQuestions {
			if strings.Contains(user, q.Question) {
				where = q.Where
			}
		}
		for q, w := range generatedWhere {
			if strings.Contains(user, q) {
				where = w
			}
		}
		return llmtest.Reply{JSON: map[string]any{"perspectives": []any{"The Literalist holds to the ride (" + where + ")."}, "resolved": []any{"The pace is slow."},
			"in_tension": []any{"Whether Death is kind."}, "summary": "The " + where + " debate settles the pace and leaves Death's kindness open."}}
	case strings.Contains(rec.System, "Write the enriched understanding") || strings.Contains(user, "Write the enriched understanding."):
		m := regexp.MustCompile(`The (branch \d+) debate settles`).FindStringSubmatch(user)
		if m == nil {
			return llmtest.Reply{Text: "Merged back: nothing."}
		}
		return llmtest.Reply{Text: "Merged back from " + m[1] + ": the ride reframes the Symbolist's courtship."}
	case strings.Contains(user, "Write the final enriched understanding."):
		return llmtest.Reply{Text: "The final understanding: the poem is a courtship, a journey and a labor given up at once."}
	case rec.System == turnSummarySystem:
		m := quotedNum.FindStringSubmatch(user)
		n := "?"
		if m != nil {
			n = m[1]
		}
		return llmtest.Reply{Text: "Summary " + n + ": the carriage ride is a journey toward eternity."}
	case rec.System == phaseSummarySystem:
		return llmtest.Reply{Text: "The debaters read the carriage three ways. They clashed over whether Death is a suitor. The meaning of Immortality stayed open. A fourth sentence the program drops."}
	}
	if m := turnUser.FindStringSubmatch(user); m != nil {
		n := len(turnHead.FindAllString(user, -1)) + 1
		if strings.Contains(rec.System, "every debater speaks at once") {
			n = 0 // the turns shown are the earlier rounds': the number is not known here
		}
		return llmtest.Reply{Text: turnReply(whereOf(rec), n, m[1], m[3])}
	}
	return llmtest.Reply{}
}

// recorder is an Executor that keeps the labels of every step's tasks, in
// order, and passes the step on to a Local.
type recorder struct {
	inner engine.Executor
	mu    sync.Mutex
	steps [][]string
	// labels names each request by its prompt (see promptKey).
	labels map[string]string
}

func (r *recorder) Execute(ctx context.Context, tasks []*engine.Task) []engine.Result {
	var labels []string
	r.mu.Lock()
	if r.labels == nil {
		r.labels = map[string]string{}
	}
	for _, t := range tasks {
		labels = append(labels, t.Request.Label)
		r.labels[promptKey(t.Request.System, t.Request.LastUser())] = t.Request.Label
	}
	r.steps = append(r.steps, labels)
	r.mu.Unlock()
	return r.inner.Execute(ctx, tasks)
}

// Detach records the detached calls as a step and runs them beside the
// steps after, as Local does.
func (r *recorder) Detach(ctx context.Context, tasks []*engine.Task) *engine.Detached {
	return engine.Go(ctx, r, tasks)
}

// label names a request the server received by its call's label, as a
// run with the same prompts made it.
func (r *recorder) label(rec *llmtest.Recorded) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.labels[promptKey(rec.System, rec.LastUser())]
}

func promptKey(system, user string) string { return system + "\x00" + user }

func (r *recorder) calls() int {
	n := 0
	for _, s := range r.steps {
		n += len(s)
	}
	return n
}

// testOptions are a debate's options against the llmtest server at
// baseURL, with every call going through rec when it is not nil.
func testOptions(t testing.TB, top, baseURL string, rec *recorder) *Options {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	return testOptionsIn(t, top, baseURL, rec)
}

// testOptionsIn is testOptions without a cache directory of its own.
func testOptionsIn(t testing.TB, top, baseURL string, rec *recorder) *Options {
	t.Helper()
	cfg := config.Defaults()
	p := cfg.Providers["openai"]
	p.BaseURL = baseURL
	cfg.Providers["openai"] = p
	cfg.DefaultModel = "openai:gpt-4.1"
	cfg.Cache.Disabled = true
	cfg.Retries = 0
	lib, err := persona.Discover(persona.Dirs{})
	if err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-debate-0123456789"
		}
		return ""
	}
	o := &Options{Options: scenario.Options{Dir: top, Config: &cfg, Getenv: getenv, NewStack: func(journal string) (*stack.Stack, error) {
		return stack.New(&cfg, stack.Options{JournalPath: journal, Getenv: getenv})
	}}, Passage: testPassage(t), Library: lib}
	if rec != nil {
		o.NewExecutor = func(p llm.Provider, h engine.Hooks, fallback string) engine.Executor {
			rec.inner = &engine.Local{Provider: p, Hooks: h, Fallback: fallback}
			return rec
		}
	}
	return o
}

// runDebate prepares and executes o.
func runDebate(t testing.TB, o *Options) (*Plan, *Outcome) {
	t.Helper()
	ctx := context.Background()
	p, err := Prepare(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Execute(ctx, p, o)
	if err != nil {
		t.Fatal(err)
	}
	return p, out
}

// requestsWith returns the requests whose system prompt holds s.
func requestsWith(srv *llmtest.Server, s string) []llmtest.Recorded {
	var out []llmtest.Recorded
	for _, r := range srv.Requests() {
		if strings.Contains(r.System, s) {
			out = append(out, r)
		}
	}
	return out
}
