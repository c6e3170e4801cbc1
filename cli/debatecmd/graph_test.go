package debatecmd

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/debate/graph"
	"github.com/sotlabs/sot/debate/graph/export"
	"github.com/sotlabs/sot/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite examples/debate/fables/fables.mmd")

// example is the worked example of the README: three fables and the
// scripted answers that debate them offline.
var example = filepath.Join("..", "..", "examples", "debate", "fables")

// runSot runs "sot debate ARGS" in dir against srv, as the root command
// would, and returns its output, its error output and its exit code.
func runSot(t *testing.T, dir string, srv *llmtest.Server, args ...string) (string, string, int) {
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
	cmd := NewCmd(f)
	cmd.SetArgs(args)
	cmd.SetOut(f.IO.Out)
	cmd.SetErr(f.IO.ErrOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	if err != nil {
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), cmdutil.Code(err)
}

// The README's worked example: three of Aesop's fables debated into one
// argument graph against the scripted answers of
// examples/debate/fables/llmtest.yaml, its Mermaid picture the one
// examples/debate/fables/fables.mmd holds (-update rewrites it), and the
// same command again sends nothing.
func TestFablesExample(t *testing.T) {
	cfg, err := llmtest.LoadConfig(filepath.Join(example, "llmtest.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(cfg)
	defer srv.Close()
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, ".cache"))
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"--graph", filepath.Join(dir, "fables.json"), "--rounds", "1", "--branch-rounds", "1", "--observers", "none"}
	for _, name := range []string{"ants.txt", "fox.txt", "hare.txt"} {
		b, err := os.ReadFile(filepath.Join(example, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, filepath.Join(dir, name))
	}
	out, errOut, code := runSot(t, dir, srv, args...)
	if code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"argument graph " + filepath.Join(dir, "fables.json") + ": 6 node(s) from 3 passage(s), 8 edge(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"the argument graph is empty: no context from earlier debates", "the whole argument graph (2 nodes, ", "the whole argument graph (4 nodes, "} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the progress lacks %q", want)
		}
	}
	g, err := graph.Load(filepath.Join(dir, "fables.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := export.Mermaid(g)
	golden := filepath.Join(example, "fables.mmd")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("the example's Mermaid differs from %s (go test ./cli/debatecmd -update rewrites it):\n%s", golden, got)
	}

	n := srv.Count()
	out, errOut, code = runSot(t, dir, srv, args...)
	if code != 0 || srv.Count() != n || strings.Count(errOut, "the graph holds it already") != 3 {
		t.Errorf("the same command again: exit %d, %d request(s) sent:\n%s\n%s", code, srv.Count()-n, out, errOut)
	}
}
