package persona

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree writes files under root; keys are slash paths.
func tree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func specialistFile(context, marker string) string {
	fm := ""
	if context != "-" {
		fm = "---\ncontext: " + context + "\n---\n"
	}
	return fm + "# " + marker + "\n\n## Identity & Narrative Backstory\n" + marker + "\n\n## Cognitive Strategy\n1. Look.\n"
}

func discoverIn(t *testing.T, files map[string]string) (*Library, Dirs) {
	t.Helper()
	root := t.TempDir()
	tree(t, root, files)
	d := Dirs{Project: filepath.Join(root, "repo"), User: filepath.Join(root, "xdg", "sot"), Home: filepath.Join(root, "home")}
	lib, err := Discover(d)
	if err != nil {
		t.Fatal(err)
	}
	return lib, d
}

func TestPrecedence(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		id        string
		wantTitle string
		wantLevel Level
	}{
		{"built-in when nothing overrides", nil, "security", "Security Specialist", LevelBuiltin},
		{"~/.paw beats built-in", map[string]string{"home/.paw/personas/security.md": specialistFile("implementation", "paw-user")}, "security", "paw-user", LevelUser},
		{"xdg beats ~/.paw", map[string]string{
			"home/.paw/personas/security.md": specialistFile("implementation", "paw-user"),
			"xdg/sot/personas/security.md":   specialistFile("implementation", "xdg-user")}, "security", "xdg-user", LevelUser},
		{"project .paw beats user", map[string]string{
			"xdg/sot/personas/security.md":   specialistFile("implementation", "xdg-user"),
			"repo/.paw/personas/security.md": specialistFile("implementation", "paw-project")}, "security", "paw-project", LevelProject},
		{"project .sot beats project .paw", map[string]string{
			"repo/.paw/personas/security.md": specialistFile("implementation", "paw-project"),
			"repo/.sot/personas/security.md": specialistFile("implementation", "sot-project")}, "security", "sot-project", LevelProject},
		{"new names add to the roster", map[string]string{"repo/.sot/personas/billing.md": specialistFile("business", "billing")}, "billing", "billing", LevelProject},
		{"file names are case-insensitive", map[string]string{"repo/.sot/personas/Security.md": specialistFile("-", "upper")}, "security", "upper", LevelProject},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib, _ := discoverIn(t, tt.files)
			p, ok := lib.Get(Specialist, tt.id)
			if !ok {
				t.Fatalf("%s not found", tt.id)
			}
			if p.Title != tt.wantTitle || p.Level != tt.wantLevel {
				t.Errorf("winner = %q at %s, want %q at %s", p.Title, p.Level, tt.wantTitle, tt.wantLevel)
			}
			if chain := lib.Chain(Specialist, tt.id); chain[0] != p || chain[len(chain)-1].Level != LevelBuiltin && tt.id == "security" {
				t.Errorf("chain should start with the winner and end with the built-in: %v", chain)
			}
		})
	}
}

func TestLensDiscoveryAndPAWPerspectives(t *testing.T) {
	lens := "# Perf budget\n\n## Lens Type\ntemporal\n\n## Parameters\n- **Temporal frame**: a year on\n\n## Overlay Template\nAs the {specialist} specialist, " + strings.Repeat("imagine the load has grown tenfold ", 8) + "and mark findings **Perspective**: growth.\n\n## Novelty Constraint\nOnly growth-specific findings.\n"
	lib, _ := discoverIn(t, map[string]string{
		"repo/.paw/perspectives/growth.md": lens,
		"repo/.sot/lenses/premortem.md":    strings.Replace(lens, "growth", "premortem", -1),
	})
	if p, ok := lib.Get(Lens, "growth"); !ok || p.Level != LevelProject {
		t.Errorf("a PAW perspective without frontmatter should load as a lens")
	}
	if p, _ := lib.Get(Lens, "premortem"); p.Level != LevelProject {
		t.Errorf("a project lens should override the built-in premortem")
	}
}

