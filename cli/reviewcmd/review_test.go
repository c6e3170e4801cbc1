package reviewcmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/llm/llmtest"
)

// The assumptions specialist's answer: one must-fix finding on the design;
// the triage lead's, no clusters.
var (
	mustFix = json.RawMessage(`{"examined": "docs/design.md", "findings": [{
		"perspective": "", "finding": "The plan assumes the queue never loses messages but names no delivery guarantee.",
		"severity": "must-fix", "confidence": "HIGH", "category": "unstated assumption",
		"grounds": "docs/design.md:3 says workers read from the queue; nothing states at-least-once delivery",
		"file": "docs/design.md", "start_line": 3, "end_line": 3, "section": "Design",
		"warrant": "Without a delivery guarantee a crash loses work.",
		"rebuttal_conditions": "The queue product guarantees at-least-once delivery.",
		"suggested_verification": "Check the queue's documentation."}]}`)
	triage = json.RawMessage(`{"clusters": [], "narrative": ""}`)
)

// newProject makes a project holding docs/design.md and returns a factory
// for it whose model is served by srv, with the command's standard output
// and error.
func newProject(t *testing.T, srv *llmtest.Server) (f *cmdutil.Factory, dir string, out, errOut *strings.Builder) {
	t.Helper()
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
	getenv := func(k string) string { return env[k] }
	out, errOut = &strings.Builder{}, &strings.Builder{}
	f = &cmdutil.Factory{
		IO:     &cmdutil.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut},
		Getenv: getenv,
		Loader: &config.Loader{WorkDir: dir, Getenv: getenv, Trust: config.DefaultTrustStore(getenv)},
	}
	f.LogTo(errOut)
	return f, dir, out, errOut
}

// options are those of "sot review --artifacts docs/design.md
// --specialists S --perspectives none --interactive false --output-dir
// DIR/out".
func options(dir, specialists string) *Options {
	o := &Options{Artifacts: []string{filepath.Join(dir, "docs", "design.md")}, FailOn: "never"}
	o.Context.Specialists = specialists
	o.Context.Perspectives = "none"
	o.Context.Interactive = "false"
	o.Context.OutputDir = filepath.Join(dir, "out")
	return o
}

// A review writes each specialist's file and the synthesis, says what it
// found and where it is, and exits 0; with --fail-on must-fix the same
// finding exits 1 and says why.
func TestReviewWritesTheSynthesis(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{
		{System: "You are the assumptions specialist", JSON: mustFix},
		{System: "triage lead", JSON: triage},
	}})
	defer srv.Close()
	f, dir, out, errOut := newProject(t, srv)
	if err := Run(context.Background(), f, options(dir, "assumptions")); err != nil {
		t.Fatalf("exit %d: %v\n%s", cmdutil.Code(err), err, errOut)
	}
	for _, name := range []string{"REVIEW-SYNTHESIS.md", "REVIEW-ASSUMPTIONS.md"} {
		if _, err := os.Stat(filepath.Join(dir, "out", name)); err != nil {
			t.Errorf("%s was not written: %v", name, err)
		}
	}
	for _, want := range []string{"sot: 1 must-fix, 0 should-fix", "sot: wrote " + filepath.Join(dir, "out", "REVIEW-SYNTHESIS.md")} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the summary does not say %q:\n%s", want, out)
		}
	}
	// Without a terminal the live display gives a line a call as it ends.
	if !strings.Contains(errOut.String(), "sot: review/assumptions done: 1 finding raised") {
		t.Errorf("stderr does not show the specialist's call:\n%s", errOut)
	}

	f, _, _, _ = newProject(t, srv)
	o := options(dir, "assumptions")
	o.FailOn = "must-fix"
	err := Run(context.Background(), f, o)
	if code := cmdutil.Code(err); code != cmdutil.ExitFailure || err.Error() != "1 finding(s) at or above must-fix (--fail-on must-fix)" {
		t.Errorf("--fail-on must-fix: exit %d, %v", code, err)
	}
}

