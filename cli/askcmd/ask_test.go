package askcmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/llm/llmtest"
)

// The corpus every test asks: three notes in the project's .sot/corpus.
var corpus = map[string]string{
	".git/HEAD":                          "ref: refs/heads/main\n",
	".sot/corpus/2025-07-02-planning.md": "# Q3 planning\n\nWe decided to delay the billing migration to Q4 because the vendor contract is not signed.\n",
	".sot/corpus/2025-08-20-retro.md":    "# Q3 retro\n\nThe billing migration pilot shipped in August and customers liked it.\n",
	".sot/corpus/2025-10-01-board.md":    "# Q4 board update\n\nThe board asked whether the billing migration will be done this year.\n",
}

const question = "What did we decide about the billing migration?"

// reading and answer are the model's structured answers: a reading that
// quotes its source, and an answer whose one sentence stands on it.
var (
	reading = json.RawMessage(`{"addresses": true, "summary": "The migration was delayed to Q4.", "points": [{"point": "The migration was delayed to Q4.", "quote": "delay the billing migration to Q4"}]}`)
	answer  = json.RawMessage(`{"sentences": [{"text": "The billing migration was delayed to Q4 because the vendor contract is not signed.", "answers": ["A1"], "quote": "delay the billing migration to Q4"}], "tensions": []}`)
)

// newProject writes the corpus into a new project directory and returns a
// factory for it whose model is served by srv, with the command's
// standard output and error.
func newProject(t *testing.T, srv *llmtest.Server) (f *cmdutil.Factory, dir string, out, errOut *strings.Builder) {
	t.Helper()
	dir = t.TempDir()
	for name, text := range corpus {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	// The run's signing key lives in the user cache directory.
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	env := map[string]string{
		"SOT_MODEL":       "openai:gpt-4.1",
		"OPENAI_API_KEY":  "sk-test-0123456789",
		"OPENAI_BASE_URL": srv.OpenAIBaseURL(),
		"SOT_RETRIES":     "0",
		"HOME":            home,
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_CACHE_HOME":  filepath.Join(home, ".cache"),
		"XDG_STATE_HOME":  filepath.Join(home, ".state"),
	}
	f, out, errOut = factory(dir, func(k string) string { return env[k] })
	return f, dir, out, errOut
}

// factory is a new command's factory (sot run again) in dir, with the
// environment getenv reads.
func factory(dir string, getenv func(string) string) (f *cmdutil.Factory, out, errOut *strings.Builder) {
	out, errOut = &strings.Builder{}, &strings.Builder{}
	f = &cmdutil.Factory{
		IO:     &cmdutil.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut},
		Getenv: getenv,
		Loader: &config.Loader{WorkDir: dir, Getenv: getenv, Trust: config.DefaultTrustStore(getenv)},
	}
	f.LogTo(errOut)
	return f, out, errOut
}

// An answer lands in the output directory, the summary says where, and the
// same question again replays every call from the run's journal.
func TestAskWritesTheAnswerAndReplaysIt(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{
		{System: "You answer a question from one knowledge source", JSON: reading},
		{System: "You write the answer to a question", JSON: answer},
	}})
	defer srv.Close()
	f, dir, out, errOut := newProject(t, srv)
	o := &Options{Question: question, OutputDir: filepath.Join(dir, "answer")}
	if err := Run(context.Background(), f, o); err != nil {
		t.Fatalf("exit %d: %v\n%s", cmdutil.Code(err), err, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "answer", "ANSWER.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "delayed to Q4") {
		t.Errorf("ANSWER.md does not hold the answer:\n%s", b)
	}
	if want := "sot: wrote " + filepath.Join(dir, "answer", "ANSWER.md"); !strings.Contains(out.String(), want) {
		t.Errorf("the summary does not say %q:\n%s", want, out)
	}
	sent := len(srv.Requests())

	f, out, _ = factory(dir, f.Getenv)
	o = &Options{Question: question, OutputDir: filepath.Join(dir, "answer")}
	if err := Run(context.Background(), f, o); err != nil {
		t.Fatalf("again: exit %d: %v", cmdutil.Code(err), err)
	}
	if !strings.Contains(out.String(), "replayed from the journal") {
		t.Errorf("the second run does not say it replayed its calls:\n%s", out)
	}
	if n := len(srv.Requests()); n != sent {
		t.Errorf("the second run sent %d request(s); want none", n-sent)
	}
}

