package moderate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/cli/reviewcmd"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/llm/llmtest"
)

// finding is the assumptions specialist's answer: one must-fix finding.
var finding = json.RawMessage(`{"examined": "docs/design.md", "findings": [{
	"perspective": "", "finding": "The plan assumes the queue never loses messages but names no delivery guarantee.",
	"severity": "must-fix", "confidence": "HIGH", "category": "unstated assumption",
	"grounds": "docs/design.md:3 says workers read from the queue; nothing states at-least-once delivery",
	"file": "docs/design.md", "start_line": 3, "end_line": 3, "section": "Design",
	"warrant": "Without a delivery guarantee a crash loses work.",
	"rebuttal_conditions": "The queue product guarantees at-least-once delivery.",
	"suggested_verification": "Check the queue's documentation."}]}`)

// reviewed makes a project with a finished review of docs/design.md in
// DIR/out (interactive as given), and returns a factory for the project
// whose standard input is in.
func reviewed(t *testing.T, interactive, in string) (f *cmdutil.Factory, dir string, out *strings.Builder) {
	t.Helper()
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{
		{System: "You are the assumptions specialist", JSON: finding},
		{System: "triage lead", JSON: json.RawMessage(`{"clusters": [], "narrative": ""}`)},
	}})
	t.Cleanup(srv.Close)
	dir = t.TempDir()
	for name, text := range map[string]string{
		".git/HEAD":      "ref: refs/heads/main\n",
		"docs/design.md": "# Design\n\nWorkers read jobs from the queue and write results to the database.\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	env := map[string]string{
		"SOT_MODEL": "openai:gpt-4.1", "OPENAI_API_KEY": "sk-test-0123456789", "OPENAI_BASE_URL": srv.OpenAIBaseURL(),
		"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "XDG_CACHE_HOME": filepath.Join(home, ".cache"),
	}
	getenv := func(k string) string { return env[k] }
	newFactory := func(in string) (*cmdutil.Factory, *strings.Builder) {
		out := &strings.Builder{}
		f := &cmdutil.Factory{
			IO:     &cmdutil.IOStreams{In: strings.NewReader(in), Out: out, ErrOut: &strings.Builder{}},
			Getenv: getenv,
			Loader: &config.Loader{WorkDir: dir, Getenv: getenv, Trust: config.DefaultTrustStore(getenv)},
		}
		f.LogTo(f.IO.ErrOut)
		return f, out
	}
	rf, _ := newFactory("")
	ro := &reviewcmd.Options{Artifacts: []string{filepath.Join(dir, "docs", "design.md")}, FailOn: "never"}
	ro.Context.Specialists, ro.Context.Perspectives, ro.Context.Interactive = "assumptions", "none", interactive
	ro.Context.OutputDir = filepath.Join(dir, "out")
	if err := reviewcmd.Run(context.Background(), rf, ro); err != nil {
		t.Fatalf("the review: %v", err)
	}
	f, out = newFactory(in)
	return f, dir, out
}

// Moderator mode reads the user's lines, the specialist answers, the
// exchange is appended to MODERATOR.md, and "done" leaves.
func TestModerateAsksTheSpecialist(t *testing.T) {
	f, dir, out := reviewed(t, "true", "ask assumptions is the queue really lossy?\ndone\n")
	if err := Run(context.Background(), f, &Options{Run: filepath.Join(dir, "out")}); err != nil {
		t.Fatalf("exit %d: %v", cmdutil.Code(err), err)
	}
	for _, want := range []string{"Specialists: assumptions", "[assumptions]", "Leaving moderator mode."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("moderator mode does not say %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "out", "MODERATOR.md"))
	if err != nil || !strings.Contains(string(b), "## Exchange 1: ask assumptions") {
		t.Errorf("MODERATOR.md does not hold the exchange (%v):\n%s", err, b)
	}
}

// A review run with --interactive false skips moderator mode unless
// --force; a directory that holds no finished review exits 2.
func TestModerateSkipsAndRefuses(t *testing.T) {
	f, dir, out := reviewed(t, "false", "done\n")
	if err := Run(context.Background(), f, &Options{Run: filepath.Join(dir, "out")}); err != nil {
		t.Fatalf("exit %d: %v", cmdutil.Code(err), err)
	}
	if !strings.Contains(out.String(), "Moderator mode skipped: the review ran with interactive false.") {
		t.Errorf("moderator mode was not skipped:\n%s", out)
	}
	f.IO.In = strings.NewReader("done\n")
	out.Reset()
	if err := Run(context.Background(), f, &Options{Run: filepath.Join(dir, "out"), Force: true}); err != nil {
		t.Fatalf("--force: exit %d: %v", cmdutil.Code(err), err)
	}
	if !strings.Contains(out.String(), "Leaving moderator mode.") {
		t.Errorf("--force did not enter moderator mode:\n%s", out)
	}

	err := Run(context.Background(), f, &Options{Run: filepath.Join(dir, "nowhere")})
	if code := cmdutil.Code(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), "is not a finished review") {
		t.Errorf("no review there: exit %d, %v", code, err)
	}
}
