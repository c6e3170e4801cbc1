package paw

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/review"
)

func TestLoadWorkflow(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".paw", "work", "billing-v2")
	os.MkdirAll(dir, 0o755)
	// Run from a subdirectory of the project: the reviews still go to the
	// project's .paw/work/<id>/reviews.
	os.MkdirAll(filepath.Join(root, "pkg"), 0o755)
	t.Chdir(filepath.Join(root, "pkg"))
	path := filepath.Join(dir, "WorkflowContext.md")
	os.WriteFile(path, []byte(`# WorkflowContext
- **Work Title**: Billing v2
- **Final Review Mode**: society-of-thought
- **Final Review Specialists**: adaptive:3
- **Final Review Interaction Mode**: debate
- **Final Review Interactive**: smart
- **Final Review Specialist Models**: security=anthropic:claude-sonnet-4-5
- **Final Review Perspectives**: premortem
- **Final Review Perspective Cap**: 1
`), 0o644)
	w, err := LoadWorkflow(path)
	if err != nil {
		t.Fatal(err)
	}
	want := review.Context{OutputDir: filepath.Join("..", ".paw", "work", "billing-v2", "reviews"), Specialists: "adaptive:3", InteractionMode: "debate",
		Interactive: "smart", SpecialistModels: "security=anthropic:claude-sonnet-4-5", Perspectives: "premortem", PerspectiveCap: 1}
	if diff := cmp.Diff(want, w.Context); diff != "" || w.Mode != "society-of-thought" || w.WorkID != "billing-v2" {
		t.Errorf("workflow (-want +got):\n%s mode %q id %q", diff, w.Mode, w.WorkID)
	}
	os.WriteFile(path, []byte("Final Review Perspective Cap: two\n"), 0o644)
	if _, err := LoadWorkflow(path); err == nil || !strings.Contains(err.Error(), "WorkflowContext.md:1") {
		t.Errorf("a bad cap should name the line: %v", err)
	}
	os.WriteFile(path, []byte("Work ID: ../../etc\n"), 0o644)
	if _, err := LoadWorkflow(path); err == nil {
		t.Error("a work id that leaves the tree must be refused")
	}
}

// pawWorkflow is a WorkflowContext.md in PAW's plain "Field: value" form.
const pawWorkflow = `# WorkflowContext

Work Title: Ledger Export
Work ID: ledger-export
Base Branch: main
Workflow Mode: full
Final Agent Review: enabled
Final Review Mode: society-of-thought
Final Review Interactive: smart
Final Review Specialists: adaptive:4
Final Review Interaction Mode: parallel
Final Review Specialist Models: security:claude-opus-4.6, testing:gpt-5.2, assumptions:gemini-3-pro-preview
Final Review Models: gpt-5.2, claude-opus-4.6
Planning Review Models: gpt-5.2, gemini-3-pro-preview
`

func writeWorkflow(t *testing.T, text string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".paw", "work", "ledger-export")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "WorkflowContext.md")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestWorkflowCheckModels: a model the file names that sot cannot place is
// reported at the file's line, with the alias that fixes it, not as a
// flag the user never passed.
func TestWorkflowCheckModels(t *testing.T) {
	cfg := config.Defaults()
	tests := []struct {
		name, text, want string
		clear            func(*Workflow)
	}{
		{"specialist models", pawWorkflow,
			`WorkflowContext.md:12: Final Review Specialist Models: model "gemini-3-pro-preview" names no provider, and its name is not one sot can place: write each as provider:model (for example openai:gemini-3-pro-preview), or add to your config: aliases: {gemini-3-pro-preview: <provider>:gemini-3-pro-preview}`, nil},
		{"overridden by a flag", pawWorkflow, "", func(w *Workflow) { w.Context.SpecialistModels = "" }},
		{"final review models", strings.Replace(pawWorkflow, "Final Review Models: gpt-5.2, claude-opus-4.6", "Final Review Models: gpt-5.2, gemini-3-pro", 1),
			`WorkflowContext.md:13: Final Review Models: model "gemini-3-pro" names no provider`, func(w *Workflow) { w.Context.SpecialistModels = "" }},
		{"list form with bold", "- **Final Review Specialist Models**: `security:grok-4`\n",
			`WorkflowContext.md:1: Final Review Specialist Models: model "grok-4" names no provider`, nil},
		{"all resolvable", strings.Replace(pawWorkflow, "assumptions:gemini-3-pro-preview", "assumptions:o3", 1), "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeWorkflow(t, tt.text)
			w, err := LoadWorkflow(path)
			if err != nil {
				t.Fatal(err)
			}
			if tt.clear != nil {
				tt.clear(&w)
			}
			err = w.CheckModels(&cfg)
			var fe *review.FieldError
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.want != "" && (!errors.As(err, &fe) || !strings.HasPrefix(err.Error(), filepath.Dir(path)+string(filepath.Separator)+tt.want)):
				t.Fatalf("err = %v\nwant a *FieldError starting %q", err, tt.want)
			}
		})
	}
}

