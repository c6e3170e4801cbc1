package material

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/internal/secrets"
)

// fakeToken returns a made-up token: prefix, then n characters drawn from
// alphabet by a generator seeded with seed, so that no literal token is
// written in the tests and every run sees the same one.
func fakeToken(prefix, alphabet string, n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	b := []byte(prefix)
	for range n {
		b = append(b, alphabet[r.IntN(len(alphabet))])
	}
	return string(b)
}

const tokenChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// Tokens of the five formats a review must never send, and a key the
// user's environment holds (registered, as sot registers the keys it
// loads).
var (
	testAWSKey    = fakeToken("AKIA", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16, 1)
	testAWSKey2   = fakeToken("AKIA", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16, 2)
	testGitHubPAT = fakeToken("ghp_", tokenChars, 36, 3)
	testSlackBot  = "xoxb-" + fakeToken("", "0123456789", 12, 4) + "-" + fakeToken("", "0123456789", 13, 5) + "-" + fakeToken("", tokenChars, 24, 6)
	testAnthropic = fakeToken("sk-ant-api03-", tokenChars+"-_", 48, 7)
	testOpenAI    = fakeToken("sk-proj-", tokenChars+"-_", 48, 8)
	testUserKey   = fakeToken("user-key-", tokenChars, 24, 9)
)

func init() { secrets.Register(testUserKey) }

// tokens names every token a test plants, for error messages.
func testTokens() map[string]string {
	return map[string]string{
		"aws": testAWSKey, "aws2": testAWSKey2, "github": testGitHubPAT, "slack": testSlackBot,
		"anthropic": testAnthropic, "openai": testOpenAI, "registered": testUserKey,
	}
}

// assertNoToken fails when text holds a planted token, or the part of one
// after its first four characters.
func assertNoToken(t *testing.T, where, text string) {
	t.Helper()
	for name, tok := range testTokens() {
		if strings.Contains(text, tok[4:]) {
			t.Errorf("%s: the %s token reached the material:\n%s", where, name, text)
		}
	}
}

// secretFile is a Go file with a key at line 12, or with a harmless value
// of the same length there when key is "".
func secretFile(key string) string {
	if key == "" {
		key = strings.Repeat("x", len(testAWSKey))
	}
	return lines("// line", 1, 10) + "\nconst awsKey = \"" + key + "\"\n" + lines("// more", 13, 20)
}

func TestDiffMasksSecrets(t *testing.T) {
	build := func(real bool) *Material {
		tok := func(s string) string {
			if real {
				return s
			}
			return strings.Repeat("y", len(s))
		}
		r := newRepo(t)
		r.write("cfg/keys.go", secretFile(""))
		r.write("deploy/app.env.sh", "export A=1\nexport B=2\n")
		r.commit("base")
		r.write("cfg/keys.go", secretFile(tok(testAWSKey)))
		r.write("deploy/app.env.sh", "export A=1\nexport ANTHROPIC_API_KEY="+tok(testAnthropic)+"\nexport OPENAI_API_KEY="+tok(testOpenAI)+"\n")
		r.write("notes.md", "# Notes\n\nThe bot uses "+tok(testSlackBot)+" and CI uses "+tok(testGitHubPAT)+".\nMy own key is "+tok(testUserKey)+".\n")
		return r.diff(DiffOptions{Untracked: true})
	}
	m, plain := build(true), build(false)
	assertNoToken(t, "diff", m.Text())
	if len(m.Files) != 3 || len(m.Skipped) != 0 {
		t.Fatalf("files %v, skipped %v", m.Paths(), m.Skipped)
	}
	f, _ := m.File("cfg/keys.go")
	if want := "  12 +| const awsKey = \"AKIA" + secrets.Marker + "aws-access-token]\""; !strings.Contains(f.Text, want+"\n") {
		t.Errorf("cfg/keys.go does not show the masked key at line 12 as %q:\n%s", want, f.Text)
	}
	for name, want := range map[string]string{
		"deploy/app.env.sh": "sk-a" + secrets.Marker + "anthropic-api-key]",
		"notes.md":          "ghp_" + secrets.Marker + "github-pat]",
	} {
		if f, _ := m.File(name); !strings.Contains(f.Text, want) {
			t.Errorf("%s does not hold %q:\n%s", name, want, f.Text)
		}
	}
	if f, _ := m.File("notes.md"); !strings.Contains(f.Text, "user"+secrets.Marker+secrets.KnownKind+"]") {
		t.Errorf("the registered key is not masked as one:\n%s", f.Text)
	}
	// Masking changes no line and no line number.
	for i, f := range m.Files {
		p := plain.Files[i]
		got, want := prefixes(f.Text), prefixes(p.Text)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: the lines' numbers and markers changed:\n%s\nwant\n%s", f.Path, f.Text, p.Text)
		}
		if !equalRanges(f.Changed, p.Changed) || !equalRanges(f.Shown, p.Shown) || f.Additions != p.Additions || f.Deletions != p.Deletions {
			t.Errorf("%s: ranges or counts changed: %+v against %+v", f.Path, f, p)
		}
	}
	// Masking is deterministic, so a run's id does not change.
	if again := build(true); again.Text() != m.Text() {
		t.Errorf("a second read masks differently:\n%s\n---\n%s", again.Text(), m.Text())
	}
}

