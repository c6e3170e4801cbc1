package review

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sotlabs/sot/persona"
)

func TestContextValidate(t *testing.T) {
	tests := []struct {
		name  string
		c     Context
		field string
	}{
		{"defaults are valid", Context{}, ""},
		{"bad type", Context{Type: "poem"}, "type"},
		{"bad interaction mode", Context{InteractionMode: "chat"}, "interaction_mode"},
		{"bad interactive", Context{Interactive: "maybe"}, "interactive"},
		{"framing without freeform", Context{Type: "diff", Framing: "x"}, "framing"},
		{"framing with freeform", Context{Type: "freeform", Framing: "x"}, ""},
		{"negative cap", Context{PerspectiveCap: -1}, "perspective_cap"},
		{"bad specialists", Context{Specialists: "adaptive:zero"}, "specialists"},
		{"bad perspectives", Context{Perspectives: "premortem,../x"}, "perspectives"},
		{"bad model pin", Context{SpecialistModels: "=openai:gpt-4.1"}, "specialist_models"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.c
			c.Defaults()
			err := c.Validate()
			var fe *FieldError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.field != "" && (!errors.As(err, &fe) || fe.Field != tt.field):
				t.Fatalf("err = %v, want a FieldError naming %s", err, tt.field)
			}
		})
	}
}

func TestParseModels(t *testing.T) {
	tests := []struct {
		in   string
		want ModelSpec
	}{
		{"none", ModelSpec{Pinned: map[string]string{}}},
		{"openai:gpt-4.1, anthropic:claude-sonnet-4-5", ModelSpec{Pool: []string{"openai:gpt-4.1", "anthropic:claude-sonnet-4-5"}, Pinned: map[string]string{}}},
		{"security=anthropic:claude-sonnet-4-5", ModelSpec{Pinned: map[string]string{"security": "anthropic:claude-sonnet-4-5"}}},
		{"security:anthropic:claude-sonnet-4-5, fast", ModelSpec{Pool: []string{"fast"}, Pinned: map[string]string{"security": "anthropic:claude-sonnet-4-5"}}},
		{"ollama:qwen2.5:7b", ModelSpec{Pool: []string{"ollama:qwen2.5:7b"}, Pinned: map[string]string{}}},
	}
	for _, tt := range tests {
		got, err := ParseModels(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseModels(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestAssignModelsPrecedence(t *testing.T) {
	lib, err := persona.Discover(persona.Dirs{})
	if err != nil {
		t.Fatal(err)
	}
	var specs []*persona.Persona
	for _, id := range []string{"testing", "security", "architecture", "performance"} {
		p, _ := lib.Get(persona.Specialist, id)
		specs = append(specs, p)
	}
	own := *specs[3]
	own.Meta.Model = "anthropic:claude-haiku-4-5"
	specs[3] = &own
	cfg := benchConfig()
	ms, _ := ParseModels("security=anthropic:claude-sonnet-4-5, openai:gpt-4.1-mini, openai:gpt-4.1-nano, testing=vertex:x")
	got, warnings := assignModels(specs, ms, "openai:gpt-4.1", cfg)
	want := map[string]string{
		"performance":  "anthropic:claude-haiku-4-5",  // frontmatter
		"security":     "anthropic:claude-sonnet-4-5", // pinned
		"architecture": "openai:gpt-4.1-mini",         // pool, round-robin by name
		"testing":      "openai:gpt-4.1",              // pinned to an unknown provider: default
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("assignment (-want +got):\n%s", diff)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `"vertex:x" for testing is unavailable`) {
		t.Errorf("warnings = %q", warnings)
	}
}

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
	want := Context{OutputDir: filepath.Join("..", ".paw", "work", "billing-v2", "reviews"), Specialists: "adaptive:3", InteractionMode: "debate",
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