func TestMalformedFilesAreSkippedWithAWarning(t *testing.T) {
	tests := []struct {
		name, file, body, want string
	}{
		{"empty", "repo/.sot/personas/empty.md", "", "empty.md:1: skipped: file is empty"},
		{"bad YAML has line and column", "repo/.sot/personas/bad.md", "---\ncontext: implementation\nmodel: [unclosed\n---\n# x\n", "bad.md:3:"},
		{"unterminated frontmatter", "repo/.sot/personas/open.md", "---\ncontext: x\n# body", "open.md:1: skipped: frontmatter starts with --- but never ends"},
		{"context list", "repo/.sot/personas/multi.md", "---\ncontext: [a, b]\n---\n" + specialistFile("-", "m"), "context must be a single value"},
		{"comma context", "repo/.sot/personas/comma.md", specialistFile("business, implementation", "c"), "lists several values"},
		{"no method", "repo/.sot/personas/thin.md", "# Thin\n\nJust a paragraph.\n", "section \"## Identity & Narrative Backstory\" is missing"},
		{"binary", "repo/.sot/personas/bin.md", "\x00\x01\x02junk", "is it binary"},
		{"not UTF-8", "repo/.sot/personas/latin1.md", "# caf\xe9\n\n## Identity & Narrative Backstory\nx\n", "not UTF-8 text"},
		{"lens without placeholder", "repo/.sot/lenses/flat.md", "## Lens Type\nbaseline\n\n## Overlay Template\nJust review it.\n", "must contain the placeholder {specialist}"},
		{"unknown kind", "repo/.sot/personas/odd.md", "---\nkind: wizard\n---\n# x\n", "unknown kind \"wizard\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib, _ := discoverIn(t, map[string]string{tt.file: tt.body})
			id := IDFromFile(tt.file)
			if _, ok := lib.Find(id); ok {
				t.Errorf("%s should have been skipped", id)
			}
			var msgs []string
			for _, p := range lib.Problems {
				msgs = append(msgs, p.Error())
			}
			if !strings.Contains(strings.Join(msgs, "\n"), tt.want) {
				t.Errorf("warnings %q do not mention %q", msgs, tt.want)
			}
			if len(lib.List(Specialist)) < 9 {
				t.Errorf("the rest of the roster should survive a bad file")
			}
		})
	}
}

