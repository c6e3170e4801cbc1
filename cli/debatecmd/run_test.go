package debatecmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/llm/llmtest"
)

// debateDir is a project directory holding passage.txt, its response
// cache inside it.
func debateDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, ".cache"))
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	poem := "Because I could not stop for Death,\nHe kindly stopped for me;\nThe carriage held but just ourselves\nAnd Immortality.\n"
	if err := os.WriteFile(filepath.Join(dir, "passage.txt"), []byte(poem), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runDebate calls Run with o in dir against srv, without cobra, and
// returns its standard output, its standard error and its exit code.
func runDebate(t *testing.T, dir string, srv *llmtest.Server, o *Options) (string, string, int) {
	t.Helper()
	env := map[string]string{
		"OPENAI_BASE_URL": srv.OpenAIBaseURL(), "OPENAI_API_KEY": "sk-example-0123456789", "SOT_MODEL": "openai:gpt-4.1",
		"HOME": dir, "XDG_CONFIG_HOME": filepath.Join(dir, ".config"), "XDG_CACHE_HOME": filepath.Join(dir, ".cache"),
	}
	getenv := func(k string) string { return env[k] }
	var out, errOut bytes.Buffer
	f := &cmdutil.Factory{
		IO:     &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Getenv: getenv,
		Loader: &config.Loader{WorkDir: dir, Getenv: getenv},
	}
	err := Run(context.Background(), f, o)
	if err != nil {
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), cmdutil.Code(err)
}

// small is a short debate of passage.txt into dir/out.
func small(dir string) *Options {
	return &Options{File: filepath.Join(dir, "passage.txt"), Rounds: 1, BranchRounds: 1, Observers: "none", OutputDir: filepath.Join(dir, "out")}
}

// --stdout prints one output, the same bytes as its file in the run
// directory, and the summary goes to standard error; --json, the
// deprecated alias, prints what --stdout json prints and says it is
// deprecated.
func TestStdoutPrintsOneOutput(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	dir := debateDir(t)
	file := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, "out", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tt := range []struct {
		name string
		set  func(*Options)
		file string
	}{
		{"--stdout markdown", func(o *Options) { o.Stdout = "markdown" }, "dialectic-log.md"},
		{"--stdout md", func(o *Options) { o.Stdout = "MD" }, "dialectic-log.md"},
		{"--stdout json", func(o *Options) { o.Stdout = "json" }, "debate.json"},
		{"--json", func(o *Options) { o.JSON = true }, "debate.json"},
		{"--json --stdout json", func(o *Options) { o.JSON, o.Stdout = true, "json" }, "debate.json"},
		{"--format json --stdout json", func(o *Options) { o.Formats, o.Stdout = []string{"json"}, "json" }, "debate.json"},
	} {
		o := small(dir)
		tt.set(o)
		out, errOut, code := runDebate(t, dir, srv, o)
		if code != 0 {
			t.Fatalf("%s: exit %d:\n%s", tt.name, code, errOut)
		}
		if want := file(tt.file); out != want {
			t.Errorf("%s: stdout is not %s:\n%.300s", tt.name, tt.file, out)
		}
		if !strings.Contains(errOut, "sot: wrote ") || !strings.Contains(errOut, "turn(s) in the main debate") {
			t.Errorf("%s: the summary is not on standard error:\n%s", tt.name, errOut)
		}
		if deprecated := strings.Contains(errOut, "--json is deprecated; --stdout json prints the same"); deprecated != o.JSON {
			t.Errorf("%s: the deprecation note is shown: %v, want %v", tt.name, deprecated, o.JSON)
		}
	}

	// Without --stdout the summary is the standard output.
	out, errOut, code := runDebate(t, dir, srv, small(dir))
	if code != 0 || !strings.HasPrefix(out, "sot: ") || !strings.Contains(out, "sot: wrote ") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// A dry run's --stdout json is the plan as one JSON document, with
// --json too; the plan's text then goes nowhere near standard output.
func TestDryRunStdoutJSON(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	dir := debateDir(t)
	for _, set := range []func(*Options){func(o *Options) { o.Stdout = "json" }, func(o *Options) { o.JSON = true }} {
		o := small(dir)
		o.DryRun = true
		set(o)
		out, errOut, code := runDebate(t, dir, srv, o)
		var plan struct {
			RunID    string `json:"run_id"`
			Estimate struct {
				Calls int `json:"calls"`
			} `json:"estimate"`
		}
		if err := json.Unmarshal([]byte(out), &plan); err != nil || code != 0 {
			t.Fatalf("exit %d, %v:\n%s\n%s", code, err, out, errOut)
		}
		if plan.RunID == "" || plan.Estimate.Calls == 0 {
			t.Errorf("the plan lacks its run id or its calls:\n%s", out)
		}
	}
	if srv.Count() != 0 {
		t.Errorf("a dry run sent %d request(s)", srv.Count())
	}
}

// Output options that contradict one another, or name an output sot
// debate does not have, exit 2 before any call, saying what to give.
func TestOutputOptionsRefused(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	dir := debateDir(t)
	for _, tt := range []struct {
		name string
		set  func(*Options)
		want string
	}{
		{"--json --stdout markdown", func(o *Options) { o.JSON, o.Stdout = true, "markdown" }, "--json is --stdout json and contradicts --stdout markdown; give one of them"},
		{"--stdout html", func(o *Options) { o.Stdout = "html" }, `--stdout "html": use markdown (dialectic-log.md) or json (debate.json)`},
		{"--format sarif", func(o *Options) { o.Formats = []string{"json", "sarif"} }, `--format "sarif": use json or markdown`},
		{"--dry-run --stdout markdown", func(o *Options) { o.DryRun, o.Stdout = true, "markdown" }, "--stdout markdown with --dry-run: a dry run debates nothing"},
		{"--graph --json --stdout markdown", func(o *Options) {
			o.Graph, o.Files, o.File = filepath.Join(dir, "g.json"), []string{o.File}, ""
			o.JSON, o.Stdout = true, "markdown"
		}, "contradicts --stdout markdown"},
	} {
		o := small(dir)
		tt.set(o)
		out, errOut, code := runDebate(t, dir, srv, o)
		if code != cmdutil.ExitUsage || !strings.Contains(errOut, tt.want) || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.name, code, out, errOut, tt.want)
		}
	}
	if srv.Count() != 0 {
		t.Errorf("refused options sent %d request(s)", srv.Count())
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Errorf("refused options left a run directory: %v", err)
	}
}

