package sources

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/config"
)

// corpusProject makes a project with three notes and runs the test at its
// top, where sot sources reads the paths it is given from, as the shell
// that named them does.
func corpusProject(t *testing.T) (string, *Options, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	for path, text := range map[string]string{
		".git/HEAD":                      "ref: refs/heads/main\n",
		"notes/2025-07-02-planning.md":   "# Q3 planning\n\nWe decided to delay the billing migration to Q4.\n",
		"notes/2025-08-20-retro.md":      "# Q3 retro\n\nThe billing migration pilot shipped in August.\n",
		"notes/nested/2025-09-01-log.md": "# September log\n\nNothing new on billing.\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	var out bytes.Buffer
	return dir, &Options{IO: &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &bytes.Buffer{}}, WorkDir: dir}, &out
}

// Adding reads the notes once (a second add changes nothing), list shows
// them with their dates and titles, show prints one by its path, and
// remove takes it out; an id the index lacks is a usage error.
func TestAddListShowRemove(t *testing.T) {
	ctx := context.Background()
	_, o, out := corpusProject(t)
	if err := Add(ctx, o, []string{"notes"}); err != nil {
		t.Fatal(err)
	}
	if err := Add(ctx, o, []string{"notes"}); err != nil {
		t.Fatal(err)
	}
	if want := "sot: 3 source(s) added, 0 updated, 0 unchanged\nsot: 0 source(s) added, 0 updated, 3 unchanged\n"; out.String() != want {
		t.Errorf("two adds printed %q, want %q", out.String(), want)
	}

	out.Reset()
	if err := List(ctx, o); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`(?m)^ID +DATE +TYPE +METADATA +TITLE +PATH$`,
		`(?m)^[0-9a-f]{16} +2025-07-02 +.* +Q3 planning +notes/2025-07-02-planning\.md$`,
		`(?m)^[0-9a-f]{16} +2025-08-20 +.* +Q3 retro +notes/2025-08-20-retro\.md$`,
	} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("no line %s in:\n%s", want, out.String())
		}
	}

	out.Reset()
	if err := Show(ctx, o, "notes/2025-07-02-planning.md"); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^id: +([0-9a-f]{16})\ntitle: Q3 planning\npath:  notes/2025-07-02-planning\.md\n`).FindStringSubmatch(out.String())
	if m == nil || !strings.Contains(out.String(), "delay the billing migration") {
		t.Fatalf("show printed:\n%s", out.String())
	}
	id := m[1]

	out.Reset()
	err := Remove(ctx, o, []string{id, "nosuchid"})
	if cmdutil.Code(err) != cmdutil.ExitUsage || err == nil || !strings.Contains(err.Error(), "1 of the ids given are not in the index") {
		t.Errorf("removing one id of two: %v (exit %d)", err, cmdutil.Code(err))
	}
	if out.String() != "sot: 1 source(s) removed\n" {
		t.Errorf("remove printed %q", out.String())
	}
	err = Show(ctx, o, id)
	if cmdutil.Code(err) != cmdutil.ExitUsage || err == nil || !strings.Contains(err.Error(), `no source "`+id+`" in the index`) {
		t.Errorf("showing a removed source: %v (exit %d)", err, cmdutil.Code(err))
	}
}

// A title that fits several sources is a usage error that lists them.
func TestShowAmbiguous(t *testing.T) {
	ctx := context.Background()
	dir, o, _ := corpusProject(t)
	other := filepath.Join(dir, "old", "draft.md")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("# Q3 planning\n\nAn earlier draft.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Add(ctx, o, []string{"notes", "old"}); err != nil {
		t.Fatal(err)
	}
	err := Show(ctx, o, "Q3 planning")
	if cmdutil.Code(err) != cmdutil.ExitUsage || err == nil {
		t.Fatalf("got %v (exit %d)", err, cmdutil.Code(err))
	}
	for _, want := range []string{`"Q3 planning" names 2 sources: `, "(Q3 planning, notes/2025-07-02-planning.md)", "(Q3 planning, old/draft.md)", "give one by its id"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}

// groups takes the grouping from --by, and custom groups from --group; a
// grouping that does not exist is a usage error.
func TestGroups(t *testing.T) {
	ctx := context.Background()
	dir, o, out := corpusProject(t)
	if err := Add(ctx, o, []string{"notes"}); err != nil {
		t.Fatal(err)
	}
	f := factory(dir, o.IO)

	out.Reset()
	if err := runGroups(ctx, f, o, &GroupsOptions{}); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^Q3 2025 \(temporal, 3 source\(s\)\): read as historian `).MatchString(out.String()) {
		t.Errorf("the default grouping printed:\n%s", out.String())
	}

	out.Reset()
	o.JSON = true
	if err := runGroups(ctx, f, o, &GroupsOptions{By: "source"}); err != nil {
		t.Fatal(err)
	}
	var groups []struct {
		Role string `json:"role"`
	}
	if err := json.Unmarshal(out.Bytes(), &groups); err != nil || len(groups) == 0 || groups[0].Role != "analyst" {
		t.Errorf("--by source --json printed %s (%v)", out.String(), err)
	}
	o.JSON = false

	for _, g := range []*GroupsOptions{{By: "colour"}, {Defs: []string{"Risks"}}} {
		err := runGroups(ctx, f, o, g)
		if cmdutil.Code(err) != cmdutil.ExitUsage {
			t.Errorf("%+v: %v (exit %d), want a usage error", g, err, cmdutil.Code(err))
		}
	}
}