// A specialist that fails for good leaves a partial review: the summary
// names what is missing, and the command exits 3 with a line that says so.
// When no specialist comes back the review failed, and exits 1.
func TestReviewPartialAndFailed(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{
		{System: "You are the architecture specialist", Fault: llmtest.Fault500},
		{System: "You are the assumptions specialist", JSON: mustFix},
		{System: "triage lead", JSON: triage},
	}})
	defer srv.Close()
	f, dir, out, errOut := newProject(t, srv)
	err := Run(context.Background(), f, options(dir, "assumptions,architecture"))
	if code := cmdutil.Code(err); code != cmdutil.ExitPartial {
		t.Fatalf("exit %d (%v), want %d\n%s", code, err, cmdutil.ExitPartial, errOut)
	}
	if want := "the review is partial: 1 part(s) missing (see REVIEW-SYNTHESIS.md)"; err.Error() != want {
		t.Errorf("the error says %q, want %q", err, want)
	}
	if !strings.Contains(out.String(), "sot: PARTIAL review: 1 part(s) missing:") || !strings.Contains(out.String(), "HTTP 500") {
		t.Errorf("the summary does not list the missing specialist with its error:\n%s", out)
	}

	f, dir, out, _ = newProject(t, srv)
	err = Run(context.Background(), f, options(dir, "architecture"))
	if code := cmdutil.Code(err); code != cmdutil.ExitFailure || !strings.Contains(err.Error(), "the review failed: none of the 1 specialist call(s) succeeded") {
		t.Errorf("no specialist came back: exit %d, %v", code, err)
	}
	if !strings.Contains(out.String(), "FAILED review: no specialist call succeeded") {
		t.Errorf("the summary does not say the review failed:\n%s", out)
	}
}

// Options that contradict each other exit 2 before any call.
func TestReviewUsageErrors(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	for name, change := range map[string]func(*Options){
		"--show-prompt without --dry-run": func(o *Options) { o.ShowPrompt = "assumptions" },
		"--format pdf":                    func(o *Options) { o.Formats = []string{"pdf"} },
		"--fail-on sometimes":             func(o *Options) { o.FailOn = "sometimes" },
		"--max-prompt-tokens -1":          func(o *Options) { o.MaxPromptTokens = -1 },
	} {
		f, dir, _, _ := newProject(t, srv)
		o := options(dir, "assumptions")
		change(o)
		err := Run(context.Background(), f, o)
		if code := cmdutil.Code(err); code != cmdutil.ExitUsage {
			t.Errorf("%s: exit %d (%v), want %d", name, code, err, cmdutil.ExitUsage)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("usage errors sent %d request(s)", n)
	}
}

// A review opens its connections to the provider while it prepares, and a
// dry run, which calls no model, opens none.
func TestOnlyARunConnectsToTheProvider(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{
		{System: "You are the assumptions specialist", JSON: mustFix},
		{System: "triage lead", JSON: triage},
	}})
	defer srv.Close()

	f, dir, _, errOut := newProject(t, srv)
	o := options(dir, "assumptions")
	o.DryRun = true
	if err := Run(context.Background(), f, o); err != nil {
		t.Fatalf("exit %d: %v\n%s", cmdutil.Code(err), err, errOut)
	}
	time.Sleep(100 * time.Millisecond) // a connection started would have arrived
	if n := srv.Connections(); n != 0 {
		t.Fatalf("a dry run opened %d connection(s) to the provider", n)
	}
	f, dir, _, errOut = newProject(t, srv)
	if err := Run(context.Background(), f, options(dir, "assumptions")); err != nil {
		t.Fatalf("exit %d: %v\n%s", cmdutil.Code(err), err, errOut)
	}
	// The connections were opened ahead, not by the requests as they
	// went: more than the requests, which would each have dialled at most
	// one.
	if c, n := srv.Connections(), srv.Count(); c <= n {
		t.Fatalf("the review opened %d connection(s) for %d request(s): none was opened while it prepared", c, n)
	}
}
