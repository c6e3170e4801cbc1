package material

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// partsMaterial is a diff whose files disagree in every way the parts of
// an analysis are merged: reasons of one category at different ranks in
// different files, prose hits spread over documents, lines removed in
// one file and added in another, renamed and deleted files, control flow
// added unevenly, and words repeated across files. With docs set every
// file is documentation, whose line rules count as prose.
func partsMaterial(seed uint64, docs bool) *Material {
	rng := rand.New(rand.NewPCG(seed, 1))
	lines := []string{
		"if token == \"\" { return errAuth }",
		"password := r.URL.Query().Get(\"pw\")",
		"os.WriteFile(path, data, 0o644)",
		"v := os.Getenv(\"HOME\")",
		"func Serve(w http.ResponseWriter, r *http.Request) {",
		"func (s *Server) Handle() {}",
		"type Session struct{ ID string }",
		"for _, s := range sessions { s.End() }",
		"router.HandleFunc(\"/login\", login)",
		"x := compute(y) // plain",
		"// a comment about the session cookie",
		"",
		"db.Exec(\"DELETE FROM users\")",
		"const Limit = 10",
	}
	prose := []string{
		"The server checks the password before it issues a token.",
		"Sessions end after an hour.",
		"Nothing here concerns security.",
		"The handler writes the file to disk.",
	}
	m := &Material{Type: TypeDiff}
	for i := range 24 {
		var b strings.Builder
		f := File{Status: StatusModified}
		kind := i % 6
		if docs {
			kind = 3
		}
		switch kind {
		case 0, 1, 2:
			f.Path = fmt.Sprintf("svc%d/h%02d.go", i%3, i)
		case 3:
			f.Path = fmt.Sprintf("docs/guide%02d.md", i)
		case 4:
			f.Path = fmt.Sprintf("svc%d/h%02d_test.go", i%3, i)
		case 5:
			f.Path = fmt.Sprintf("deploy/app%02d.yaml", i)
		}
		switch rng.IntN(8) {
		case 0:
			f.Status, f.OldPath = StatusRenamed, "old/"+f.Path
		case 1:
			f.Status = StatusDeleted
		}
		f.Language = Language(f.Path)
		fmt.Fprintf(&b, "## %s\n@@ hunk\n", f.Path)
		num := 1
		for range 5 + rng.IntN(30) {
			text := lines[rng.IntN(len(lines))]
			if strings.HasSuffix(f.Path, ".md") {
				text = prose[rng.IntN(len(prose))]
			}
			switch rng.IntN(3) {
			case 0:
				fmt.Fprintf(&b, "     -| %s\n", text)
				f.Deletions++
			case 1:
				fmt.Fprintf(&b, "%4d +| %s\n", num, text)
				f.Additions++
				num++
			default:
				fmt.Fprintf(&b, "%4d  | %s\n", num, text)
				num++
			}
		}
		f.Text = b.String()
		m.Files = append(m.Files, f)
	}
	m.Skipped = []Skipped{{Path: "assets/logo.png"}}
	return m
}

// Analysing the files in parts at once says what reading them in turn
// says, in every way they can be cut.
func TestAnalyzeInPartsIsAnalyzeInTurn(t *testing.T) {
	for seed := range uint64(40) {
		docs := seed%2 == 1
		m := partsMaterial(seed, docs)
		for _, keywords := range []bool{false, true} {
			want := m.analyzeIn(keywords, 1)
			if n := len(want.Categories); n < 5 && !docs || n < 1 {
				t.Fatalf("seed %d: the material has only the categories %v; the test means it to have many", seed, want.Categories)
			}
			for _, parts := range []int{2, 3, 5, len(m.Files)} {
				if diff := cmp.Diff(want, m.analyzeIn(keywords, parts)); diff != "" {
					t.Fatalf("seed %d, keywords %v, %d parts (-in turn +in parts):\n%s", seed, keywords, parts, diff)
				}
			}
		}
	}
}
