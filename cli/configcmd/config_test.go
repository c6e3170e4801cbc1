package configcmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/config"
)

// show names where each value came from, redacts a key written in a file
// and reports whether a key variable is set without its value.
func TestShowSaysWhereEachValueCameFrom(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(dir, ".sot", "config.yaml"), "retries: 2\n")
	user := filepath.Join(dir, "user")
	write(t, filepath.Join(user, "config.yaml"), "timeout: 45s\nproviders:\n  openai:\n    api_key: sk-inline-secret-0123456789\n")
	env := map[string]string{"SOT_MODEL": "openai:gpt-4.1", "OPENAI_API_KEY": "sk-env-secret-0123456789"}
	getenv := func(k string) string { return env[k] }
	l := &config.Loader{WorkDir: dir, UserDir: user, Getenv: getenv}

	var out bytes.Buffer
	o := &ShowOptions{IO: &cmdutil.IOStreams{Out: &out}, Config: l.Load, Getenv: getenv}
	if err := RunShow(o); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`(?m)^KEY +VALUE +SOURCE$`,
		`(?m)^default_model +openai:gpt-4\.1 +env SOT_MODEL$`,
		`(?m)^retries +2 +project config .*\.sot/config\.yaml$`,
		`(?m)^timeout +45s +user config .*config\.yaml$`,
		`(?m)^providers\.openai\.api_key +\[REDACTED\] +user config`,
		`(?m)^OPENAI_API_KEY +set \(value hidden\) +openai$`,
		`(?m)^ANTHROPIC_API_KEY +not set +anthropic$`,
	} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("no line %s in:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "sk-inline-secret") || strings.Contains(out.String(), "sk-env-secret") {
		t.Errorf("a key was printed:\n%s", out.String())
	}

	out.Reset()
	o.JSON = true
	if err := RunShow(o); err != nil {
		t.Fatal(err)
	}
	var shown struct {
		Values      []config.Value `json:"values"`
		Credentials []Credential   `json:"credentials"`
	}
	if err := json.Unmarshal(out.Bytes(), &shown); err != nil {
		t.Fatalf("--json printed %q: %v", out.String(), err)
	}
	set := map[string]bool{}
	for _, c := range shown.Credentials {
		set[c.Env] = c.Set
	}
	if !set["OPENAI_API_KEY"] || set["ANTHROPIC_API_KEY"] {
		t.Errorf("credentials %+v", shown.Credentials)
	}
	if strings.Contains(out.String(), "sk-inline-secret") || strings.Contains(out.String(), "sk-env-secret") {
		t.Errorf("a key was printed:\n%s", out.String())
	}
}

// A configuration file that does not parse is a usage error, and nothing
// is printed.
func TestShowRefusesABrokenFile(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(dir, ".sot", "config.yaml"), "retries: [oops\n")
	getenv := func(string) string { return "" }
	l := &config.Loader{WorkDir: dir, UserDir: filepath.Join(dir, "user"), Getenv: getenv}
	f := &cmdutil.Factory{IO: &cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Getenv: getenv, Loader: l}
	var out bytes.Buffer
	err := RunShow(&ShowOptions{IO: &cmdutil.IOStreams{Out: &out}, Config: f.Config, Getenv: getenv})
	if cmdutil.Code(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "config.yaml") {
		t.Errorf("got %v (exit %d); want a usage error naming the file", err, cmdutil.Code(err))
	}
	if out.Len() != 0 {
		t.Errorf("printed %q", out.String())
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