// prefixes returns what precedes the content of each line of a rendered
// text: whole header and note lines, and the number column and marker of
// content lines.
func prefixes(text string) []string {
	var out []string
	for _, l := range splitLines(text) {
		if off := contentOffset(l); off >= 0 {
			l = l[:off]
		}
		out = append(out, l)
	}
	return out
}

func equalRanges(a, b []LineRange) bool { return slices.Equal(a, b) }

func TestDiffMasksRemovedAndRenamedSecrets(t *testing.T) {
	r := newRepo(t)
	r.write("old/keys.go", secretFile(testAWSKey))
	r.write("gone.txt", "token "+testGitHubPAT+"\n")
	r.commit("base")
	r.mv("old/keys.go", "cfg/keys.go")
	r.write("cfg/keys.go", strings.Replace(secretFile(testAWSKey), "// line 1\n", "// line one\n", 1))
	r.remove("gone.txt")
	m := r.diff(DiffOptions{})
	assertNoToken(t, "diff", m.Text())
	if !strings.Contains(m.Text(), "ghp_"+secrets.Marker+"github-pat]") {
		t.Errorf("the deleted file's token is not shown masked:\n%s", m.Text())
	}
}

func TestArtifactsAndFreeformMaskSecrets(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "docs", "setup.md"), "# Setup\n\nSet `AWS_ACCESS_KEY_ID="+testAWSKey+"`.\n")
	writeFile(t, filepath.Join(dir, "deploy", "secret.yaml"), "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: "+fakeToken("", tokenChars, 24, 10)+"=\n")
	t.Chdir(dir)
	m, err := Artifacts([]string{"docs", "deploy"})
	if err != nil {
		t.Fatal(err)
	}
	assertNoToken(t, "artifacts", m.Text())
	if !strings.Contains(m.Text(), "AKIA"+secrets.Marker+"aws-access-token]") || !strings.Contains(m.Text(), secrets.Marker+"kubernetes-secret-yaml]") {
		t.Errorf("secrets are not masked with their kind:\n%s", m.Text())
	}
	if strings.Count(m.Text(), "\n") != (1+6)+1+(1+3) {
		t.Errorf("the documents' lines changed:\n%s", m.Text())
	}

	m, err = Freeform("stdin", strings.NewReader("Here is my key: "+testOpenAI+"\nand "+testSlackBot+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	assertNoToken(t, "freeform", m.Text())
	want := "## stdin\n   1 | Here is my key: sk-p" + secrets.Marker + "openai-api-key]\n   2 | and xoxb" + secrets.Marker + "slack-bot-token]\n"
	if m.Text() != want {
		t.Errorf("freeform =\n%s\nwant\n%s", m.Text(), want)
	}
}

func TestMaskedRunsStayInContent(t *testing.T) {
	// A Kubernetes secret whose value is a block scalar: the secret spans
	// two lines, each line's part is masked, and the numbering and the
	// lines around it are kept.
	value := fakeToken("", tokenChars, 32, 12) + "=="
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "secret.yaml"), "kind: Secret\ndata:\n  password: |\n    "+value+"\nother: 1\n")
	t.Chdir(dir)
	m, err := Artifacts([]string{"secret.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	want := "## secret.yaml\n" +
		"   1 | kind: Secret\n" +
		"   2 | data:\n" +
		"   3 |   " + secrets.Marker + "kubernetes-secret-yaml]\n" +
		"   4 | " + secrets.Marker + "kubernetes-secret-yaml]\n" +
		"   5 | other: 1\n"
	if m.Text() != want {
		t.Errorf("Artifacts =\n%s\nwant\n%s", m.Text(), want)
	}
}

func BenchmarkMaskSecrets(b *testing.B) {
	r := newRepo(b)
	for i := range 50 {
		var sb strings.Builder
		for l := range 1000 {
			switch l % 25 {
			case 3:
				sb.WriteString("\tkey := cache.Key(req) // the access token is never logged\n")
			default:
				sb.WriteString("\tif err := step(ctx, input, l+1); err != nil { return fmt.Errorf(\"step: %w\", err) }\n")
			}
		}
		r.write(filepath.Join("pkg", "f"+string(rune('a'+i%26))+string(rune('a'+i/26))+".go"), sb.String())
	}
	out, err := runGit(context.Background(), r.dir, "status", "--porcelain")
	if err != nil || len(out) == 0 {
		b.Fatal("no changes", err)
	}
	for b.Loop() {
		if _, err := Diff(context.Background(), DiffOptions{Dir: r.dir, Untracked: true}); err != nil {
			b.Fatal(err)
		}
	}
}
