package runs

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/llm"
)

func options(dir string, out *bytes.Buffer) *Options {
	return &Options{IO: &cmdutil.IOStreams{Out: out, ErrOut: &bytes.Buffer{}}, WorkDir: dir, Prices: llm.DefaultPrices()}
}

// Outside a project sot runs is a usage error that says where to run it.
func TestRunsOutsideAProject(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	err := Run(options(dir, &out))
	if cmdutil.Code(err) != cmdutil.ExitUsage || err == nil || !strings.Contains(err.Error(), dir+" is not in a project (no .git, .sot or .paw above it)") {
		t.Errorf("got %v (exit %d)", err, cmdutil.Code(err))
	}
	if out.Len() != 0 {
		t.Errorf("printed %q", out.String())
	}
}

// A project without runs says so, and --json prints an empty list rather
// than null.
func TestRunsNone(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the user's key, kept out of the real home
	dir := repo(t)
	var out bytes.Buffer
	if err := Run(options(dir, &out)); err != nil {
		t.Fatal(err)
	}
	if want := "sot: no runs in " + dir + " yet; sot review, sot ask and sot debate make them\n"; out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
	out.Reset()
	o := options(dir, &out)
	o.JSON = true
	if err := Run(o); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out.String()) != "[]" {
		t.Errorf("--json printed %q", out.String())
	}
}

// A run.json that came with the repository, not signed by the user, is
// listed as not yours and offers no command to resume it.
func TestRunsForeign(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := repo(t)
	run := filepath.Join(dir, ".sot", "reviews", "rforged0000", "run.json")
	if err := os.MkdirAll(filepath.Dir(run), 0o755); err != nil {
		t.Fatal(err)
	}
	forged := `{"run_id": "rforged0000", "nonce": "00", "context": {"type": "diff"}, "mac": "ab"}`
	if err := os.WriteFile(run, []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	o := options(dir, &out)
	o.Resume = true
	if err := Run(o); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^RUN +STARTED +KIND +STATE +FINDINGS +CALLS +COST +MATERIAL\nrforged0000 .* not yours +- +0 +\$0\.0000`).MatchString(out.String()) {
		t.Errorf("sot runs printed:\n%s", out.String())
	}
	if strings.Contains(out.String(), "rforged0000: sot") {
		t.Errorf("a foreign run was offered for resuming:\n%s", out.String())
	}

	out.Reset()
	o.JSON = true
	if err := Run(o); err != nil {
		t.Fatal(err)
	}
	var list []struct {
		ID    string `json:"id"`
		State string `json:"state"`
	}
	if err := json.Unmarshal(out.Bytes(), &list); err != nil {
		t.Fatalf("--json printed %q: %v", out.String(), err)
	}
	if len(list) != 1 || list[0].State != "not yours" {
		t.Errorf("--json printed %s", out.String())
	}
}

func repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
