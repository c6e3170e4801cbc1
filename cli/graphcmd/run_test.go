package graphcmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/debate/graph/export"
)

// streams returns I/O streams reading stdin and the buffers that collect
// standard output and standard error.
func streams(stdin string) (*cmdutil.IOStreams, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &cmdutil.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}, &out, &errOut
}

// Show, called without cobra, prints the summary of a graph named relative
// to its WorkDir, as text or as JSON, and nothing on standard error.
func TestShowRun(t *testing.T) {
	dir := testDir(t)
	ios, out, errOut := streams("")
	if err := Show(&ShowOptions{IO: ios, WorkDir: dir, File: "graph.json"}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "graph.json: 6 nodes from 3 passages, 9 edges\n") || errOut.Len() != 0 {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out, errOut)
	}

	ios, out, _ = streams("")
	if err := Show(&ShowOptions{IO: ios, WorkDir: dir, File: "graph.json", JSON: true}); err != nil {
		t.Fatal(err)
	}
	var s Summary
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatalf("--json is not JSON: %v\n%s", err, out)
	}
	if s.File != "graph.json" || s.Nodes != 6 || s.Edges != 9 || len(s.Order) != 6 {
		t.Errorf("summary %+v", s)
	}

	b, err := os.ReadFile(filepath.Join(dir, "graph.json"))
	if err != nil {
		t.Fatal(err)
	}
	ios, out, _ = streams(string(b))
	if err := Show(&ShowOptions{IO: ios, File: "-"}); err != nil || !strings.HasPrefix(out.String(), "standard input: 6 nodes") {
		t.Errorf("from standard input: %v\n%s", err, out)
	}
}

// Export, called without cobra, writes the graph in the format asked for:
// the JSON export is the file itself, byte for byte.
func TestExportRun(t *testing.T) {
	dir := testDir(t)
	want, err := os.ReadFile(filepath.Join(dir, "graph.json"))
	if err != nil {
		t.Fatal(err)
	}
	ios, out, _ := streams("")
	if err := Export(&ExportOptions{IO: ios, WorkDir: dir, File: "graph.json", Format: export.FormatJSON}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Error("the JSON export is not the graph file")
	}
	ios, out, _ = streams("")
	if err := Export(&ExportOptions{IO: ios, WorkDir: dir, File: "graph.json", Format: export.FormatMermaid}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "flowchart") {
		t.Errorf("mermaid:\n%.200s", out)
	}
}

// A run function's mistakes exit 2 (cmdutil.Code) with a message that says
// what to fix, and print nothing on standard output.
func TestRunErrors(t *testing.T) {
	dir := testDir(t)
	for _, tt := range []struct {
		name string
		run  func(*cmdutil.IOStreams) error
		want string
	}{
		{"unknown format", func(ios *cmdutil.IOStreams) error {
			return Export(&ExportOptions{IO: ios, WorkDir: dir, File: "graph.json", Format: "svg"})
		}, `--format "svg" is not an export format; use one of json, mermaid, dot, markdown, argdown`},
		{"missing file", func(ios *cmdutil.IOStreams) error {
			return Show(&ShowOptions{IO: ios, WorkDir: dir, File: "missing.json"})
		}, "missing.json: no such file"},
		{"not JSON on stdin", func(ios *cmdutil.IOStreams) error {
			return Export(&ExportOptions{IO: ios, File: "-", Format: export.FormatDOT})
		}, "standard input: 1:2: the JSON ends too early"},
	} {
		ios, out, _ := streams("{")
		err := tt.run(ios)
		if cmdutil.Code(err) != cmdutil.ExitUsage || err == nil || !strings.Contains(err.Error(), tt.want) || out.Len() != 0 {
			t.Errorf("%s: exit %d, %v, stdout %q; want exit 2 and %q", tt.name, cmdutil.Code(err), err, out, tt.want)
		}
	}
}
