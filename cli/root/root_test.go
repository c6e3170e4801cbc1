package root

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/config"
)

// An error is printed as one line, whatever it quotes: a file name planted
// in a repository (here a passage's, read by sot debate) can neither act
// on the terminal nor forge a line of its own.
func TestErrorIsOneSafeLine(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "x\x1b]0;pwned\x07\x1b[2J\nsot: warning: fake.txt")
	if err := os.WriteFile(name, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SOT_MODEL": "openai:gpt-4.1", "OPENAI_API_KEY": "sk-test-0123456789",
		"HOME": dir, "XDG_CONFIG_HOME": filepath.Join(dir, ".config"), "XDG_CACHE_HOME": filepath.Join(dir, ".cache")}
	getenv := func(k string) string { return env[k] }
	var out, errOut bytes.Buffer
	f := &cmdutil.Factory{
		IO:     &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Getenv: getenv,
		Loader: &config.Loader{WorkDir: dir, Getenv: getenv},
		Logger: slog.New(slog.NewTextHandler(&errOut, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	code := Main(f, []string{"debate", name})
	if code != cmdutil.ExitUsage {
		t.Errorf("exit %d, want %d", code, cmdutil.ExitUsage)
	}
	got := errOut.String()
	if strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, "sot: ") {
		t.Errorf("the error is not one line:\n%q", got)
	}
	if strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("the error holds a raw escape: %q", got)
	}
	if !strings.Contains(got, `x\x1b]0;pwned\x07\x1b[2J\nsot: warning: fake.txt is empty`) {
		t.Errorf("the file's name is not shown escaped: %q", got)
	}
}
