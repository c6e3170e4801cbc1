package review

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
			picked, rationale, trivial := adaptive(specs, tt.n, m, m.Analyze, nil)
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

// With review.learn_from_resolutions, a specialist whose findings this
// project dismissed weighs less in the adaptive pick, and one whose
// findings it accepted more, once each has enough decisions; the
// rationale says so.
func TestAdaptiveWeighsAcceptance(t *testing.T) {
	_, specs := builtins(t)
	m := changeMaterial(t, files{"calc.go": "package calc\n\nfunc double(x int) int { return x * 2 }\n"}, files{"calc.go": "package calc\n\nfunc double(x int) int { return x * 3 }\n"})
	plain, _, _ := adaptive(specs, 1, m, m.Analyze, nil)
	if len(plain) != 1 {
		t.Fatalf("picked %v", ids(plain))
	}
	first := plain[0].ID
	top := t.TempDir()
	var lines []string
	for i := range 6 {
		lines = append(lines, fmt.Sprintf(`{"run_id":"r%d","item":"S1","status":"dismissed","reason":"noise","specialists":[%q],"finding_ids":["%s.1"],"at":"2026-11-0%dT10:00:00Z"}`, i, first, first, i+1))
	}
	os.MkdirAll(filepath.Join(top, ".sot"), 0o755)
	os.WriteFile(filepath.Join(top, ".sot", "resolutions.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	weighed, rationale, _ := adaptive(specs, 1, m, m.Analyze, acceptanceWeights(top))
	if len(weighed) != 1 || weighed[0].ID == first {
		t.Errorf("with %s's findings dismissed six times, the pick is still %v: %s", first, ids(weighed), rationale)
	}
	w, note := acceptanceWeights(top)(first)
	if w != 0.5 || !strings.Contains(note, "0% of its findings accepted here, weight ×0.50") {
		t.Errorf("weight %v, %q", w, note)
	}
	if w, note := acceptanceWeights(top)("security"); w != 1 || note != "" {
		t.Errorf("a specialist without decisions weighs %v (%q)", w, note)
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

// lensMaterial returns the material of a test case: a document when
// artifact is set, the change from before to after otherwise.
func lensMaterial(t *testing.T, before, after files, artifact string) *material.Material {
	t.Helper()
	if artifact == "" {
		return changeMaterial(t, before, after)
	}
	p := filepath.Join(t.TempDir(), "design.md")
	if err := os.WriteFile(p, []byte(artifact), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := material.Artifacts([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Lens changes of the tests below.
var (
	gomod = "module x\n\ngo 1.22\n"
	// A dependency bump whose module path mentions a security word (a weak
	// trust signal) plus a Dockerfile: temporal signals dominate.
	bump     = files{"go.mod": "module x\n\ngo 1.22\n\nrequire github.com/golang-jwt/jwt/v5 v5.2.1\n", "Dockerfile": "FROM golang:1.23\nRUN go build ./...\n"}
	addOnly  = files{"app.go": "package app\n\nfunc add(a, b int) int { return a + b }\n"}
	addGuard = files{"app.go": "package app\n\nfunc add(a, b int) int {\n\tif a < 0 {\n\t\treturn b\n\t}\n\treturn a + b\n}\n"}
)

// checkSkipped asserts that skipped holds an entry starting with each of
// want, and that every lens is applied, skipped, or both (applied to some
// specialists and over the cap for others).
func checkSkipped(t *testing.T, lib *persona.Library, lp lensPlan, want []string) {
	t.Helper()
	for _, w := range want {
		if !slices.ContainsFunc(lp.skipped, func(s string) bool { return strings.HasPrefix(s, w) }) {
			t.Errorf("skipped %q lacks %q", lp.skipped, w)
		}
	}
	for _, l := range lib.List(persona.Lens) {
		applied := containsLens(lp.lenses, l.ID)
		skipped := slices.ContainsFunc(lp.skipped, func(s string) bool { return strings.HasPrefix(s, l.ID+": ") })
		if !applied && !skipped {
			t.Errorf("lens %s is neither applied nor skipped: %v, %q", l.ID, ids(lp.lenses), lp.skipped)
		}
	}
}

// runsOf renders the plan's runs of every built-in specialist, one string
// each: "security: baseline, red-team".
func runsOf(lp lensPlan, specs []*persona.Persona) map[string]string {
	out := map[string]string{}
	for _, s := range specs {
		var names []string
		for _, l := range lp.runs(s.ID) {
			if l == nil {
				names = append(names, "(none)")
				continue
			}
			names = append(names, l.ID)
		}
		out[s.ID] = strings.Join(names, ", ")
	}
	return out
}

// TestAutoLensesPerSpecialist: under auto each specialist takes the lenses
// that fit its domain (the fit table) among those the change calls for,
// most relevant first, and keeps its own run under the baseline lens
// unless the cap is 1. red-team goes to security, architecture and
// testing; never to edge-cases, whose inputs are accidental, nor to any
// other specialist whose domain has no adversary in it.
func TestAutoLensesPerSpecialist(t *testing.T) {
	lib, specs := builtins(t)
	all := func(lenses string) map[string]string {
		out := map[string]string{}
		for _, s := range specs {
			out[s.ID] = lenses
		}
		return out
	}
	with := func(base map[string]string, over map[string]string) map[string]string {
		for k, v := range over {
			base[k] = v
		}
		return base
	}
	tests := []struct {
		name      string
		before    files
		after     files
		artifact  string
		capN      int
		runs      map[string]string
		lenses    []string
		skipped   []string
		rationale []string
	}{
		{name: "http handler", after: files{"api/lookup.go": handler}, capN: 2,
			runs:   with(all("baseline"), map[string]string{"security": "baseline, red-team", "architecture": "baseline, red-team", "testing": "baseline, red-team"}),
			lenses: []string{"baseline", "red-team"}, skipped: []string{"premortem: below", "retrospective: below"},
			rationale: []string{"red-team for architecture, security, testing", "each specialist keeps its own run under the baseline lens"}},
		{name: "http handler, cap 1", after: files{"api/lookup.go": handler}, capN: 1,
			runs:   with(all("baseline"), map[string]string{"security": "red-team", "architecture": "red-team", "testing": "red-team"}),
			lenses: []string{"baseline", "red-team"}},
		// The default cap: the own run and the one lens that fits best.
		{name: "go.mod bump", before: files{"go.mod": gomod}, after: files{"go.mod": "module x\n\ngo 1.23\n"}, capN: 2,
			runs: with(all("baseline, premortem"), map[string]string{
				"architecture": "baseline, retrospective", "maintainability": "baseline, retrospective", "performance": "baseline, retrospective"}),
			lenses:  []string{"baseline", "premortem", "retrospective"},
			skipped: []string{"red-team: below", "premortem: over the perspective cap of 2 for maintainability and performance,", "retrospective: over the perspective cap of 2 for assumptions, release-manager and testing,"}},
		{name: "go.mod bump, cap 3", before: files{"go.mod": gomod}, after: files{"go.mod": "module x\n\ngo 1.23\n"}, capN: 3,
			runs: map[string]string{
				"architecture": "baseline, retrospective", "assumptions": "baseline, premortem, retrospective", "correctness": "baseline, premortem",
				"edge-cases": "baseline, premortem", "maintainability": "baseline, retrospective, premortem", "performance": "baseline, retrospective, premortem",
				"release-manager": "baseline, premortem, retrospective", "security": "baseline, premortem", "testing": "baseline, premortem, retrospective"},
			lenses: []string{"baseline", "premortem", "retrospective"}},
		// Temporal signals outweigh the weak trust signal: each specialist's
		// one run is its best temporal lens; red-team is over the cap for
		// the three it fits.
		{name: "dependency bump, cap 1", before: files{"go.mod": gomod}, after: bump, capN: 1,
			runs:    with(all("premortem"), map[string]string{"architecture": "retrospective", "maintainability": "retrospective", "performance": "retrospective"}),
			lenses:  []string{"premortem", "retrospective"},
			skipped: []string{"baseline: over the perspective cap of 1", "red-team: over the perspective cap of 1 for architecture, security and testing,"}},
		{name: "dependency bump, cap 3", before: files{"go.mod": gomod}, after: bump, capN: 3,
			runs: map[string]string{
				"architecture": "baseline, retrospective, red-team", "assumptions": "baseline, premortem, retrospective", "correctness": "baseline, premortem",
				"edge-cases": "baseline, premortem", "maintainability": "baseline, retrospective, premortem", "performance": "baseline, retrospective, premortem",
				"release-manager": "baseline, premortem, retrospective", "security": "baseline, premortem, red-team", "testing": "baseline, premortem, retrospective"},
			lenses:  []string{"baseline", "premortem", "retrospective", "red-team"},
			skipped: []string{"red-team: over the perspective cap of 3 for testing,"}},
		{name: "nothing qualifies", before: addOnly, after: addGuard, capN: 2, runs: all("baseline"), lenses: []string{"baseline"}},
		{name: "nothing qualifies, cap 1", before: addOnly, after: addGuard, capN: 1, runs: all("baseline"), lenses: []string{"baseline"}},
		{name: "design document", artifact: "# Plan\n\nWe will move the queue to a new cluster next quarter.\n", capN: 2,
			runs: with(all("baseline, premortem"), map[string]string{
				"architecture": "baseline, retrospective", "maintainability": "baseline, retrospective", "performance": "baseline, retrospective"}),
			lenses: []string{"baseline", "premortem", "retrospective"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := lensMaterial(t, tt.before, tt.after, tt.artifact)
			lp, warnings, err := planLenses(lib, "auto", tt.capN, specs, m, m.Analyze)
			if err != nil || len(warnings) > 0 {
				t.Fatalf("planLenses: %v %v", err, warnings)
			}
			if diff := cmp.Diff(tt.runs, runsOf(lp, specs)); diff != "" {
				t.Errorf("runs (-want +got):\n%s\nrationale: %s\nskipped: %q", diff, lp.rationale, lp.skipped)
			}
			if diff := cmp.Diff(tt.lenses, ids(lp.lenses)); diff != "" {
				t.Errorf("lenses (-want +got):\n%s", diff)
			}
			checkSkipped(t, lib, lp, tt.skipped)
			for _, want := range tt.rationale {
				if !strings.Contains(lp.rationale, want) {
					t.Errorf("rationale %q lacks %q", lp.rationale, want)
				}
			}
			// Nobody runs under a lens the fit table keeps from it, and
			// every specialist runs at least once and at most cap times.
			for _, s := range specs {
				runs := lp.runs(s.ID)
				if len(runs) == 0 || len(runs) > tt.capN {
					t.Errorf("%s runs %d times under a cap of %d", s.ID, len(runs), tt.capN)
				}
				for _, l := range runs {
					if l == nil || typeOf(l) == lensBaseline {
						continue
					}
					if fit, why := fitOf(l, s.ID); fit == fitsNot {
						t.Errorf("%s runs under %s, which is not for it: %s", s.ID, l.ID, why)
					}
				}
			}
			for _, l := range lp.lenses {
				if got := lp.specialistsUnder(l.ID, ids(specs)); len(got) == 0 {
					t.Errorf("lens %s is applied to nobody", l.ID)
				}
			}
		})
	}
}

// The fit table covers every built-in lens but the baseline with every
// built-in specialist, once, each row with a one-line reason.
func TestLensFitTable(t *testing.T) {
	lib, specs := builtins(t)
	seen := map[[2]string]int{}
	for _, f := range lensFits {
		seen[[2]string{f.lens, f.specialist}]++
		if f.why == "" || strings.ContainsAny(f.why, "\n") {
			t.Errorf("%s/%s: the reason must be one line: %q", f.lens, f.specialist, f.why)
		}
		if f.fit < fitsNot || f.fit > fitsBest {
			t.Errorf("%s/%s: fit %d", f.lens, f.specialist, f.fit)
		}
	}
	for _, l := range lib.List(persona.Lens) {
		if typeOf(l) == lensBaseline {
			continue
		}
		best := 0
		for _, s := range specs {
			k := [2]string{l.ID, s.ID}
			if seen[k] != 1 {
				t.Errorf("the fit table has %d rows for %s and %s, want 1", seen[k], l.ID, s.ID)
			}
			if fit, _ := fitOf(l, s.ID); fit == fitsBest {
				best++
			}
		}
		if best == 0 {
			t.Errorf("%s is the best lens of no specialist", l.ID)
		}
	}
	for k, n := range seen {
		if _, ok := lib.Get(persona.Lens, k[0]); !ok || n != 1 {
			t.Errorf("row %v: lens known %v, %d rows", k, ok, n)
		}
		if _, ok := lib.Get(persona.Specialist, k[1]); !ok {
			t.Errorf("row %v names no built-in specialist", k)
		}
	}
	// The cases issue 25 names.
	redTeam, _ := lib.Get(persona.Lens, "red-team")
	for _, s := range []string{"edge-cases", "correctness", "performance"} {
		if fit, _ := fitOf(redTeam, s); fit != fitsNot {
			t.Errorf("red-team fits %s; its domain has no adversary", s)
		}
	}
	if fit, _ := fitOf(redTeam, "security"); fit != fitsBest {
		t.Error("red-team must be security's best lens")
	}
}

// A lens the table does not name is read as the built-in lens of its type,
// and a specialist it does not name takes every lens the change calls for.
func TestAutoLensesCustom(t *testing.T) {
	root := t.TempDir()
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	abuse, err := persona.ReadSource("builtin:lenses/red-team.md")
	if err != nil {
		t.Fatal(err)
	}
	write(".sot/lenses/abuse.md", strings.NewReplacer("name: red-team", "name: abuse", "**Perspective**: red-team", "**Perspective**: abuse").Replace(string(abuse)))
	docs, err := persona.ReadSource("builtin:specialists/maintainability.md")
	if err != nil {
		t.Fatal(err)
	}
	write(".sot/personas/api-docs.md", strings.Replace(string(docs), "name: maintainability", "name: api-docs", 1))
	lib, err := persona.Discover(persona.Dirs{Project: root})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lib.Get(persona.Lens, "abuse"); !ok {
		t.Fatalf("the project's lens was not found: %v", lib.Problems)
	}
	var specs []*persona.Persona
	for _, id := range []string{"security", "edge-cases", "api-docs"} {
		s, ok := lib.Get(persona.Specialist, id)
		if !ok {
			t.Fatalf("no specialist %s: %v", id, lib.Problems)
		}
		specs = append(specs, s)
	}
	m := changeMaterial(t, nil, files{"api/lookup.go": handler})
	lp, _, err := planLenses(lib, "auto", 3, specs, m, m.Analyze)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"security": "baseline, abuse, red-team", "edge-cases": "baseline", "api-docs": "baseline, abuse, red-team"}
	if diff := cmp.Diff(want, runsOf(lp, specs)); diff != "" {
		t.Errorf("runs (-want +got):\n%s\n%s", diff, lp.rationale)
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
	if _, _, err := planLenses(lib, "nosuch, other", 2, nil, m, m.Analyze); !errors.Is(err, persona.ErrNoSuchPerspective) || !strings.Contains(err.Error(), "nosuch, other") {
		t.Errorf("a list of only unknown names: %v; want ErrNoSuchPerspective naming them", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lp, warnings, err := planLenses(lib, tt.spec, tt.capN, nil, m, m.Analyze)
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
	if _, _, err := planLenses(lib, "premortem,../x", 2, nil, m, m.Analyze); err == nil {
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

// A lens shapes a specialist's method within its own domain: no built-in
// overlay or novelty constraint tells a specialist to become someone else
// (issue 25: red-team told every specialist "switch sides: you are an
// adversary"), and each one that shifts the frame keeps the specialist in
// its domain and anchors findings in the material.
func TestLensOverlaysKeepTheDomain(t *testing.T) {
	lib, _ := builtins(t)
	banned := []string{"switch sides", "you are an adversary", "you are an attacker", "play the attacker"}
	for _, l := range lib.List(persona.Lens) {
		overlay, novelty := l.Section("Overlay Template"), l.Section("Novelty Constraint")
		text := strings.ToLower(overlay + "\n" + novelty)
		for _, b := range banned {
			if strings.Contains(text, b) {
				t.Errorf("%s orders the specialist out of its role: %q", l.ID, b)
			}
		}
		if o := strings.ToLower(overlay); !strings.Contains(o, "your own domain") && !strings.Contains(o, "your domain") {
			t.Errorf("%s: the overlay does not keep the specialist in its own domain:\n%s", l.ID, overlay)
		}
		if !strings.Contains(novelty, "cite") && !strings.Contains(novelty, "anchor") {
			t.Errorf("%s: the novelty constraint does not anchor findings in the material:\n%s", l.ID, novelty)
		}
	}
}

// Two runs that would write one REVIEW file are refused, among the runs a
// lens plan gives each specialist: security under red-team and
// security-red under team both make REVIEW-SECURITY-RED-TEAM.md; runs the
// plan does not make do not collide.
func TestCheckRunFiles(t *testing.T) {
	spec := func(id string) *persona.Persona { return &persona.Persona{ID: id, Kind: persona.Specialist} }
	lens := func(id string) *persona.Persona { return &persona.Persona{ID: id, Kind: persona.Lens} }
	sec, secRed := spec("security"), spec("security-red")
	redTeam, team := lens("red-team"), lens("team")
	clash := lensPlan{per: map[string][]*persona.Persona{"security": {nil, redTeam}, "security-red": {team}}}
	if err := checkRunFiles([]*persona.Persona{sec, secRed}, clash); err == nil || !strings.Contains(err.Error(), "REVIEW-SECURITY-RED-TEAM.md") {
		t.Errorf("err = %v; want the clash on REVIEW-SECURITY-RED-TEAM.md", err)
	}
	apart := lensPlan{per: map[string][]*persona.Persona{"security": {nil, redTeam}, "security-red": {nil}}}
	if err := checkRunFiles([]*persona.Persona{sec, secRed}, apart); err != nil {
		t.Errorf("err = %v; security-red never runs under team", err)
	}
	if err := checkReviewFiles([]*persona.Persona{sec, secRed}, []*persona.Persona{redTeam, team}); err == nil {
		t.Error("every specialist under every lens: the clash must be refused")
	}
}
