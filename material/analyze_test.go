package material

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAnalyze(t *testing.T) {
	type files map[string]string
	tests := []struct {
		name       string
		before     files
		after      files // "" deletes
		moves      [][2]string
		categories []string
		reasons    map[string]string // category -> substring of the reason
		dirs       []string
		keywords   []string
	}{
		{
			name:   "auth handler with tests",
			before: files{"auth/session.go": sessionV1},
			after: files{
				"auth/session.go":      sessionV2 + "\n// Revoke ends every session of a user.\nfunc Revoke(w http.ResponseWriter, r *http.Request) {\n\tfor _, s := range sessions(r) {\n\t\tif s.Active {\n\t\t\ts.End()\n\t\t}\n\t}\n}\n",
				"auth/session_test.go": "package auth\n\nimport \"testing\"\n\nfunc TestRevoke(t *testing.T) {\n\tif false {\n\t\tt.Fatal()\n\t}\n}\n",
			},
			categories: []string{"api-surface", "behaviour-change", "new-logic", "tests", "trust-boundary"},
			reasons: map[string]string{
				"trust-boundary": "trust-boundary: auth/session.go line 13 reads request parameters",
				"api-surface":    "auth/session.go line",
				"tests":          "tests: auth/session_test.go changed",
				"new-logic":      "most in auth/session.go",
			},
			dirs:     []string{"auth"},
			keywords: []string{"token", "revoke", "session", "sessions"},
		},
		{
			name:   "deployment and dependencies",
			before: files{"deploy/k8s.yaml": "replicas: 2\n", "go.mod": "module x\n\ngo 1.22\n", "go.sum": "a v1 h1:x\n", "main.go": "package main\n"},
			after: files{
				"deploy/k8s.yaml":          "replicas: 3\n",
				"go.mod":                   "module x\n\ngo 1.23\n",
				"go.sum":                   "a v1 h1:y\n",
				"Dockerfile":               "FROM golang:1.23\nRUN go build ./...\n",
				".github/workflows/ci.yml": "on: push\njobs: {}\n",
			},
			categories: []string{"config", "dependencies", "operational"},
			reasons: map[string]string{
				"config":       "config: .github/workflows/ci.yml changed",
				"dependencies": "dependencies: go.mod changed",
				"operational":  "operational: .github/workflows/ci.yml changed",
			},
			dirs: []string{".", ".github", "deploy"},
		},
		{
			name:       "documentation only",
			before:     files{"README.md": "# X\n"},
			after:      files{"README.md": "# X\n\nMore words about the tool.\n", "docs/guide.rst": "Guide\n=====\n"},
			categories: []string{"docs"},
			reasons:    map[string]string{"docs": "docs: only documentation changed (README.md)"},
			dirs:       []string{".", "docs"},
			keywords:   []string{"words", "tool", "guide"},
		},
		{
			// One passing mention in prose is no signal.
			name:       "documentation mentioning a token once",
			before:     files{"README.md": "# X\n"},
			after:      files{"README.md": "# X\n\nSet the token and the config path before you start.\n"},
			categories: []string{"docs"},
			dirs:       []string{"."},
			keywords:   []string{"token", "config"},
		},
		{
			name:       "documentation about sessions",
			before:     files{"docs/auth.md": "# Auth\n"},
			after:      files{"docs/auth.md": "# Auth\n\nThe session cookie is renewed on every request.\nA stolen session token can be revoked.\n"},
			categories: []string{"docs", "trust-boundary"},
			reasons:    map[string]string{"trust-boundary": "docs/auth.md line 3 mentions session (and 1 more line(s) of documentation)"},
			dirs:       []string{"docs"},
		},
		{
			name:       "requirements are dependencies, not documentation",
			before:     files{"requirements.txt": "flask==2.0\n"},
			after:      files{"requirements.txt": "flask==2.1\n"},
			categories: []string{"dependencies"},
			reasons:    map[string]string{"dependencies": "dependencies: requirements.txt changed"},
			dirs:       []string{"."},
		},
		{
			name:       "rename refactor",
			before:     files{"pkg/util.go": "package pkg\n\nfunc helper(x int) int {\n\treturn x * 2\n}\n\n" + lines("// other", 1, 10)},
			after:      files{"pkg/helpers.go": "package pkg\n\nfunc helper(y int) int {\n\treturn y * 2\n}\n\n" + lines("// other", 1, 10)},
			moves:      [][2]string{{"pkg/util.go", "pkg/helpers.go"}},
			categories: []string{"behaviour-change", "refactor"},
			reasons:    map[string]string{"refactor": "refactor: pkg/helpers.go renamed from pkg/util.go"},
			dirs:       []string{"pkg"},
		},
		{
			name: "moved code",
			before: files{
				"a.go": "package p\n\nfunc one() int {\n\tx := compute()\n\ty := transform(x)\n\treturn y\n}\n",
				"b.go": "package p\n",
			},
			after: files{
				"a.go": "package p\n",
				"b.go": "package p\n\nfunc one() int {\n\tx := compute()\n\ty := transform(x)\n\treturn y\n}\n",
			},
			categories: []string{"behaviour-change", "refactor"},
			reasons:    map[string]string{"refactor": "5 of 5 added code lines move existing lines (e.g. into b.go)"},
			dirs:       []string{"."},
		},
		{
			// No control flow, no route, no SQL: still a code change, and it
			// reads the environment and writes a file.
			name:       "environment and file writes",
			before:     files{"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n"},
			after:      files{"main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() {\n\tname := os.Getenv(\"NAME\")\n\tfmt.Println(\"hi \" + name)\n\tos.WriteFile(\"/tmp/x\", []byte(name), 0644)\n}\n"},
			categories: []string{"behaviour-change", "data-handling"},
			reasons: map[string]string{
				"behaviour-change": "changed line(s) of code (most in main.go)",
				"data-handling":    "main.go line 9 reads or writes files or the environment",
			},
			dirs: []string{"."},
		},
		{
			name:   "deleted file and migration",
			before: files{"legacy/old.go": "package legacy\n\nfunc Old() {}\n"},
			after:  files{"legacy/old.go": "", "db/migrations/002_users.sql": "CREATE TABLE users (\n  id INTEGER PRIMARY KEY,\n  password_hash TEXT NOT NULL\n);\n"},
			// Removing an exported function changes the API.
			categories: []string{"api-surface", "behaviour-change", "data-handling", "deletion", "operational", "trust-boundary"},
			reasons: map[string]string{
				"deletion":       "deletion: legacy/old.go deleted",
				"api-surface":    "legacy/old.go (removed line)",
				"data-handling":  "db/migrations/002_users.sql changed",
				"trust-boundary": "db/migrations/002_users.sql line 3 mentions password",
			},
			dirs: []string{"db", "legacy"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRepo(t)
			r.write(".keep", "")
			for p, c := range tt.before {
				r.write(p, c)
			}
			r.commit("base")
			for _, mv := range tt.moves {
				r.mv(mv[0], mv[1])
			}
			for p, c := range tt.after {
				if c == "" {
					r.remove(p)
				} else {
					r.write(p, c)
				}
			}
			r.git("add", "-A")
			m := r.diff(DiffOptions{})
			s := m.Analyze()
			if diff := cmp.Diff(tt.categories, s.Categories); diff != "" {
				t.Errorf("categories (-want +got):\n%s\nreasons: %v", diff, s.Reasons)
			}
			for c, want := range tt.reasons {
				if !strings.Contains(s.Reasons[c], want) {
					t.Errorf("reason of %s = %q, want it to contain %q", c, s.Reasons[c], want)
				}
			}
			if len(s.Reasons) != len(s.Categories) {
				t.Errorf("reasons %v for categories %v", s.Reasons, s.Categories)
			}
			if diff := cmp.Diff(tt.dirs, s.Dirs); diff != "" {
				t.Errorf("dirs (-want +got):\n%s", diff)
			}
			for _, k := range tt.keywords {
				if s.Keywords[k] == 0 {
					t.Errorf("keyword %q missing from %v", k, s.Keywords)
				}
			}
			if s.Files != len(m.Files)+len(m.Skipped) {
				t.Errorf("Files = %d", s.Files)
			}
			// Deterministic: the same material gives the same signals.
			if diff := cmp.Diff(s, m.Analyze()); diff != "" {
				t.Errorf("second Analyze differs:\n%s", diff)
			}
		})
	}
}