// Without a terminal, the live display gives a line a call on stderr as
// the call ends, and stdout keeps only what --stdout asked for.
func TestAskShowsEachCallOnStderr(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{
		{System: "You answer a question from one knowledge source", JSON: reading},
		{System: "You write the answer to a question", JSON: answer},
	}})
	defer srv.Close()
	f, dir, out, errOut := newProject(t, srv)
	o := &Options{Question: question, OutputDir: filepath.Join(dir, "answer"), Stdout: "json"}
	if err := Run(context.Background(), f, o); err != nil {
		t.Fatalf("exit %d: %v\n%s", cmdutil.Code(err), err, errOut)
	}
	if !strings.Contains(errOut.String(), " done in ") || !strings.Contains(errOut.String(), " calls done, ") {
		t.Errorf("stderr does not show the calls as they end:\n%s", errOut)
	}
	var a map[string]any
	if err := json.Unmarshal([]byte(out.String()), &a); err != nil {
		t.Errorf("stdout is not the answer's JSON alone: %v\n%s", err, out)
	}
}

// A reading that fails for good leaves a partial answer: it is written,
// the summary lists what is missing, and the command exits 3 with a line
// that says so.
func TestAskPartialAnswerExits3(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{
		{System: "pilot shipped", Fault: llmtest.Fault500},
		{System: "You answer a question from one knowledge source", JSON: reading},
		{System: "You write the answer to a question", JSON: answer},
	}})
	defer srv.Close()
	f, dir, out, errOut := newProject(t, srv)
	o := &Options{Question: question, OutputDir: filepath.Join(dir, "answer")}
	err := Run(context.Background(), f, o)
	if code := cmdutil.Code(err); code != cmdutil.ExitPartial {
		t.Fatalf("exit %d (%v), want %d\n%s", code, err, cmdutil.ExitPartial, errOut)
	}
	if want := "the answer is partial: 1 part(s) missing (see ANSWER.md)"; err.Error() != want {
		t.Errorf("the error says %q, want %q", err, want)
	}
	if !strings.Contains(out.String(), "  - map, A") || !strings.Contains(out.String(), "HTTP 500") {
		t.Errorf("the summary does not list the missing reading with its error:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "answer", "ANSWER.md")); err != nil {
		t.Errorf("the partial answer was not written: %v", err)
	}
}

// An answer none of whose sentences stands on its sources exits 1 and
// says why; bad flags exit 2 before any call.
func TestAskExitCodes(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{
		{System: "You answer a question from one knowledge source", JSON: reading},
		{System: "You write the answer to a question", JSON: json.RawMessage(`{"sentences": [{"text": "Everything went to plan.", "answers": [], "quote": ""}], "tensions": []}`)},
	}})
	defer srv.Close()
	f, dir, _, _ := newProject(t, srv)
	err := Run(context.Background(), f, &Options{Question: question, OutputDir: filepath.Join(dir, "unfounded")})
	if code := cmdutil.Code(err); code != cmdutil.ExitFailure || !strings.Contains(err.Error(), "no sentence of the answer stood on its sources") {
		t.Errorf("an unfounded answer: exit %d, %v", code, err)
	}

	sent := len(srv.Requests())
	for _, o := range []*Options{
		{Question: question, Stdout: "pdf"},
		{Question: question, Formats: []string{"sarif"}},
		{Question: question, Debate: true, NoDebate: true},
		{Question: question, Strategy: "random"},
	} {
		f, _, _, _ := newProject(t, srv)
		err := Run(context.Background(), f, o)
		if code := cmdutil.Code(err); code != cmdutil.ExitUsage {
			t.Errorf("%+v: exit %d (%v), want %d", o, code, err, cmdutil.ExitUsage)
		}
	}
	if n := len(srv.Requests()); n != sent {
		t.Errorf("usage errors sent %d request(s)", n-sent)
	}
}