func TestWorkflowFieldLinesAndDisabled(t *testing.T) {
	path := writeWorkflow(t, pawWorkflow)
	w, err := LoadWorkflow(path)
	if err != nil {
		t.Fatal(err)
	}
	if w.Disabled || w.Path != path || w.WorkID != "ledger-export" {
		t.Errorf("workflow %+v", w)
	}
	wantLines := map[string]int{"Work ID": 4, "Final Agent Review": 7, "Final Review Mode": 8, "Final Review Interactive": 9, "Final Review Specialists": 10,
		"Final Review Interaction Mode": 11, "Final Review Specialist Models": 12, "Final Review Models": 13}
	if diff := cmp.Diff(wantLines, w.Lines); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if w.Context.SpecialistModels != "security:claude-opus-4.6, testing:gpt-5.2, assumptions:gemini-3-pro-preview" || strings.Join(w.Models, ",") != "gpt-5.2,claude-opus-4.6" {
		t.Errorf("models %q, %q (Planning Review Models must not leak in)", w.Context.SpecialistModels, w.Models)
	}

	tests := []struct {
		value    string
		disabled bool
		err      string
	}{
		{"disabled", true, ""},
		{"Disabled", true, ""},
		{"`disabled`", true, ""},
		{"enabled", false, ""},
		{"sometimes", false, `WorkflowContext.md:7: Final Agent Review: "sometimes" is not enabled or disabled`},
	}
	for _, tt := range tests {
		path := writeWorkflow(t, strings.Replace(pawWorkflow, "Final Agent Review: enabled", "Final Agent Review: "+tt.value, 1))
		w, err := LoadWorkflow(path)
		var fe *review.FieldError
		switch {
		case tt.err != "":
			if !errors.As(err, &fe) || !strings.HasSuffix(err.Error(), tt.err) {
				t.Errorf("%s: err = %v, want a *FieldError ending %q", tt.value, err, tt.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.value, err)
		case w.Disabled != tt.disabled || (tt.disabled && w.DisabledLine != 7):
			t.Errorf("%s: disabled %v at line %d, want %v at 7", tt.value, w.Disabled, w.DisabledLine, tt.disabled)
		}
	}
}

func TestCheckFileModels(t *testing.T) {
	cfg := config.Defaults()
	tests := []struct{ file, text, want string }{
		{"ctx.yaml", "type: diff\nspecialists: all\nspecialist_models: security:claude-opus-4.6, edge-cases:grok-4\n",
			`ctx.yaml:3: specialist_models: model "grok-4" names no provider`},
		{"ctx.json", "{\n  \"type\": \"diff\",\n  \"specialist_models\": \"gpt-5.2, mystery-1\"\n}\n",
			`ctx.json:3: specialist_models: model "mystery-1" names no provider`},
		{"ok.yaml", "specialist_models: security:claude-opus-4.6, gpt-5.2\n", ""},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), tt.file)
		if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := LoadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckFileModels(path, c, &cfg)
		var fe *review.FieldError
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.file, err)
		case tt.want != "" && (!errors.As(err, &fe) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: err = %v, want %q", tt.file, err, tt.want)
		}
	}
}