func TestAnalyzeCounts(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n")
	r.write("a_test.go", "package a\n")
	r.write("web/app.ts", "export const a = 1\n")
	r.commit("base")
	r.write("a.go", "package a\n\nvar A = 1\n")
	r.write("a_test.go", "package a\n\nvar T = 1\n")
	r.write("web/app.ts", "export const a = 2\n")
	s := r.diff(DiffOptions{}).Analyze()
	want := Signals{
		Languages:        map[string]int{"go": 2, "typescript": 1},
		Dirs:             []string{".", "web"},
		Files:            3,
		Additions:        5,
		Deletions:        1,
		TestFilesChanged: 1,
		CodeFilesChanged: 2,
	}
	got := s
	got.Categories, got.Reasons, got.Keywords, got.Evidence = nil, nil, nil, nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	wantEvidence := map[string]map[string]float64{"api-surface": {"a.go": 1, "web/app.ts": 1}, "behaviour-change": {"a.go": 0.5, "web/app.ts": 0.5}, "tests": {"a_test.go": 1}}
	if diff := cmp.Diff(wantEvidence, s.Evidence); diff != "" {
		t.Errorf("evidence (-want +got):\n%s", diff)
	}
	if !s.Has(CategoryAPISurface) || !s.Has(CategoryTests) || s.Has(CategoryDocs) {
		t.Errorf("categories %v", s.Categories)
	}
}