func TestParseSelection(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{"", "all", ""},
		{"ALL", "all", ""},
		{"adaptive:3", "adaptive:3", ""},
		{"adaptive:0", "", "positive count"},
		{"adaptive:x", "", "positive count"},
		{"security, Performance,security", "security,performance", ""},
		{"./team/billing.md", "./team/billing.md", ""},
		{"../../etc/x", "../../etc/x", ""}, // a path: it is read, never written
		{"sec urity", "", "is not a persona name"},
		{" , ", "", "names nobody"},
	}
	for _, tt := range tests {
		got, err := ParseSelection(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseSelection(%q) err = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("ParseSelection(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestContextFiltering(t *testing.T) {
	files := map[string]string{
		"repo/.sot/personas/pricing.md":  specialistFile("Business", "pricing"),
		"repo/.sot/personas/legal.md":    specialistFile("business", "legal"),
		"repo/.sot/personas/blankctx.md": specialistFile("\"  \"", "blank"),
	}
	proceed := func(string, []string) (string, error) { return ChoiceProceedAll, nil }
	abort := func(string, []string) (string, error) { return ChoiceAbort, nil }
	other := func(q string, choices []string) (string, error) {
		if choices == nil {
			return "business", nil
		}
		return ChoiceOtherContext, nil
	}
	tests := []struct {
		name        string
		opts        ResolveOptions
		wantIDs     string // comma list, or "ALL" for the whole pool
		wantContext string
		wantErr     error
		wantWarn    string
	}{
		{"diff defaults to implementation", ResolveOptions{Type: "diff", Interactive: "smart"}, "architecture,assumptions,blankctx,correctness,edge-cases,maintainability,performance,release-manager,security,testing", "implementation", nil, ""},
		{"artifacts defaults to implementation", ResolveOptions{Type: "artifacts"}, "architecture,assumptions,blankctx,correctness,edge-cases,maintainability,performance,release-manager,security,testing", "implementation", nil, ""},
		{"freeform does not filter", ResolveOptions{Type: "freeform"}, "ALL", "none", nil, ""},
		{"case-insensitive match", ResolveOptions{Type: "diff", Context: "BUSINESS"}, "legal,pricing", "business", nil, ""},
		{"explicit list skips filtering", ResolveOptions{Type: "diff", Context: "business", Selection: Selection{Names: []string{"security", "pricing"}}}, "security,pricing", "none", nil, ""},
		{"zero match, interactive false: all, with a warning", ResolveOptions{Type: "diff", Context: "legal", Interactive: "false"}, "ALL", "none", nil, "no specialist declares context \"legal\""},
		{"zero match, true: proceed", ResolveOptions{Type: "diff", Context: "legal", Interactive: "true", Ask: proceed}, "ALL", "none", nil, ""},
		{"zero match, smart: abort", ResolveOptions{Type: "diff", Context: "legal", Interactive: "smart", Ask: abort}, "", "", ErrAborted, ""},
		{"zero match, smart: other context", ResolveOptions{Type: "diff", Context: "legal", Interactive: "smart", Ask: other}, "legal,pricing", "business", nil, ""},
		{"zero match, no terminal", ResolveOptions{Type: "diff", Context: "legal", Interactive: "smart"}, "", "", ErrNeedsDecision, ""},
		{"unknown names skipped", ResolveOptions{Selection: Selection{Names: []string{"security", "wizardry"}}}, "security", "none", nil, "unknown specialist \"wizardry\" skipped"},
		{"no known names: an error, not a paid fallback", ResolveOptions{Selection: Selection{Names: []string{"wizardry"}}}, "", "", ErrNoSuchSpecialist, `wizardry (unknown specialist "wizardry" skipped`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib, _ := discoverIn(t, files)
			r, err := lib.ResolveSpecialists(tt.opts)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantWarn) {
					t.Errorf("err = %q, want it to say %q", err, tt.wantWarn)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tt.wantIDs
			if want == "ALL" {
				want = strings.Join(ids(lib.List(Specialist)), ",")
			}
			if got := strings.Join(ids(r.Specialists), ","); got != want {
				t.Errorf("roster = %s, want %s", got, want)
			}
			if r.Context != tt.wantContext {
				t.Errorf("context = %q, want %q", r.Context, tt.wantContext)
			}
			if tt.wantWarn != "" && !strings.Contains(strings.Join(r.Warnings, "\n"), tt.wantWarn) {
				t.Errorf("warnings %q lack %q", r.Warnings, tt.wantWarn)
			}
		})
	}
}

func TestExplicitFileWins(t *testing.T) {
	lib, d := discoverIn(t, map[string]string{"repo/team/security.md": specialistFile("implementation", "explicit")})
	r, err := lib.ResolveSpecialists(ResolveOptions{Selection: Selection{Names: []string{filepath.Join(d.Project, "team", "security.md")}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Specialists) != 1 || r.Specialists[0].Title != "explicit" || r.Specialists[0].Level != LevelExplicit {
		t.Fatalf("explicit file not used: %+v", r.Specialists)
	}
	if p, _ := lib.Get(Specialist, "security"); p.Level != LevelExplicit {
		t.Error("an explicit file should win over the built-in of the same name")
	}
}

func TestResolveLenses(t *testing.T) {
	lib := builtinLibrary(t)
	tests := []struct {
		spec     string
		want     string
		auto     bool
		wantWarn bool
	}{
		{"none", "", false, false},
		{"auto", "baseline,premortem,red-team,retrospective", true, false},
		{"", "baseline,premortem,red-team,retrospective", true, false},
		{"premortem, red-team", "premortem,red-team", false, false},
		{"premortem,hindsight", "premortem", false, true},
	}
	for _, tt := range tests {
		got, auto, warns, err := lib.ResolveLenses(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(ids(got), ",") != tt.want || auto != tt.auto || (len(warns) > 0) != tt.wantWarn {
			t.Errorf("ResolveLenses(%q) = %v auto=%v warns=%v", tt.spec, ids(got), auto, warns)
		}
	}
}

// A persona's name reaches file names; no name may steer a path.
func TestNamesCannotSteerOutputPaths(t *testing.T) {
	dir := t.TempDir()
	bad := []string{"../../etc/x", "..", "a/b", `a\b`, "x\x00y", "Security", "sp ace", ".hidden", "-flag", strings.Repeat("a", 65), "名前"}
	for _, n := range bad {
		if _, err := ReviewFile(dir, n, ""); err == nil {
			t.Errorf("ReviewFile accepted specialist %q", n)
		}
		if _, err := ReviewFile(dir, "security", n); err == nil {
			t.Errorf("ReviewFile accepted lens %q", n)
		}
	}
	got, err := ReviewFile(dir, "edge-cases", "red-team")
	if err != nil || got != filepath.Join(dir, "REVIEW-EDGE-CASES-RED-TEAM.md") {
		t.Errorf("ReviewFile = %q, %v", got, err)
	}
	// A file whose name is not a valid persona name is skipped at discovery.
	lib, _ := discoverIn(t, map[string]string{"repo/.sot/personas/sp ace.md": specialistFile("implementation", "odd")})
	if _, ok := lib.Find("sp ace"); ok {
		t.Error("a persona file with spaces in its name was loaded")
	}
}

// A project persona that is a link out of the project (to a file of the
// user's, say ~/notes/secret.md) is not read: its text would go into every
// prompt. A link that stays inside the project is read as usual.
func TestProjectPersonaLinkOutside(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{
		"outside/private.md":       specialistFile("implementation", "private-notes"),
		"repo/shared/inside.md":    specialistFile("implementation", "inside-marker"),
		"repo/.sot/personas/x.txt": "",
	})
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(root, "repo", ".sot", "personas", name)); err != nil {
			t.Fatal(err)
		}
	}
	link(filepath.Join(root, "outside", "private.md"), "leak.md")
	link(filepath.Join("..", "..", "shared", "inside.md"), "inside.md")
	lib, err := Discover(Dirs{Project: filepath.Join(root, "repo")})
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := lib.Get(Specialist, "leak"); ok {
		t.Fatalf("a link out of the project was read: %s", p.Title)
	}
	found := false
	for _, pr := range lib.Problems {
		found = found || strings.Contains(pr.Error(), "leak.md") && strings.Contains(pr.Error(), "outside the project")
	}
	if !found {
		t.Errorf("no warning names the skipped link: %v", lib.Problems)
	}
	if p, ok := lib.Get(Specialist, "inside"); !ok || p.Title != "inside-marker" {
		t.Errorf("a link inside the project was not read: %v", p)
	}
}
