package debate

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/stack"
	"github.com/sotlabs/sot/persona"
)

// fakeLLM builds testdata/fakellm as a program named llm (the go
// command's build cache makes it quick after the first time) and returns
// the directory that holds it, to put first on PATH.
func fakeLLM(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	name := "llm"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), "./testdata/fakellm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the fake llm: %v: %s", err, out)
	}
	return dir
}

// fakeLLMEnv are the variables of llmtest.FakeLLM that the tests set.
var fakeLLMEnv = []string{"FAKE_LLM_CONFIG", "FAKE_LLM_LOG", "FAKE_LLM_LATENCY", "FAKE_LLM_ENV_LOG"}

// llmOptions are a debate's options whose every call runs the fake llm
// command through sot's command: provider, as --model "command:llm -m
// MODEL" does; calls (one line each) are logged in the returned file.
func llmOptions(t testing.TB, top string, latency string) (*Options, string) {
	t.Helper()
	return llmOptionsWith(t, fakeLLM(t), top, latency)
}

// llmOptionsWith is llmOptions with the fake llm built in bin.
func llmOptionsWith(t testing.TB, bin, top string, latency string) (*Options, string) {
	t.Helper()
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	abs, err := filepath.Abs("testdata/fakellm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "calls.log")
	t.Setenv("FAKE_LLM_CONFIG", abs)
	t.Setenv("FAKE_LLM_LOG", log)
	t.Setenv("FAKE_LLM_LATENCY", latency)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	cfg := config.Defaults()
	cfg.Cache.Disabled = true
	cfg.Retries = 0
	// The command: provider passes the program a minimal environment; the
	// fake's own variables reach it as a user's providers.command.env
	// would pass them.
	pc := cfg.Providers[llm.ProviderCommand]
	pc.Env = fakeLLMEnv
	cfg.Providers[llm.ProviderCommand] = pc
	lib, err := persona.Discover(persona.Dirs{})
	if err != nil {
		t.Fatal(err)
	}
	o := &Options{Options: scenario.Options{Dir: top, Config: &cfg, Model: "command:llm -m fake-4", NewStack: func(journal string) (*stack.Stack, error) {
		return stack.New(&cfg, stack.Options{JournalPath: journal, Getenv: os.Getenv})
	}}, Passage: testPassage(t), Library: lib}
	return o, log
}

func loggedCalls(t testing.TB, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// A whole debate, structured steps included, runs through the command:
// provider and a program that behaves like the llm CLI: generated
// observers, branch questions and syntheses come back as JSON wrapped in
// prose, and every output is written. The same command again sends nothing.
func TestDebateThroughLLMCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the fake llm program")
	}
	top := testProject(t)
	o, log := llmOptions(t, top, "0s")
	o.Observers, o.Rounds, o.BranchRounds = "generate:2", 1, 1
	// A secret in sot's environment does not reach the program.
	t.Setenv("OPENAI_API_KEY", "sk-debate-test-secret")
	envLog := filepath.Join(t.TempDir(), "env.log")
	t.Setenv("FAKE_LLM_ENV_LOG", envLog)
	p, out := runDebate(t, o)
	if err := out.Verdict(); err != nil {
		t.Fatalf("verdict: %v (missing %+v)", err, out.Result.Missing)
	}
	r := out.Result
	if len(r.Observers) != 2 || r.Observers[0].Name == r.Observers[1].Name || !strings.HasSuffix(r.Observers[0].Name, " Reader") {
		t.Errorf("generated observers: %+v", r.Observers)
	}
	if len(r.Branches) == 0 {
		t.Fatal("no branch")
	}
	for _, b := range r.Branches {
		if b.Synthesis == nil || b.Synthesis.Summary == "" || !strings.Contains(b.MergeBack, "reframes the courtship") {
			t.Errorf("branch %d: synthesis %+v, merge-back %q", b.N, b.Synthesis, b.MergeBack)
		}
	}
	if !strings.HasPrefix(r.Final, "In the end the poem") {
		t.Errorf("final merge %q", r.Final)
	}
	calls := loggedCalls(t, log)
	if len(calls) != r.Usage.Calls || len(calls) > p.Calls() {
		t.Errorf("the llm program ran %d time(s); the result counts %d call(s), the plan allows %d", len(calls), r.Usage.Calls, p.Calls())
	}
	for _, c := range calls {
		if !strings.HasPrefix(c, "fake-4\t") {
			t.Errorf("a call ran another model: %q", c)
		}
	}
	envs := loggedCalls(t, envLog)
	if len(envs) != len(calls) {
		t.Errorf("%d environment(s) logged for %d call(s)", len(envs), len(calls))
	}
	for _, names := range envs {
		if env := strings.Fields(names); slices.Contains(env, "OPENAI_API_KEY") || !slices.Contains(env, "PATH") || !slices.Contains(env, "FAKE_LLM_CONFIG") {
			t.Errorf("the llm program's environment: %s", names)
			break
		}
	}
	for _, f := range []string{LogFile, "multi-observer-report.md", "debate.json", "ensemble.json", BranchFile(1)} {
		if _, err := os.Stat(filepath.Join(p.OutputDir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}

	// Again: every call is answered from the journal.
	_, again := runDebate(t, o)
	if n := len(loggedCalls(t, log)); n != len(calls) {
		t.Errorf("the same debate again ran the llm program %d more time(s)", n-len(calls))
	}
	if again.Result.Final != r.Final {
		t.Errorf("the replayed debate differs")
	}
}

// A call the llm program fails on is retried by nobody here (retries 0):
// the branch it belongs to is missing, the others are whole, and the run
// is partial.
func TestDebateThroughLLMCommandFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the fake llm program")
	}
	top := testProject(t)
	o, _ := llmOptions(t, top, "0s")
	// A config of its own: the synthesis of every branch fails.
	cfg := filepath.Join(t.TempDir(), "fail.yaml")
	b, _ := os.ReadFile("testdata/fakellm.yaml")
	b = []byte(strings.Replace(string(b), "rules:\n", "rules:\n  - system: \"A branch debate took up one question\"\n    fault: 500\n", 1))
	os.WriteFile(cfg, b, 0o644)
	t.Setenv("FAKE_LLM_CONFIG", cfg)
	o.Observers, o.Rounds, o.BranchRounds = "none", 1, 1
	ctx := context.Background()
	p, err := Prepare(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Execute(ctx, p, o)
	if err != nil {
		t.Fatal(err)
	}
	var pe *PartialError
	if err := out.Verdict(); !errors.As(err, &pe) || len(out.Result.Missing) == 0 {
		t.Fatalf("verdict %v, missing %+v", err, out.Result.Missing)
	}
	if !strings.Contains(out.Result.Missing[0].Error, "500") {
		t.Errorf("missing %+v does not say why", out.Result.Missing[0])
	}
}

// Seed 003's own llm workflow: a program that answers every JSON request
// with one object holding the union of the prototype's fields. The
// prototype completes with it; so does sot, taking from each answer what
// the call needs.
func TestDebateThroughLLMCommandUnionAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the fake llm program")
	}
	top := testProject(t)
	o, _ := llmOptions(t, top, "0s")
	abs, err := filepath.Abs("testdata/fakellm-union.yaml")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_LLM_CONFIG", abs)
	o.Observers, o.Rounds, o.BranchRounds = "generate:2", 1, 1
	_, out := runDebate(t, o)
	if err := out.Verdict(); err != nil {
		t.Fatalf("verdict: %v (missing %+v)", err, out.Result.Missing)
	}
	if len(out.Result.Observers) != 2 || len(out.Result.Branches) == 0 {
		t.Errorf("observers %d, branches %d", len(out.Result.Observers), len(out.Result.Branches))
	}
}
