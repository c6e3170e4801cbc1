package secrets

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/internal/keywords"
)

// fake returns a made-up token: prefix, then n characters drawn from
// alphabet by a generator seeded with the prefix, so that tests name no
// literal token and every run sees the same one.
func fake(prefix, alphabet string, n int) string {
	var seed uint64
	for i := 0; i < len(prefix); i++ {
		seed = seed*131 + uint64(prefix[i])
	}
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	b := []byte(prefix)
	for range n {
		b = append(b, alphabet[r.IntN(len(alphabet))])
	}
	return string(b)
}

const (
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lower  = "abcdefghijklmnopqrstuvwxyz"
	digits = "0123456789"
	alnum  = upper + lower + digits
)

// Tokens of the five formats the issue names, and an OpenAI key of the
// shape gitleaks' own rule knows.
var (
	awsKey       = fake("AKIA", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
	githubPAT    = fake("ghp_", alnum, 36)
	slackBot     = "xoxb-" + fake("", digits, 12) + "-" + fake("1", digits, 12) + "-" + fake("x", alnum, 24)
	anthropicKey = fake("sk-ant-api03-", alnum+"_-", 40)
	openAIKey    = fake("sk-proj-", alnum+"_-", 48)
	openAIMarked = fake("sk-proj-", alnum, 58) + "T3BlbkFJ" + fake("x", alnum, 58)
)

func TestFindKnownFormats(t *testing.T) {
	for _, tt := range []struct {
		name, text, secret, kind string
	}{
		{"aws", `aws_access_key_id = "` + awsKey + `"`, awsKey, "aws-access-token"},
		{"github", "token: " + githubPAT, githubPAT, "github-pat"},
		{"slack", "SLACK=" + slackBot + "\n", slackBot, "slack-bot-token"},
		{"anthropic", "const k = '" + anthropicKey + "';", anthropicKey, "anthropic-api-key"},
		{"openai", "export OPENAI_API_KEY=" + openAIKey, openAIKey, "openai-api-key"},
		{"openai marked", "key " + openAIMarked + " ", openAIMarked, "openai-api-key"},
		{"generic", `db_password = "Xk2pQ9vLm4Wz7Rt5"`, "Xk2pQ9vLm4Wz7Rt5", "generic-api-key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spans := Find(tt.text, "")
			if len(spans) != 1 {
				t.Fatalf("Find(%q) = %+v, want one secret", tt.text, spans)
			}
			s := spans[0]
			if got := tt.text[s.Start:s.End]; got != tt.secret || s.Kind != tt.kind {
				t.Errorf("found %q as %s, want %q as %s", got, s.Kind, tt.secret, tt.kind)
			}
			masked := Mask(tt.text)
			want := strings.Replace(tt.text, tt.secret, tt.secret[:4]+Marker+tt.kind+"]", 1)
			if masked != want {
				t.Errorf("Mask = %q, want %q", masked, want)
			}
			if strings.Contains(masked, tt.secret[4:]) {
				t.Errorf("the mask %q still holds the secret's remainder", masked)
			}
		})
	}
}

func TestNothingToFind(t *testing.T) {
	for _, text := range []string{
		"func token() string { return cfg.APIKey }",
		`key := "name"`,
		`password = os.Getenv("DB_PASSWORD")`,
		"AKIAIOSFODNN7EXAMPLE is the access key id AWS documents",
		"a sk- prefix alone, or sk-short",
		"The secret lies in the keyword index: " + Marker + "aws-access-token]",
		"",
	} {
		if spans := Find(text, ""); len(spans) != 0 {
			t.Errorf("Find(%q) = %+v, want nothing", text, spans)
		}
	}
}

func TestRegistered(t *testing.T) {
	key := "my-own-" + fake("", lower, 10)
	Register("  " + key + "\n")
	Register("short")
	text := "first " + key + "\nsecond " + key + " and short"
	want := "first my-o" + Marker + KnownKind + "]\nsecond my-o" + Marker + KnownKind + "] and short"
	if got := Mask(text); got != want {
		t.Errorf("Mask = %q, want %q", got, want)
	}
}

