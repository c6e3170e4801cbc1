package personas

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/persona"
)

const security = `---
context: implementation
---
# Security

## Identity & Narrative Backstory
Grizzled appsec lead who has read too many incident reports.

## Cognitive Strategy
1. List the trust boundaries the change crosses.
2. Walk each boundary as an attacker.

## Domain Boundary
Security only.

## Behavioral Rules
- Cite file and line.

## Demand Rationale
Breaches start with small changes.

## Example Review Comments
### Finding: Query parameter reaches SQL.
- **Severity**: must-fix
- **Confidence**: HIGH
- **Category**: injection
- **Grounds**: ` + "`db/users.go:12`" + ` concatenates input.
- **Warrant**: Concatenated input is injectable.
- **Rebuttal Conditions**: The input is an enum.
- **Suggested Verification**: Send a quote.
`

// project makes a repository whose .sot/personas/security.md overrides the
// built-in specialist, and returns it with the directories discovery reads.
func project(t *testing.T) (string, persona.Dirs) {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(dir, ".sot", "personas", "security.md"), security)
	return dir, persona.Dirs{Project: dir, User: filepath.Join(dir, "user"), Home: filepath.Join(dir, "home")}
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

func streams() (*cmdutil.IOStreams, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, &out, &errOut
}

func library(d persona.Dirs) func() (*persona.Library, error) {
	return func() (*persona.Library, error) { return persona.Discover(d) }
}

// The list shows the project's persona at the project level in place of
// the built-in one, and the built-ins it does not override.
func TestListShowsTheLevelThatWon(t *testing.T) {
	dir, dirs := project(t)
	io, out, _ := streams()
	if err := RunList(&ListOptions{IO: io, Library: library(dirs), Kind: "specialist"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`(?m)^security +specialist +project +implementation +- +` + regexp.QuoteMeta(filepath.Join(dir, ".sot", "personas", "security.md")) + `$`,
		`(?m)^testing +specialist +built-in +implementation +- +builtin:specialists/testing\.md$`,
	} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("the list has no line %s:\n%s", want, out)
		}
	}
	if strings.Contains(out.String(), " lens ") {
		t.Errorf("--kind specialist listed a lens:\n%s", out)
	}
}

// An unknown --kind is a usage error that names the kinds there are.
func TestUnknownKind(t *testing.T) {
	_, dirs := project(t)
	io, out, _ := streams()
	err := RunList(&ListOptions{IO: io, Library: library(dirs), Kind: "wizard"})
	if cmdutil.Code(err) != cmdutil.ExitUsage || !strings.Contains(fmtErr(err), `--kind "wizard": use specialist, lens`) {
		t.Errorf("got %v (exit %d)", err, cmdutil.Code(err))
	}
	if out.Len() != 0 {
		t.Errorf("printed %q", out)
	}
}

// show prints where the persona came from, what it overrides and the file
// as written; a name nobody has is a usage error.
func TestShow(t *testing.T) {
	dir, dirs := project(t)
	io, out, _ := streams()
	if err := RunShow(&ShowOptions{IO: io, Library: library(dirs), Name: "security"}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if want := "# security (specialist), from the project level: " + filepath.Join(dir, ".sot", "personas", "security.md"); lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}
	if lines[1] != "# overrides builtin:specialists/security.md" {
		t.Errorf("second line %q", lines[1])
	}
	if !strings.Contains(out.String(), "Grizzled appsec lead") {
		t.Errorf("the file's text is not shown:\n%s", out)
	}

	err := RunShow(&ShowOptions{IO: io, Library: library(dirs), Name: "nobody"})
	if cmdutil.Code(err) != cmdutil.ExitUsage || !strings.Contains(fmtErr(err), `no persona named "nobody"`) {
		t.Errorf("an unknown name: %v (exit %d)", err, cmdutil.Code(err))
	}
}

// new writes a template under the project's .sot (a lens under lenses/),
// says how many placeholders are left, and will not overwrite a file
// without --force.
func TestNewWritesATemplateOnce(t *testing.T) {
	dir, _ := project(t)
	sub := filepath.Join(dir, "src")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	io, out, errOut := streams()
	o := &NewOptions{IO: io, WorkDir: sub, UserDir: filepath.Join(dir, "user"), Name: "Payments", Kind: "specialist"}
	if err := RunNew(o); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ".sot", "personas", "payments.md")
	if out.String() != "wrote "+path+"\n" {
		t.Errorf("stdout %q", out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^Replace its [1-9]\d* <<TODO: \.\.\.>> placeholders`).MatchString(errOut.String()) || !strings.Contains(string(b), "<<TODO:") {
		t.Errorf("stderr %q; file:\n%s", errOut, b)
	}

	err = RunNew(o)
	if cmdutil.Code(err) != cmdutil.ExitUsage || !strings.Contains(fmtErr(err), "already exists; pass --force") {
		t.Errorf("a second time: %v (exit %d)", err, cmdutil.Code(err))
	}
	o.Force = true
	if err := RunNew(o); err != nil {
		t.Errorf("with --force: %v", err)
	}

	lens := &NewOptions{IO: io, WorkDir: dir, UserDir: filepath.Join(dir, "user"), Name: "growth", Kind: "lens", User: true}
	if err := RunNew(lens); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "user", "lenses", "growth.md")); err != nil {
		t.Errorf("--user --kind lens: %v", err)
	}
}

// validate passes a good file, and exits 1 with file:line messages on a
// bad one.
func TestValidate(t *testing.T) {
	dir, _ := project(t)
	io, out, errOut := streams()
	good := filepath.Join(dir, ".sot", "personas", "security.md")
	if err := RunValidate(&ValidateOptions{IO: io, Paths: []string{good}}); err != nil {
		t.Fatalf("a good file: %v; %s", err, out)
	}
	if errOut.String() != "checked 1 persona file(s): no problems\n" {
		t.Errorf("stderr %q", errOut)
	}

	empty := filepath.Join(dir, "bad", "personas", "empty.md")
	write(t, empty, "")
	io, out, errOut = streams()
	err := RunValidate(&ValidateOptions{IO: io, Paths: []string{filepath.Join(dir, "bad")}})
	if cmdutil.Code(err) != cmdutil.ExitFailure {
		t.Errorf("a bad file: %v (exit %d)", err, cmdutil.Code(err))
	}
	if !strings.Contains(out.String(), empty+":1: file is empty") {
		t.Errorf("stdout %q", out)
	}
	if !strings.HasPrefix(errOut.String(), "checked 1 persona file(s): 1 error(s)") {
		t.Errorf("stderr %q", errOut)
	}

	err = RunValidate(&ValidateOptions{IO: io, Paths: []string{filepath.Join(dir, "missing.md")}})
	if cmdutil.Code(err) != cmdutil.ExitUsage || !strings.Contains(fmtErr(err), "cannot read") {
		t.Errorf("a missing path: %v (exit %d)", err, cmdutil.Code(err))
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