// group needs --thematic, and says so before anything is read.
func TestGroupNeedsThematic(t *testing.T) {
	dir, o, out := corpusProject(t)
	err := NameThemes(context.Background(), factory(dir, o.IO), o, &GroupOptions{})
	if cmdutil.Code(err) != cmdutil.ExitUsage || err == nil || !strings.Contains(err.Error(), "say how to group: --thematic") {
		t.Errorf("got %v (exit %d)", err, cmdutil.Code(err))
	}
	if out.Len() != 0 {
		t.Errorf("printed %q", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, ".sot")); err == nil {
		t.Error("the index was opened")
	}
}

// factory loads the configuration of the project at dir, and no other.
func factory(dir string, io *cmdutil.IOStreams) *cmdutil.Factory {
	getenv := func(string) string { return "" }
	return &cmdutil.Factory{IO: io, Getenv: getenv,
		Loader: &config.Loader{WorkDir: dir, UserDir: filepath.Join(dir, "user"), Getenv: getenv}}
}

// A path that is not there is a usage error that names it.
func TestAddMissing(t *testing.T) {
	_, o, out := corpusProject(t)
	err := Add(context.Background(), o, []string{"missing"})
	if cmdutil.Code(err) != cmdutil.ExitUsage || err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("got %v (exit %d)", err, cmdutil.Code(err))
	}
	if out.Len() != 0 {
		t.Errorf("printed %q", out.String())
	}
}

// export --output writes a northstar agent file that says where it went,
// and sot sources add reads it back as the same title and text.
func TestExportReadsBack(t *testing.T) {
	ctx := context.Background()
	dir, o, out := corpusProject(t)
	if err := Add(ctx, o, []string{"notes"}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := Export(ctx, o, "Q3 retro", "exports/retro.md"); err == nil {
		t.Fatal("export into a directory that does not exist succeeded")
	} else if cmdutil.Code(err) != cmdutil.ExitUsage {
		t.Errorf("export into a missing directory: %v (exit %d)", err, cmdutil.Code(err))
	}
	if err := os.Mkdir(filepath.Join(dir, "exports"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Export(ctx, o, "Q3 retro", "exports/retro.md"); err != nil {
		t.Fatal(err)
	}
	if want := "sot: wrote exports/retro.md, a northstar agent file with no SoT metadata (see sot sources analyze) (sot sources add reads it back)\n"; out.String() != want {
		t.Errorf("export printed %q, want %q", out.String(), want)
	}
	out.Reset()
	if err := Add(ctx, o, []string{"exports"}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := Show(ctx, o, "exports/retro.md"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "title: Q3 retro\n") || !strings.Contains(out.String(), "pilot shipped in August") {
		t.Errorf("the exported file reads back as:\n%s", out.String())
	}
}