func TestMaskKeepsLines(t *testing.T) {
	key := "-----BEGIN RSA PRIVATE KEY-----\n" + fake("MIIE", alnum+"+/", 64) + "\n" + fake("a", alnum+"+/", 64) + "\n-----END RSA PRIVATE KEY-----"
	text := "before\nkey: |\n" + key + "\nafter " + githubPAT + "\n"
	got := Mask(text)
	if strings.Count(got, "\n") != strings.Count(text, "\n") {
		t.Fatalf("line breaks changed:\n%s", got)
	}
	lines := strings.Split(got, "\n")
	want := []string{
		"before",
		"key: |",
		"----" + Marker + "private-key]",
		Marker + "private-key]",
		Marker + "private-key]",
		Marker + "private-key]",
		"after ghp_" + Marker + "github-pat]",
		"",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("Mask =\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	if again := Mask(got); again != got {
		t.Errorf("masking twice changed the text:\n%s", again)
	}
}

func TestShortSecretShowsNothing(t *testing.T) {
	if got := replacement("abc123XYZ", "generic-api-key"); got != Marker+"generic-api-key]" {
		t.Errorf("replacement = %q", got)
	}
	if got := replacement("ünïcödé-sëcrët-válue", "x"); got != "ünïc"+Marker+"x]" {
		t.Errorf("replacement = %q, want the first four characters", got)
	}
}

func TestPathRules(t *testing.T) {
	text := `password = "s3cr3tpass"` + "\n"
	if spans := Find(text, "main.tf"); len(spans) != 1 || spans[0].Kind != "hashicorp-tf-password" {
		t.Errorf("in a Terraform file: %+v", spans)
	}
	for _, p := range []string{"main.go", ""} {
		for _, s := range Find(text, p) {
			if s.Kind == "hashicorp-tf-password" && p != "" {
				t.Errorf("%s: the Terraform rule applied outside Terraform files", p)
			}
		}
	}
}

func TestEveryRuleCompiles(t *testing.T) {
	rs := rules()
	if len(rs.rules) < 200 {
		t.Errorf("%d rules loaded; gitleaks.json should hold about 220", len(rs.rules))
	}
	for _, r := range rs.rules {
		if !r.compile() {
			t.Errorf("rule %s does not compile", r.ID)
		}
	}
}

func TestMergeOverlaps(t *testing.T) {
	got := merge([]Span{{5, 9, "generic-api-key"}, {0, 4, "generic-password"}, {3, 6, "github-pat"}, {20, 30, KnownKind}, {22, 25, "b"}})
	want := []Span{{0, 9, "github-pat"}, {20, 30, KnownKind}}
	if len(got) != len(want) {
		t.Fatalf("merge = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("merge = %+v, want %+v", got, want)
		}
	}
}

func BenchmarkMask(b *testing.B) {
	var sb strings.Builder
	for i := range 50000 {
		switch i % 50 {
		case 7:
			sb.WriteString(`	token := cfg.Get("api_token") // the access key of the service` + "\n")
		case 13:
			sb.WriteString(`	password = "` + fake(string(rune('a'+i%26)), alnum, 16) + `"` + "\n")
		default:
			sb.WriteString("	if err := doSomething(ctx, input, i+1); err != nil { return fmt.Errorf(\"step %d: %w\", i, err) }\n")
		}
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Mask(text)
	}
}

// BenchmarkKeywordScan: the pass over a text that finds where the rules'
// keywords occur (BenchmarkMask's 50,000 lines of code), which every text
// masked goes through: go test ./internal/secrets -run '^$' -bench
// KeywordScan.
func BenchmarkKeywordScan(b *testing.B) {
	var sb strings.Builder
	for range 2000 {
		sb.WriteString("	if err := doSomething(ctx, input, i+1); err != nil { return fmt.Errorf(\"step %d: %w\", i, err) }\n")
		sb.WriteString(`	Token := cfg.Get("API_TOKEN") // the access key of the service` + "\n")
	}
	text := sb.String()
	x := rules().index
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		x.Scan(text)
	}
}

// wholeText finds what detect finds, the slow way: every rule whose
// keywords occur runs over the whole text.
func wholeText(text, path string) []Span {
	rs := rules()
	found := rs.index.Scan(text)
	var spans []Span
	for i, r := range rs.rules {
		hit := len(rs.ruleKeywords[i]) == 0
		for _, k := range rs.ruleKeywords[i] {
			hit = hit || len(found.Of(k)) > 0
		}
		if hit && r.compile() && (r.path == nil || r.path.MatchString(path)) {
			spans = r.find(spans, text, 0, len(text), rs.global)
		}
	}
	return merge(spans)
}

