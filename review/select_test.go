package review

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/material"
	"github.com/sotlabs/sot/persona"
)

// files maps paths to contents; "" deletes a file.
type files map[string]string

// changeMaterial commits before in a new repository, writes after over it
// and returns the working tree's diff (untracked files included).
func changeMaterial(t *testing.T, before, after files) *material.Material {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=s", "GIT_AUTHOR_EMAIL=s@example.com", "GIT_COMMITTER_NAME=s",
			"GIT_COMMITTER_EMAIL=s@example.com", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(fs files) {
		t.Helper()
		for p, c := range fs {
			name := filepath.Join(dir, filepath.FromSlash(p))
			if c == "" {
				if err := os.Remove(name); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(files{".keep": "keep\n"})
	write(before)
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-qm", "base")
	write(after)
	m, err := material.Diff(context.Background(), material.DiffOptions{Dir: dir, Untracked: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.Empty() {
		t.Fatal("the change is empty")
	}
	return m
}

// builtins returns the built-in library and its specialists.
func builtins(t *testing.T) (*persona.Library, []*persona.Persona) {
	t.Helper()
	lib, err := persona.Discover(persona.Dirs{})
	if err != nil {
		t.Fatal(err)
	}
	return lib, lib.List(persona.Specialist)
}

func ids(ps []*persona.Persona) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.ID)
	}
	return out
}

const appGo = "package app\n\nfunc Add(a, b int) int { return a + b }\n"

// handler is a change that crosses a trust boundary: an HTTP handler
// reading request parameters.
const handler = `package api

import "net/http"

// Lookup answers a search.
func Lookup(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	if q == "" {
		http.Error(w, "missing q", http.StatusBadRequest)
		return
	}
	w.Write([]byte(q))
}
`

func TestAdaptive(t *testing.T) {
	_, specs := builtins(t)
	if len(specs) != 9 {
		t.Fatalf("%d built-in specialists, the tests assume 9", len(specs))
	}
	commentOnly := func(t *testing.T) *material.Material {
		return changeMaterial(t, files{"app.go": appGo}, files{"app.go": "package app\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a + b }\n"})
	}
	logic := func(t *testing.T) *material.Material {
		return changeMaterial(t, files{"app.go": appGo}, files{"app.go": "package app\n\nfunc Add(a, b int) int {\n\tif a < 0 {\n\t\treturn b\n\t}\n\treturn a + b\n}\n"})
	}
	docs := func(t *testing.T) *material.Material {
		return changeMaterial(t, files{"README.md": "# App\n"}, files{"README.md": "# App\n\nSet the config path before you start the app.\n"})
	}
	tests := []struct {
		name      string
		material  func(*testing.T) *material.Material
		n         int
		trivial   bool
		picked    []string // exactly these; nil: any pick of the expected size
		must      []string // at least these
		size      int
		rationale []string // substrings
		not       []string // specialists that must not be picked
	}{
		// The trivial check comes first, whatever N is.
		{name: "trivial under the roster", material: commentOnly, n: 8, trivial: true, rationale: []string{"the change is trivial: comment-only change"}},
		{name: "trivial at the roster", material: commentOnly, n: 9, trivial: true, rationale: []string{"the change is trivial: comment-only change"}},
		{name: "trivial over the roster", material: commentOnly, n: 20, trivial: true, rationale: []string{"the change is trivial: comment-only change"}},
		{name: "whole roster", material: logic, n: 9, size: 9, rationale: []string{"adaptive:9 asks for at least the whole roster of 9"}},
		{name: "over the roster", material: logic, n: 20, size: 9, rationale: []string{"adaptive:20 asks for at least the whole roster of 9"}},
		{name: "new logic", material: logic, n: 3, must: []string{"correctness", "edge-cases"}, size: 3, rationale: []string{"Selected ", "new-logic: "}},
		// A docs-only change: one "config" in prose does not make
		// maintainability or release-manager relevant, and the pick is
		// not padded to reach N.
		{name: "docs with a passing word", material: docs, n: 3, picked: []string{"architecture", "assumptions"}, size: 2,
			rationale: []string{"3 requested, 2 relevant"}, not: []string{"maintainability", "release-manager"}},
		{name: "trust boundary", material: func(t *testing.T) *material.Material {
			return changeMaterial(t, nil, files{"api/lookup.go": handler})
		}, n: 3, must: []string{"security"}, size: 3, rationale: []string{"security (trust-boundary", "trust-boundary: api/lookup.go line 6 handles HTTP requests"}},
		// A plain code change with no control flow, route or SQL still
		// concerns somebody: it reads the environment and writes a file.
		{name: "plain code change", material: func(t *testing.T) *material.Material {
			return changeMaterial(t, files{"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n"},
				files{"main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() {\n\tname := os.Getenv(\"NAME\")\n\tos.WriteFile(\"/tmp/x\", []byte(name), 0o644)\n\tfmt.Println(\"hi \" + name)\n}\n"})
		}, n: 3, picked: []string{"correctness", "edge-cases", "security"}, size: 3, rationale: []string{"data-handling: main.go line"}},
		// With nothing but behaviour-change, correctness and testing are
		// the ones concerned.
		{name: "only a code change", material: func(t *testing.T) *material.Material {
			return changeMaterial(t, files{"calc.go": "package calc\n\nfunc double(x int) int { return x * 2 }\n"}, files{"calc.go": "package calc\n\nfunc double(x int) int { return x * 3 }\n"})
		}, n: 3, picked: []string{"correctness", "testing"}, size: 2, rationale: []string{"3 requested, 2 relevant", "behaviour-change: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.material(t)
			picked, rationale, trivial := adaptive(specs, tt.n, m, m.Analyze)
			if trivial != tt.trivial {
				t.Fatalf("trivial = %v, want %v (%s)", trivial, tt.trivial, rationale)
			}
			if tt.trivial && len(picked) != 0 {
				t.Errorf("a trivial change picked %v", ids(picked))
			}
			if !tt.trivial && len(picked) != tt.size {
				t.Errorf("picked %v, want %d specialists (%s)", ids(picked), tt.size, rationale)
			}
			if tt.picked != nil {
				if diff := cmp.Diff(tt.picked, ids(picked)); diff != "" {
					t.Errorf("pick (-want +got):\n%s\n%s", diff, rationale)
				}
			}
			for _, id := range tt.must {
				if !containsLens(picked, id) {
					t.Errorf("%s not picked: %s", id, rationale)
				}
			}
			for _, id := range tt.not {
				if containsLens(picked, id) {
					t.Errorf("%s picked: %s", id, rationale)
				}
			}
			for _, want := range tt.rationale {
				if !strings.Contains(rationale, want) {
					t.Errorf("rationale %q lacks %q", rationale, want)
				}
			}
			if strings.Contains(rationale, "requested") && (tt.size == tt.n || tt.trivial) {
				t.Errorf("rationale %q speaks of a short pick", rationale)
			}
		})
	}
}

func TestMinRelevance(t *testing.T) {
	p := &persona.Persona{ID: "ops", Meta: persona.Frontmatter{Signals: []string{"config", "retry", "*.tf"}}}
	tests := []struct {
		name     string
		keywords map[string]int
		files    []string
		relevant bool
	}{
		{"one passing word", map[string]int{"config": 1}, []string{"README.md"}, false},
		{"two passing words", map[string]int{"config": 1, "retry": 1}, []string{"README.md"}, false},
		{"a word three times", map[string]int{"config": 3}, []string{"README.md"}, true},
		{"a file pattern", nil, []string{"infra/main.tf"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			score, why := scoreSpecialist(p, material.Signals{Keywords: tt.keywords}, tt.files)
			if got := score >= minRelevance; got != tt.relevant {
				t.Errorf("score %v (%v): relevant = %v, want %v", score, why, got, tt.relevant)
			}
		})
	}
}

func TestAutoLenses(t *testing.T) {
	lib, _ := builtins(t)
	gomod := "module x\n\ngo 1.22\n"
	// A dependency bump whose module path mentions a security word (a weak
	// trust signal) plus a Dockerfile: temporal signals dominate.
	bump := files{"go.mod": "module x\n\ngo 1.22\n\nrequire github.com/golang-jwt/jwt/v5 v5.2.1\n", "Dockerfile": "FROM golang:1.23\nRUN go build ./...\n"}
	tests := []struct {
		name      string
		before    files
		after     files
		artifact  string // review this document instead of a diff
		capN      int
		lenses    []string
		skipped   []string // prefixes of skipped entries
		rationale []string
	}{
		{name: "http handler", after: files{"api/lookup.go": handler}, capN: 2,
			lenses:    []string{"red-team"},
			skipped:   []string{"baseline: below", "premortem: below", "retrospective: below"},
			rationale: []string{"adversarial lenses because trust-boundary: api/lookup.go"}},
		{name: "auth code", before: files{"auth/check.go": "package auth\n"}, after: files{"auth/check.go": "package auth\n\nfunc Allowed(role string) bool {\n\treturn role == \"admin\"\n}\n"}, capN: 2,
			lenses: []string{"red-team"}},
		{name: "go.mod bump", before: files{"go.mod": gomod}, after: files{"go.mod": "module x\n\ngo 1.23\n"}, capN: 2,
			lenses: []string{"premortem", "retrospective"}, rationale: []string{"temporal lenses because dependencies: go.mod changed"}},
		{name: "dockerfile", after: files{"Dockerfile": "FROM alpine:3.20\nCMD [\"/app\"]\n"}, capN: 2,
			lenses: []string{"premortem", "retrospective"}},
		{name: "ci workflow", after: files{".github/workflows/ci.yml": "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: go test ./...\n"}, capN: 2,
			lenses: []string{"premortem", "retrospective"}},
		{name: "nothing qualifies", before: files{"app.go": "package app\n\nfunc add(a, b int) int { return a + b }\n"}, after: files{"app.go": "package app\n\nfunc add(a, b int) int {\n\tif a < 0 {\n\t\treturn b\n\t}\n\treturn a + b\n}\n"}, capN: 2,
			lenses: []string{"baseline"}, rationale: []string{"no perspective met the relevance threshold"}},
		// The cap keeps the most relevant: the temporal lens, not red-team.
		{name: "cap keeps temporal", before: files{"go.mod": gomod}, after: bump, capN: 1,
			lenses:    []string{"premortem"},
			skipped:   []string{"red-team: over the perspective cap of 1", "retrospective: over the perspective cap of 1", "baseline: below"},
			rationale: []string{"the perspective cap of 1 keeps premortem"}},
		{name: "cap 2 keeps both temporal", before: files{"go.mod": gomod}, after: bump, capN: 2,
			lenses: []string{"premortem", "retrospective"}, skipped: []string{"red-team: over the perspective cap of 2"}},
		{name: "no cap: most relevant first", before: files{"go.mod": gomod}, after: bump, capN: 3,
			lenses: []string{"premortem", "retrospective", "red-team"}},
		// Two handlers outweigh one dependency bump.
		{name: "cap keeps adversarial", before: files{"go.mod": gomod},
			after: files{"go.mod": "module x\n\ngo 1.23\n", "api/lookup.go": handler, "api/find.go": strings.ReplaceAll(handler, "Lookup", "Find")}, capN: 1,
			lenses: []string{"red-team"}, skipped: []string{"premortem: over the perspective cap of 1", "retrospective: over the perspective cap of 1"}},
		// Equal relevance: adversarial first, then by name.
		{name: "tie", before: files{"go.mod": gomod}, after: files{"go.mod": "module x\n\ngo 1.23\n", "api/lookup.go": handler}, capN: 3,
			lenses: []string{"red-team", "premortem", "retrospective"}},
		{name: "design document", artifact: "# Plan\n\nWe will move the queue to a new cluster next quarter.\n", capN: 2,
			lenses: []string{"premortem", "retrospective"}, rationale: []string{"a plan whose consequences come later"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m *material.Material
			if tt.artifact != "" {
				p := filepath.Join(t.TempDir(), "design.md")
				if err := os.WriteFile(p, []byte(tt.artifact), 0o644); err != nil {
					t.Fatal(err)
				}
				var err error
				if m, err = material.Artifacts([]string{p}); err != nil {
					t.Fatal(err)
				}
			} else {
				m = changeMaterial(t, tt.before, tt.after)
			}
			lp, warnings, err := planLenses(lib, "auto", tt.capN, m, m.Analyze)
			if err != nil || len(warnings) > 0 {
				t.Fatalf("planLenses: %v %v", err, warnings)
			}
			if lp.mode != "auto" {
				t.Errorf("mode %q", lp.mode)
			}
			if diff := cmp.Diff(tt.lenses, ids(lp.lenses)); diff != "" {
				t.Errorf("lenses (-want +got):\n%s\nrationale: %s\nskipped: %q", diff, lp.rationale, lp.skipped)
			}
			for _, want := range tt.skipped {
				found := false
				for _, s := range lp.skipped {
					found = found || strings.HasPrefix(s, want)
				}
				if !found {
					t.Errorf("skipped %q lacks %q", lp.skipped, want)
				}
			}
			if len(lp.lenses)+len(lp.skipped) != len(lib.List(persona.Lens)) {
				t.Errorf("every lens is either applied or skipped: %v, %q", ids(lp.lenses), lp.skipped)
			}
			for _, want := range tt.rationale {
				if !strings.Contains(lp.rationale, want) {
					t.Errorf("rationale %q lacks %q", lp.rationale, want)
				}
			}
		})
	}
}

func TestPlanLensesList(t *testing.T) {
	lib, _ := builtins(t)
	m := changeMaterial(t, files{"app.go": appGo}, files{"app.go": strings.Replace(appGo, "a + b", "b + a", 1)})
	tests := []struct {
		name     string
		spec     string
		capN     int
		mode     string
		lenses   []string
		skipped  []string
		warnings []string // substrings, one per warning
	}{
		{name: "none", spec: "none", capN: 2, mode: "none"},
		{name: "list", spec: "premortem,red-team", capN: 2, mode: "guided", lenses: []string{"premortem", "red-team"}},
		{name: "unknown names warn and are skipped", spec: "premortem, nosuch ,red-team,other", capN: 2, mode: "guided",
			lenses: []string{"premortem", "red-team"}, warnings: []string{`unknown perspective "nosuch" skipped`, `unknown perspective "other" skipped`}},
		// A list keeps its order: the cap keeps the lenses named first.
		{name: "cap keeps the first named", spec: "retrospective,premortem,red-team", capN: 1, mode: "guided",
			lenses: []string{"retrospective"}, skipped: []string{"premortem: over the perspective cap of 1", "red-team: over the perspective cap of 1"}},
	}
	if _, _, err := planLenses(lib, "nosuch, other", 2, m, m.Analyze); !errors.Is(err, persona.ErrNoSuchPerspective) || !strings.Contains(err.Error(), "nosuch, other") {
		t.Errorf("a list of only unknown names: %v; want ErrNoSuchPerspective naming them", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lp, warnings, err := planLenses(lib, tt.spec, tt.capN, m, m.Analyze)
			if err != nil {
				t.Fatal(err)
			}
			if lp.mode != tt.mode {
				t.Errorf("mode %q, want %q", lp.mode, tt.mode)
			}
			if diff := cmp.Diff(tt.lenses, ids(lp.lenses)); diff != "" {
				t.Errorf("lenses (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.skipped, lp.skipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
			if len(warnings) != len(tt.warnings) {
				t.Fatalf("warnings %q, want %d", warnings, len(tt.warnings))
			}
			for i, want := range tt.warnings {
				if !strings.Contains(warnings[i], want) {
					t.Errorf("warning %q lacks %q", warnings[i], want)
				}
			}
		})
	}
	if _, _, err := planLenses(lib, "premortem,../x", 2, m, m.Analyze); err == nil {
		t.Error("a lens name that is a path must be refused")
	}
}

func TestAssignModelsPool(t *testing.T) {
	_, all := builtins(t)
	byID := map[string]*persona.Persona{}
	for _, p := range all {
		byID[p.ID] = p
	}
	pick := func(names ...string) []*persona.Persona {
		var out []*persona.Persona
		for _, n := range names {
			out = append(out, byID[n])
		}
		return out
	}
	cfg := config.Defaults()
	tests := []struct {
		name   string
		specs  []*persona.Persona
		models string
		want   map[string]string
	}{
		{
			// Unpinned specialists sorted by name take the pool in turn,
			// whatever order they come in; pinned ones are left out of
			// the rotation.
			name:   "round-robin over the unpinned, by name",
			specs:  pick("testing", "security", "performance", "architecture", "edge-cases", "correctness"),
			models: "openai:gpt-4.1-mini, security=anthropic:claude-sonnet-4-5, openai:gpt-4.1-nano",
			want: map[string]string{
				"architecture": "openai:gpt-4.1-mini",
				"correctness":  "openai:gpt-4.1-nano",
				"edge-cases":   "openai:gpt-4.1-mini",
				"performance":  "openai:gpt-4.1-nano",
				"security":     "anthropic:claude-sonnet-4-5",
				"testing":      "openai:gpt-4.1-mini",
			},
		},
		{
			name:   "a pool of one",
			specs:  pick("testing", "architecture"),
			models: "openai:gpt-4.1-nano",
			want:   map[string]string{"architecture": "openai:gpt-4.1-nano", "testing": "openai:gpt-4.1-nano"},
		},
		{
			name:   "no pool: the session default",
			specs:  pick("testing", "security"),
			models: "security=openai:gpt-4.1-mini",
			want:   map[string]string{"security": "openai:gpt-4.1-mini", "testing": "openai:gpt-4.1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := ParseModels(tt.models)
			if err != nil {
				t.Fatal(err)
			}
			got, warnings := assignModels(tt.specs, ms, "openai:gpt-4.1", &cfg)
			if len(warnings) > 0 {
				t.Errorf("warnings %q", warnings)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("models (-want +got):\n%s", diff)
			}
		})
	}
}
