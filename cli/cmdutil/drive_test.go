package cmdutil

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/config"
	"github.com/spf13/cobra"
)

// The arguments a worker runs a driven command with: the executor flag
// and the command's name gone, every path relative to the directory the
// command was started in, the paths named listed, and a path out of the
// project refused with what to do instead.
func TestDriveArgs(t *testing.T) {
	top := t.TempDir()
	wd := filepath.Join(top, "sub")
	for _, d := range []string{wd, filepath.Join(top, "notes"), filepath.Join(wd, "out")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	outside := t.TempDir()
	cases := []struct {
		name  string
		args  []string
		want  []string
		named []string
		err   string
	}{
		{"flags", []string{"--verbose", "ask", "--executor", "temporal", "what changed?", "--executor=temporal", "--seed", "3"},
			[]string{"--verbose", "what changed?", "--seed", "3"}, nil, ""},
		{"relative and absolute paths", []string{"ask", "--sources", filepath.Join(top, "notes"), "--output-dir=out", "../notes"},
			[]string{"--sources", "../notes", "--output-dir=out", "../notes"}, []string{"notes", "sub/out", "notes"}, ""},
		{"after --", []string{"debate", "--", "--executor", "temporal"}, []string{"--", "--executor", "temporal"}, nil, ""},
		{"out of the project", []string{"ask", "--sources", outside}, nil, nil, "outside the project"},
		{"up and out", []string{"ask", "--output-dir", "../../x"}, nil, nil, "outside the project"},
		{"not a path", []string{"ask", "/what/is/this?"}, []string{"/what/is/this?"}, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			command := c.args[slices.IndexFunc(c.args, func(a string) bool { return !strings.HasPrefix(a, "-") })]
			got, named, err := driveArgs(c.args, command, top, wd)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "executor.drive: client") {
					t.Fatalf("err = %v, want one saying %q and what to do", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) || !slices.Equal(named, c.named) {
				t.Errorf("driveArgs = %q, named %q; want %q, named %q", got, named, c.want, c.named)
			}
		})
	}
}

// What the user's configuration chose goes with a driven run, before the
// command's own flags, which win: the model, the budget, no cache.
func TestDriveCarriesTheUsersChoices(t *testing.T) {
	cfg := &config.Config{DefaultModel: "anthropic:claude-sonnet-4-5"}
	cfg.Budget.MaxCost, cfg.Budget.MaxCalls = 2.5, 40
	cfg.Cache.Disabled = true
	got := carried(cfg, []string{"--model", "openai:gpt-4.1", "what changed?"})
	want := []string{"--no-cache", "--max-cost=2.5", "--max-calls=40", "--model=anthropic:claude-sonnet-4-5", "--model", "openai:gpt-4.1", "what changed?"}
	if !slices.Equal(got, want) {
		t.Errorf("carried = %q, want %q", got, want)
	}
	if got := carried(&config.Config{}, []string{"x"}); !slices.Equal(got, []string{"x"}) {
		t.Errorf("nothing chosen, yet carried %q", got)
	}
}

// Which commands a worker drives under the temporal executor: not with
// executor.drive client, not a dry run, and not one that reads standard
// input or runs outside a project, which say that their protocol runs
// here instead.
func TestDrives(t *testing.T) {
	proj := t.TempDir()
	if err := os.Mkdir(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		drive string
		dir   string
		args  []string
		flag  string
		want  bool
		note  string
	}{
		{"a review in a project", "", proj, []string{"review"}, "", true, ""},
		{"drive: client", config.DriveClient, proj, []string{"review"}, "", false, ""},
		{"a dry run", "", proj, []string{"review", "--dry-run"}, "dry-run", false, ""},
		{"standard input", "", proj, []string{"debate", "-"}, "", true, ""},
		{"outside a project", "", t.TempDir(), []string{"debate", "poem.txt"}, "", false, "outside a project"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Chdir(c.dir)
			var errOut strings.Builder
			f := &Factory{IO: &IOStreams{ErrOut: &errOut}, Getenv: func(string) string { return "" }, Args: c.args}
			f.once.Do(func() {})
			f.cfg = &config.Config{Executor: config.Executor{Kind: config.ExecutorTemporal, Drive: c.drive}}
			cmd := &cobra.Command{Use: c.args[0]}
			cmd.Flags().Bool("dry-run", false, "")
			if c.flag != "" {
				_ = cmd.Flags().Set(c.flag, "true")
			}
			got, err := f.Drives(cmd)
			if err != nil || got != c.want {
				t.Fatalf("Drives = %v, %v; want %v", got, err, c.want)
			}
			if c.note != "" && !strings.Contains(errOut.String(), c.note) {
				t.Errorf("no note saying it %s: %q", c.note, errOut.String())
			}
		})
	}
}

// The output directories a driven command was given, where its outputs
// may replace the files of an earlier run.
func TestOutputDirs(t *testing.T) {
	top := t.TempDir()
	wd := filepath.Join(top, "sub")
	got := outputDirs([]string{"--seed", "1", "--output-dir", "out", "--output-dir=../reviews/a", "--", "--output-dir", "x"}, top, wd)
	if want := []string{"sub/out", "reviews/a"}; !slices.Equal(got, want) {
		t.Errorf("outputDirs = %q, want %q", got, want)
	}
}
