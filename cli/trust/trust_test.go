package trust

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/config"
)

// repo makes a project whose .sot/config.yaml loosens a limit, which only
// trust lets it do, and runs the test from it (sot trust reads the files
// it is given from the working directory, like the shell that named them).
func repo(t *testing.T) (string, *Options, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(dir, ".sot", "config.yaml"), "retries: 2\nconcurrency: 500\n")
	t.Chdir(dir)
	store := &config.TrustStore{Path: filepath.Join(t.TempDir(), "state", "trusted.json")}
	l := &config.Loader{WorkDir: dir, UserDir: filepath.Join(dir, "user"), Getenv: func(string) string { return "" }, Trust: store}
	var out bytes.Buffer
	o := &Options{IO: &cmdutil.IOStreams{Out: &out, ErrOut: &bytes.Buffer{}}, Store: store, WorkDir: dir,
		Ignored: func() []config.Ignored {
			if _, _, err := l.Load(); err != nil {
				t.Fatal(err)
			}
			return l.Ignored()
		}}
	return dir, o, &out
}

// Without a file, sot trust trusts the project's config, says what it may
// now set, lists it as trusted, and --revoke forgets it.
func TestTrustListRevoke(t *testing.T) {
	_, o, out := repo(t)
	if err := Run(o); err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^sot: trusted \.sot/config\.yaml \(sha256 [0-9a-f]{12}\); a change to it makes it untrusted again
sot: it may now set concurrency
$`)
	if !want.MatchString(out.String()) {
		t.Errorf("sot trust printed:\n%s", out)
	}

	out.Reset()
	o.List = true
	if err := Run(o); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^STATE +FILE +SHA256 +TRUSTED\ntrusted +\S+/\.sot/config\.yaml +[0-9a-f]{12} +\d{4}-\d\d-\d\d \d\d:\d\d$`).MatchString(out.String()) {
		t.Errorf("sot trust --list printed:\n%s", out)
	}

	out.Reset()
	o.List, o.Revoke = false, true
	if err := Run(o); err != nil {
		t.Fatal(err)
	}
	if err := Run(o); err != nil {
		t.Fatal(err)
	}
	if out.String() != "sot: .sot/config.yaml is no longer trusted\nsot: .sot/config.yaml was not trusted\n" {
		t.Errorf("sot trust --revoke, twice, printed:\n%s", out)
	}

	out.Reset()
	o.Revoke, o.List = false, true
	if err := Run(o); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "sot: no file is trusted (") {
		t.Errorf("after --revoke, --list printed:\n%s", out)
	}
}

// A mistake in how sot trust was called is a usage error that says what
// is wrong, and trusts nothing.
func TestTrustRefuses(t *testing.T) {
	dir, _, _ := repo(t)
	empty := t.TempDir()
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"--list with a file", Options{List: true, Files: []string{".sot/config.yaml"}}, "--list takes no files and no --revoke"},
		{"--json without --list", Options{JSON: true}, "--json works with --list"},
		{"a missing file", Options{Files: []string{"missing.yaml"}}, "missing.yaml does not exist"},
		{"a directory", Options{Files: []string{".sot"}}, ".sot is a directory; trust names files"},
		{"no project config", Options{WorkDir: empty}, "no .sot/config.yaml found from " + empty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			store := &config.TrustStore{Path: filepath.Join(t.TempDir(), "trusted.json")}
			o := tt.o
			o.IO, o.Store = &cmdutil.IOStreams{Out: &out}, store
			if o.WorkDir == "" {
				o.WorkDir = dir
			}
			err := Run(&o)
			if cmdutil.Code(err) != cmdutil.ExitUsage || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v (exit %d); want a usage error saying %q", err, cmdutil.Code(err), tt.want)
			}
			if out.Len() != 0 {
				t.Errorf("printed %q", out.String())
			}
			if _, err := os.Stat(store.Path); err == nil {
				t.Error("the trust store was written")
			}
		})
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