// A dry run shows which sources each cross-source role reads together,
// and which of them it was given, both on the terminal and in the plan's
// JSON; it sends no request, and a dry run's --stdout can only be json.
func TestAskDryRunShowsSpans(t *testing.T) {
	const temporal = "How did the plan for the billing migration change across the quarters?"
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()

	t.Run("human", func(t *testing.T) {
		f, _, out, errOut := newProject(t, srv)
		if err := Run(context.Background(), f, &Options{Question: temporal, DryRun: true}); err != nil {
			t.Fatalf("exit %d: %v\n%s", cmdutil.Code(err), err, errOut)
		}
		for _, want := range []string{
			"sot: 2 cross-source reading(s), each of its sources together in one reading:\n",
			"  - historian reads 2 source(s): Q3 planning (added; also read as analyst); Q4 board update (the historian reads across time: ",
			"  - synthesizer reads 3 source(s): Q3 planning (added; also read as analyst); Q4 board update (added; also read as historian); Q3 retro (the synthesizer reads across sources",
			"sot: 3 reading(s),",
		} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("the plan does not show %q:\n%s", want, out)
			}
		}
	})

	t.Run("json", func(t *testing.T) {
		f, _, out, errOut := newProject(t, srv)
		if err := Run(context.Background(), f, &Options{Question: temporal, DryRun: true, Stdout: "json"}); err != nil {
			t.Fatalf("exit %d: %v\n%s", cmdutil.Code(err), err, errOut)
		}
		if !strings.Contains(errOut.String(), "  - historian reads 2 source(s)") {
			t.Errorf("the human plan does not go to stderr:\n%s", errOut)
		}
		var doc struct {
			Sources []struct{ ID, Title, Role string }
			Spans   []struct {
				Role, Rule, Across string
				Members            []struct {
					Title, Role string
					Own         bool
				}
			}
			Readings []struct {
				ID, Role string
				Sources  []string
			}
			CallsMax int `json:"calls_max"`
		}
		if err := json.Unmarshal([]byte(out.String()), &doc); err != nil {
			t.Fatalf("stdout is not the plan's JSON alone: %v\n%s", err, out)
		}
		type member struct {
			title, role string
			own         bool
		}
		want := map[string][]member{
			"historian":   {{"Q3 planning", "analyst", false}, {"Q4 board update", "", true}},
			"synthesizer": {{"Q3 planning", "analyst", false}, {"Q4 board update", "historian", false}, {"Q3 retro", "", true}},
		}
		if len(doc.Spans) != len(want) {
			t.Fatalf("%d spans, want %d: %+v", len(doc.Spans), len(want), doc.Spans)
		}
		for _, sp := range doc.Spans {
			var got []member
			for _, m := range sp.Members {
				got = append(got, member{m.Title, m.Role, m.Own})
			}
			if !slices.Equal(got, want[sp.Role]) {
				t.Errorf("the %s's span holds %+v, want %+v", sp.Role, got, want[sp.Role])
			}
		}
		// Each span is one reading of all its sources, by its role.
		read := map[string]int{}
		for _, r := range doc.Readings {
			read[r.Role] = len(r.Sources)
		}
		if read["historian"] != 2 || read["synthesizer"] != 3 || read["analyst"] != 1 || len(doc.Readings) != 3 {
			t.Errorf("readings %+v; want the analyst's source alone and each span in one reading", doc.Readings)
		}
		if doc.CallsMax != 5 {
			t.Errorf("calls_max %d, want 5 (3 readings and the reduce step with its retry)", doc.CallsMax)
		}
	})

	t.Run("no roles, no spans", func(t *testing.T) {
		f, _, out, errOut := newProject(t, srv)
		if err := Run(context.Background(), f, &Options{Question: temporal, DryRun: true, NoSoT: true, Stdout: "json"}); err != nil {
			t.Fatalf("exit %d: %v\n%s", cmdutil.Code(err), err, errOut)
		}
		if strings.Contains(errOut.String(), "cross-source") || strings.Contains(out.String(), `"spans"`) {
			t.Errorf("a control run shows spans:\n%s\n%s", errOut, out)
		}
	})

	t.Run("markdown refused", func(t *testing.T) {
		f, _, _, _ := newProject(t, srv)
		err := Run(context.Background(), f, &Options{Question: temporal, DryRun: true, Stdout: "markdown"})
		if code := cmdutil.Code(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), "use --stdout json for the plan") {
			t.Errorf("--dry-run --stdout markdown: exit %d, %v; want a usage error", code, err)
		}
	})

	if n := len(srv.Requests()); n != 0 {
		t.Errorf("a dry run sent %d request(s)", n)
	}
}

// A question opens its connections to the provider while it reads the
// corpus, and a dry run, which calls no model, opens none.
func TestOnlyARunConnectsToTheProvider(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{
		{System: "You answer a question from one knowledge source", JSON: reading},
		{System: "You write the answer to a question", JSON: answer},
	}})
	defer srv.Close()

	f, _, _, errOut := newProject(t, srv)
	if err := Run(context.Background(), f, &Options{Question: question, DryRun: true}); err != nil {
		t.Fatalf("exit %d: %v\n%s", cmdutil.Code(err), err, errOut)
	}
	time.Sleep(100 * time.Millisecond) // a connection started would have arrived
	if n := srv.Connections(); n != 0 {
		t.Fatalf("a dry run opened %d connection(s) to the provider", n)
	}
	f, _, _, errOut = newProject(t, srv)
	if err := Run(context.Background(), f, &Options{Question: question}); err != nil {
		t.Fatalf("exit %d: %v\n%s", cmdutil.Code(err), err, errOut)
	}
	// The connections were opened ahead, not by the requests as they
	// went: more than the requests, which would each have dialled at most
	// one.
	if c, n := srv.Connections(), srv.Count(); c <= n {
		t.Fatalf("the question opened %d connection(s) for %d request(s): none was opened while it prepared", c, n)
	}
}
