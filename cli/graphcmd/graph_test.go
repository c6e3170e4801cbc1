package graphcmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/debate/graph"
	"github.com/sotlabs/sot/debate/graph/export"
)

// run runs "sot graph ARGS" in dir with stdin, and returns its output,
// its error output and its exit code, as the root command would.
func run(t *testing.T, dir, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &cmdutil.Factory{
		IO:     &cmdutil.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut},
		Getenv: func(string) string { return "" },
		Loader: &config.Loader{WorkDir: dir},
	}
	cmd := NewCmd(f)
	cmd.SetArgs(args)
	cmd.SetIn(f.IO.In)
	cmd.SetOut(f.IO.Out)
	cmd.SetErr(f.IO.ErrOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	if err != nil {
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), cmdutil.Code(err)
}

// testDir holds testdata/graph.json (debate/graph's golden file:
// three passages, six nodes, nine edges).
func testDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile("testdata/graph.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "graph.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestShow(t *testing.T) {
	dir := testDir(t)
	out, errOut, code := run(t, dir, "", "show", "graph.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"graph.json: 6 nodes from 3 passages, 9 edges\n",
		"\nNodes by type\n  synthesis      1\n  impasse        1\n",
		"\nEdges by type\n  branches_from  3\n  contradicts    1\n",
		"  dickinson-1a2b3c4d   dickinson.txt                  main debate, 1 branch\n",
		"\nNodes, each after those it builds on\n  1.  dickinson-1a2b3c4d/main       exploration    Three readings of the carriage, none settled.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	out, _, code = run(t, dir, "", "show", "--json", "graph.json")
	var s Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil || code != 0 {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	if s.Nodes != 6 || s.Edges != 9 || len(s.Order) != 6 || s.NodeTypes[graph.Question] != 1 || s.EdgeTypes[graph.BranchesFrom] != 3 || len(s.Passages) != 3 || s.Passages[2].Branches != 1 {
		t.Errorf("summary %+v", s)
	}

	// From standard input, and an empty graph.
	b, _ := os.ReadFile(filepath.Join(dir, "graph.json"))
	if out, _, code := run(t, dir, string(b), "show", "-"); code != 0 || !strings.HasPrefix(out, "standard input: 6 nodes") {
		t.Errorf("stdin: exit %d\n%s", code, out)
	}
	empty, _ := graph.New().MarshalJSON()
	if out, _, code := run(t, dir, string(empty), "show", "-"); code != 0 || !strings.Contains(out, "The graph is empty") {
		t.Errorf("empty: exit %d\n%s", code, out)
	}
}

// Terminal control characters in a node's text are escaped, not sent.
func TestShowEscapes(t *testing.T) {
	dir := testDir(t)
	g, err := graph.Load(filepath.Join(dir, "graph.json"))
	if err != nil {
		t.Fatal(err)
	}
	g.Nodes[0].Summary = "red \x1b[31malert\x1b[0m\nsecond line"
	if err := graph.Save(filepath.Join(dir, "graph.json"), g); err != nil {
		t.Fatal(err)
	}
	out, _, _ := run(t, dir, "", "show", "graph.json")
	if strings.Contains(out, "\x1b") || !strings.Contains(out, `red \x1b[31malert\x1b[0m second line`) {
		t.Errorf("output:\n%q", out)
	}
}

func TestExport(t *testing.T) {
	dir := testDir(t)
	g, err := graph.Load(filepath.Join(dir, "graph.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range export.Formats {
		out, errOut, code := run(t, dir, "", "export", "graph.json", "--format", f)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", f, code, errOut)
		}
		var want bytes.Buffer
		export.Export(&want, g, f)
		if out != want.String() {
			t.Errorf("%s: the export differs from export.Export's", f)
		}
	}
	// The JSON export is the file itself.
	out, _, _ := run(t, dir, "", "export", "-f", "json", "graph.json")
	if b, _ := os.ReadFile(filepath.Join(dir, "graph.json")); out != string(b) {
		t.Error("the JSON export is not the canonical file")
	}
	// The default is Markdown.
	if out, _, _ := run(t, dir, "", "export", "graph.json"); !strings.HasPrefix(out, "# Argument graph\n") {
		t.Errorf("default:\n%.100s", out)
	}
}

// Mistakes in how the command is called, or in the file, exit 2 with a
// message that says what is wrong.
func TestErrors(t *testing.T) {
	dir := testDir(t)
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte("{\n  \"format\": \"sot-argument-graph\",\n  \"version\": 1,\n  \"nodes\": [}"), 0o644)
	os.WriteFile(filepath.Join(dir, "other.json"), []byte(`{"name": "not a graph"}`), 0o644)
	os.Symlink(filepath.Join(dir, "graph.json"), filepath.Join(dir, "link.json"))
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"show", "missing.json"}, "missing.json: no such file; give the graph file sot debate --graph FILE writes"},
		{[]string{"show", "bad.json"}, "bad.json: 4:13: not valid JSON"},
		{[]string{"export", "other.json"}, `other.json: this is not an argument graph: it has no "format": "sot-argument-graph"`},
		{[]string{"show", "link.json"}, "link.json: a graph file is never read or written through a symlink"},
		{[]string{"show", "."}, ".: not a regular file"},
		{[]string{"export", "graph.json", "--format", "svg"}, `--format "svg" is not an export format; use one of json, mermaid, dot, markdown, argdown`},
		{[]string{"show"}, "show takes one graph FILE"},
		{[]string{"export", "a.json", "b.json"}, "export takes one graph FILE"},
		{[]string{"show", "--bogus", "graph.json"}, "unknown flag: --bogus (see 'graph show --help')"},
		{[]string{"draw", "graph.json"}, `unknown command "draw" for sot graph`},
	} {
		out, errOut, code := run(t, dir, "", tt.args...)
		if code != cmdutil.ExitUsage || !strings.Contains(errOut, tt.want) || out != "" {
			t.Errorf("%v: exit %d, stderr %q, want exit 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
	if _, errOut, code := run(t, dir, "{", "show", "-"); code != 2 || !strings.Contains(errOut, "standard input: 1:2: the JSON ends too early") {
		t.Errorf("stdin: exit %d, %q", code, errOut)
	}
}

// The help says what the command does, with examples.
func TestHelp(t *testing.T) {
	out, _, code := run(t, t.TempDir(), "", "export", "--help")
	if code != 0 {
		t.Fatal(code)
	}
	for _, want := range []string{"mermaid", "dot -Tsvg", "argdown", "The default is markdown", "Examples:"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	if out, _, code := run(t, t.TempDir(), ""); code != 0 || !strings.Contains(out, "show") || !strings.Contains(out, "export") {
		t.Errorf("sot graph: exit %d\n%s", code, out)
	}
}