func TestAnalyzeArtifacts(t *testing.T) {
	m, err := Freeform("design.md", strings.NewReader("# Login flow\n\nThe server issues a JWT after the password check.\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := m.Analyze()
	if diff := cmp.Diff([]string{"docs", "trust-boundary"}, s.Categories); diff != "" {
		t.Errorf("categories (-want +got):\n%s", diff)
	}
	if s.Keywords["jwt"] != 1 || s.Keywords["login"] != 1 || s.Keywords["the"] != 0 {
		t.Errorf("keywords %v", s.Keywords)
	}
}

func TestKeywordsCapped(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 500; i++ {
		b.WriteString("word" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26)) + "\n")
	}
	m, err := Freeform("stdin", strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.Analyze().Keywords); n != maxKeywords {
		t.Errorf("%d keywords", n)
	}
}

func TestSplitIdentifier(t *testing.T) {
	for in, want := range map[string][]string{
		"parseHTTPRequest": {"parse", "http", "request"},
		"refresh_token":    {"refresh", "token"},
		"JWTToken":         {"jwt", "token"},
		"oauth2Client":     {"oauth2", "client"},
		"plain":            {"plain"},
	} {
		if diff := cmp.Diff(want, splitIdentifier(in)); diff != "" {
			t.Errorf("splitIdentifier(%q) (-want +got):\n%s", in, diff)
		}
	}
}

func TestStrength(t *testing.T) {
	r := newRepo(t)
	r.write("go.mod", "module x\n\ngo 1.22\n")
	r.write("main.go", "package main\n")
	r.commit("base")
	r.write("go.mod", "module x\n\ngo 1.23\n\nrequire golang.org/x/crypto v0.17.0\n")
	r.write("Dockerfile", "FROM golang:1.23\nRUN go build ./...\n")
	s := r.diff(DiffOptions{Untracked: true}).Analyze()
	tests := []struct {
		cats []string
		want float64
	}{
		// go.mod only mentions crypto: a weak trust signal.
		{[]string{CategoryTrustBoundary}, 0.5},
		{[]string{CategoryTrustBoundary, CategoryAPISurface, CategoryDataHandling}, 0.5},
		// The Dockerfile is config and operational, but counts once.
		{[]string{CategoryConfig, CategoryOperational}, 1},
		{[]string{CategoryOperational, CategoryDependencies, CategoryConfig, CategoryDataHandling, CategoryDeletion}, 2},
		{[]string{CategoryTests}, 0},
		{nil, 0},
	}
	for _, tt := range tests {
		if got := s.Strength(tt.cats...); got != tt.want {
			t.Errorf("Strength(%v) = %v, want %v (evidence %v)", tt.cats, got, tt.want, s.Evidence)
		}
	}
}
