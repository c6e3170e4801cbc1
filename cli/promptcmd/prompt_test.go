package promptcmd

import (
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

// newProject makes a project holding notes.txt and returns a factory for
// it whose model is served by srv, with the command's standard output.
func newProject(t *testing.T, srv *llmtest.Server) (f *cmdutil.Factory, dir string, out *strings.Builder) {
	t.Helper()
	dir = t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	notes := "The outage began at 09:12 when the cache expired.\nOPENAI_API_KEY=sk-live-abcdefghijklmnopqrstuvwx\n"
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(notes), 0o644); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := map[string]string{
		"SOT_MODEL": "openai:gpt-4.1", "OPENAI_API_KEY": "sk-test-0123456789", "OPENAI_BASE_URL": srv.OpenAIBaseURL(),
		"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "XDG_CACHE_HOME": filepath.Join(home, ".cache"),
	}
	getenv := func(k string) string { return env[k] }
	out = &strings.Builder{}
	f = &cmdutil.Factory{
		IO:     &cmdutil.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: &strings.Builder{}},
		Getenv: getenv,
		Loader: &config.Loader{WorkDir: dir, Getenv: getenv, Trust: config.DefaultTrustStore(getenv)},
	}
	f.LogTo(f.IO.ErrOut)
	return f, dir, out
}

// The prompt a freeform review would send the specialist is printed with
// the material in it, its secret masked, and no model is called.
func TestPromptShowsTheSpecialistsPrompt(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	f, dir, out := newProject(t, srv)
	o := &Options{Specialist: "assumptions", Type: "freeform", Material: []string{filepath.Join(dir, "notes.txt")}}
	if err := Run(context.Background(), f, o); err != nil {
		t.Fatalf("exit %d: %v", cmdutil.Code(err), err)
	}
	got := out.String()
	for _, want := range []string{"The outage began at 09:12 when the cache expired.", "# User message"} {
		if !strings.Contains(got, want) {
			t.Errorf("the prompt does not hold %q", want)
		}
	}
	if strings.Contains(got, "sk-live-abcdefghijklmnopqrstuvwx") {
		t.Error("the prompt holds the material's key unmasked")
	}

	out.Reset()
	o.JSON = true
	if err := Run(context.Background(), f, o); err != nil {
		t.Fatalf("--json: exit %d: %v", cmdutil.Code(err), err)
	}
	var doc struct {
		Prompt string `json:"prompt"`
		Layers []struct {
			Name string `json:"name"`
		} `json:"layers"`
	}
	if err := json.Unmarshal([]byte(out.String()), &doc); err != nil || len(doc.Layers) == 0 || !strings.Contains(doc.Prompt, "09:12") {
		t.Errorf("--json does not print the prompt and its layers (%v):\n%s", err, out)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("printing a prompt sent %d request(s)", n)
	}
}

// A missing or unknown specialist, and material of the wrong kind, exit 2
// with what to do.
func TestPromptUsageErrors(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	f, dir, _ := newProject(t, srv)
	for _, tt := range []struct {
		o    Options
		want string
	}{
		{Options{Type: "freeform", Material: []string{"notes.txt"}}, "--specialist is required"},
		{Options{Specialist: "nobody", Type: "freeform", Material: []string{filepath.Join(dir, "notes.txt")}}, `no specialist named "nobody"`},
		{Options{Specialist: "assumptions", Type: "artifacts"}, "--type artifacts needs the documents"},
		{Options{Specialist: "assumptions", Type: "diff", Material: []string{"notes.txt"}}, "reads its material from git"},
	} {
		err := Run(context.Background(), f, &tt.o)
		if code := cmdutil.Code(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: exit %d, %v; want exit %d saying %q", tt.o, code, err, cmdutil.ExitUsage, tt.want)
		}
	}
}