// With --graph, --stdout markdown prints the dialectic log of each passage
// debated, and --stdout json one document of every debate and the graph.
func TestGraphStdout(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	dir := debateDir(t)
	graphOf := func(stdout string) *Options {
		o := small(dir)
		o.Graph, o.Files, o.File, o.Stdout = filepath.Join(dir, stdout+".json"), []string{o.File}, "", stdout
		o.OutputDir = filepath.Join(dir, stdout)
		return o
	}
	out, errOut, code := runDebate(t, dir, srv, graphOf("markdown"))
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	if strings.Count(out, "## Session Complete\n") != 1 || strings.Contains(out, "sot: ") {
		t.Errorf("stdout is not the one passage's dialectic log:\n%.400s", out)
	}
	if !strings.Contains(errOut, "sot: argument graph ") {
		t.Errorf("the summary is not on standard error:\n%s", errOut)
	}

	out, errOut, code = runDebate(t, dir, srv, graphOf("json"))
	var run struct {
		Graph   string            `json:"graph"`
		Debates []json.RawMessage `json:"debates"`
	}
	if err := json.Unmarshal([]byte(out), &run); err != nil || code != 0 {
		t.Fatalf("exit %d, %v:\n%s\n%s", code, err, out, errOut)
	}
	if run.Graph != filepath.Join(dir, "json.json") || len(run.Debates) != 1 {
		t.Errorf("graph %q, %d debate(s)", run.Graph, len(run.Debates))
	}
}