func TestSearchNearKeywordsFindsWhatWholeTextFinds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	templates := []func() string{
		func() string { return "\tif err := step(ctx, input); err != nil { return err }" },
		func() string { return "\tkey := cache.Key(req) // the access token is never logged" },
		func() string { return `	password = "` + fake(string(rune('a'+r.IntN(26))), alnum, 12+r.IntN(12)) + `"` },
		func() string { return "api_key =" },
		func() string { return `    "` + fake("q", alnum, 20) + `"` },
		func() string { return "" },
		func() string {
			return "export AWS_ACCESS_KEY_ID=" + fake("AKIA", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
		},
		func() string { return "token: " + fake("ghp_", alnum, 36) + " # ci" },
		func() string { return "SLACK=" + slackBot },
		func() string { return "client_secret: '" + fake("s", alnum+"~._-", 34) + "'" },
		func() string { return "vault s." + fake("v", alnum, 23) + " and hvs." + fake("h", alnum+"_-", 95) },
		func() string { return "auth_header := \"Bearer \" + jwt" },
		func() string { return "-----BEGIN EC PRIVATE KEY-----" },
		func() string { return fake("MHc", alnum+"+/", 61) },
		func() string { return "-----END EC PRIVATE KEY-----" },
		func() string {
			return "id" + fake("AKIA", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16) + " is part of a name"
		},
		func() string { return "\tx := \"" + fake("ghp_", alnum, 36) + "\"" },
		// Configuration files, some of whose secrets span lines.
		func() string {
			return "machine host" + fake("", digits, 2) + "\n  login bob\n\n  password " + fake(string(rune('a'+r.IntN(26))), alnum, 8)
		},
		func() string {
			return "[pypi]\nusername = bob\npassword = " + fake(string(rune('a'+r.IntN(26))), alnum, 6)
		},
		func() string {
			return "  <password>\n    " + fake(string(rune('a'+r.IntN(26))), alnum, 6) + "\n  </password>"
		},
		func() string { return "https://bob:" + fake(string(rune('a'+r.IntN(26))), alnum, 6) + "@example.com/x" },
		func() string { return "//registry.example.com/:_authToken=" + fake("n", alnum, 20) },
		func() string {
			return "curl https://example.com \\\n  -X POST \\\n  -H \"X-Api-Key: " + fake("k", alnum, 20) + "\""
		},
	}
	for round := range 4 {
		var b strings.Builder
		for range 300 {
			b.WriteString(templates[r.IntN(len(templates))]())
			b.WriteByte('\n')
		}
		text := b.String()
		got, want := merge(detect(text, "")), wholeText(text, "")
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d: near keywords %v\nwhole text %v", round, got, want)
		}
		if round == 0 && len(want) < 20 {
			t.Fatalf("the corpus holds only %d secrets; it tests little", len(want))
		}
	}
}

// Most strings masked hold no keyword of any rule (a title, a person's
// name, a type): finding that costs a pass over the text and nothing
// else, no allocation, also with a value registered (sot registers its
// API keys, so every Find looks for them).
func TestTextWithoutKeywordsAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	Register("zq-registered-value-for-the-allocation-test")
	for _, s := range []string{"Analytics cluster transcript 8188, 4 January 2021", "meeting", "Ana López", ""} {
		if n := testing.AllocsPerRun(20, func() { Find(s, "notes/a.md") }); n != 0 {
			t.Errorf("Find(%q) made %v allocations; want none", s, n)
		}
	}
}

// BenchmarkMaskShort: the short strings of a note that sot ask masks
// beside its text (title, type, people), none of which holds a keyword.
func BenchmarkMaskShort(b *testing.B) {
	short := []string{"Analytics cluster transcript 8188, 4 January 2021", "meeting", "Ana López", "Billing migration"}
	for b.Loop() {
		for _, s := range short {
			Mask(s)
		}
	}
}

// Over the rules' own keywords (overlapping ones, prefixes of one another,
// in either case, cut short), the index finds every occurrence a plain
// search finds, and no other, at the offsets just past each.
func TestKeywordIndexFindsEveryOccurrence(t *testing.T) {
	words := rules().words
	x := keywords.New(words)
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var b strings.Builder
		for range 40 {
			w := words[r.IntN(len(words))]
			switch r.IntN(4) {
			case 0:
				w = strings.ToUpper(w)
			case 1:
				w = w[:r.IntN(len(w)+1)]
			}
			b.WriteString(w)
			if r.IntN(2) == 0 {
				b.WriteString(" _-=\n"[r.IntN(5):][:1])
			}
		}
		text := b.String()
		lower := strings.ToLower(text)
		got := x.Scan(text)
		for id, w := range words {
			var want []int
			for i := 0; i+len(w) <= len(lower); i++ {
				if lower[i:i+len(w)] == w {
					want = append(want, i+len(w))
				}
			}
			if !slices.Equal(got.Of(id), want) {
				t.Fatalf("round %d, keyword %q in %q: offsets %v, want %v", round, w, text, got.Of(id), want)
			}
		}
	}
}

// BenchmarkLoadRules: building the rule set, which every process that
// masks does once before its first mask: go test ./internal/secrets -run
// '^$' -bench LoadRules.
func BenchmarkLoadRules(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		loadRules()
	}
}
