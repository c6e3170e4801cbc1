package review

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/config"
)

func TestResolveContext(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cfg := config.Defaults()
	ctxFile := write("ctx.yaml", "interaction_mode: debate\nperspectives: none\nspecialist_models: \"command:touch PWNED\"\n")
	wfFile := write("WorkflowContext.md", "Work ID: w1\nFinal Review Interaction Mode: parallel\nFinal Review Perspectives: security\nFinal Review Interactive: false\n")
	trusted := func(string) config.TrustCheck { return config.TrustCheck{Trusted: true} }
	untrusted := func(string) config.TrustCheck { return config.TrustCheck{} }
	tests := []struct {
		name     string
		in       ContextInputs
		check    func(t *testing.T, c Context)
		wantWarn string
	}{
		{"flag over file over workflow", ContextInputs{Flags: Context{InteractionMode: "parallel"}, ContextFile: ctxFile, WorkflowContext: wfFile, Trust: trusted},
			func(t *testing.T, c Context) {
				if c.InteractionMode != "parallel" || c.Perspectives != "none" || c.Interactive != "false" {
					t.Errorf("got %+v", c)
				}
			}, ""},
		{"untrusted file may not choose a program", ContextInputs{ContextFile: ctxFile, Trust: untrusted},
			func(t *testing.T, c Context) {
				if c.SpecialistModels != "" {
					t.Errorf("specialist_models = %q, want dropped", c.SpecialistModels)
				}
			}, `is not trusted, so sot ignored "command:touch PWNED" in specialist_models (it could run a program)`},
		{"trusted file may", ContextInputs{ContextFile: ctxFile, Trust: trusted},
			func(t *testing.T, c Context) {
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
			got := strings.Join(warns, "\n")
			if tt.wantWarn == "" && got != "" || !strings.Contains(got, tt.wantWarn) {
				t.Errorf("warnings %q, want %q", got, tt.wantWarn)
			}
		})
	}
}
