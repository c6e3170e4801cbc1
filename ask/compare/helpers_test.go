package compare

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sotlabs/sot/ask"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/stack"
	"github.com/sotlabs/sot/persona"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, which -update rewrites.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./ask/compare -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s\n(go test ./ask/compare -run %s -update rewrites it)", name, diff, t.Name())
	}
}

// The names of the schemas of a question's three steps, as a provider
// sees them on the wire.
const (
	mapSchemaName    = "source_answer"
	debateSchemaName = "perspective_debate"
	reduceSchemaName = "society_answer"
)

// A small corpus of meeting notes that disagree about one decision.
var notes = map[string]string{
	"2025-07-02-planning.md": "# Q3 planning\n\nWe decided to delay the billing migration to Q4 because the vendor contract is not signed. Risk: the old system's license ends in October.\n",
	"2025-08-20-retro.md":    "# Q3 retro\n\nThe billing migration pilot shipped in August and customers liked the new invoices. The team wants to finish the migration before Q4.\n",
	"2025-10-01-board.md":    "# Board update\n\nThe board asked whether the billing migration will be done this year and what it costs.\n",
	"2025-05-10-office.md":   "# Office move\n\nThe office moves to the fourth floor in May.\n",
}

// testCorpus makes a project whose .sot/corpus holds the notes.
func testCorpus(t *testing.T) string {
	t.Helper()
	top := t.TempDir()
	os.MkdirAll(filepath.Join(top, ".git"), 0o755)
	dir := filepath.Join(top, ".sot", "corpus")
	os.MkdirAll(dir, 0o755)
	for name, body := range notes {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return top
}

// answerOf finds the id of the answer read from the source titled title in
// a debate or reduce prompt.
func answerOf(rec *llmtest.Recorded, title string) string {
	m := regexp.MustCompile(`(A\d+) \([^)]*from the source ` + regexp.QuoteMeta(title) + `\)`).FindStringSubmatch(rec.LastUser())
	if m == nil {
		return "A0"
	}
	return m[1]
}

// responder answers each step of a question from what its prompt holds.
func responder(rec *llmtest.Recorded) llmtest.Reply {
	plan, retro := answerOf(rec, "Q3 planning"), answerOf(rec, "Q3 retro")
	switch rec.SchemaName {
	case mapSchemaName:
		switch {
		case strings.Contains(rec.System, "vendor contract"):
			return llmtest.Reply{JSON: map[string]any{"addresses": true, "summary": "The billing migration was delayed to Q4 because the vendor contract is not signed.",
				"points": []any{map[string]any{"point": "The migration was delayed to Q4.", "quote": "delay the billing migration to Q4"}}}}
		case strings.Contains(rec.System, "pilot shipped"):
			return llmtest.Reply{JSON: map[string]any{"addresses": true, "summary": "The billing migration pilot shipped in August and the team wants to finish before Q4.",
				"points": []any{map[string]any{"point": "The pilot shipped in August.", "quote": "pilot shipped in August"}}}}
		}
		return llmtest.Reply{JSON: map[string]any{"addresses": false, "summary": "It does not say when the migration happens.", "points": []any{}}}
	case debateSchemaName:
		return llmtest.Reply{JSON: map[string]any{
			"tensions": []any{map[string]any{"topic": "when the migration finishes", "sides": []any{
				map[string]any{"position": "in Q4, after the contract", "answers": []any{plan}},
				map[string]any{"position": "before Q4", "answers": []any{retro}}}}},
			"unique_risks": []any{}, "assumptions": []any{}, "recommendations": []any{"give both dates"}}}
	case reduceSchemaName:
		return llmtest.Reply{JSON: map[string]any{
			"sentences": []any{
				map[string]any{"text": "The billing migration was delayed to Q4 because the vendor contract is not signed.", "answers": []any{plan}, "quote": "delay the billing migration to Q4"},
				map[string]any{"text": "The team wants to finish the migration before Q4, after the pilot shipped in August.", "answers": []any{retro}, "quote": ""}},
			"tensions": []any{map[string]any{"id": "T1", "treatment": "open", "how": "the notes give two dates"}}}}
	}
	return llmtest.Reply{}
}

// testOptions are the options of a question over the project at top, its
// calls going to the fake provider at baseURL.
func testOptions(t *testing.T, top, baseURL string) *ask.Options {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	cfg := config.Defaults()
	p := cfg.Providers["openai"]
	p.BaseURL = baseURL
	cfg.Providers["openai"] = p
	cfg.DefaultModel = "openai:gpt-4.1"
	cfg.Cache.Disabled = true
	lib, err := persona.Discover(persona.Dirs{})
	if err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-ask-0123456789"
		}
		return ""
	}
	o := &ask.Options{Question: "Why did the billing migration slip, and what do the teams disagree about?", Library: lib}
	o.Dir, o.Config, o.Getenv = top, &cfg, getenv
	o.NewStack = func(journal string) (*stack.Stack, error) {
		return stack.New(&cfg, stack.Options{JournalPath: journal, Getenv: getenv})
	}
	return o
}

// hostile is text from a question, a source or a model that would be
// markup if it were not escaped.
var hostile = []string{
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(1)>`,
	`javascript:alert(1)`,
	`'><svg onload=alert(1)>`,
	`</style><script>alert(2)</script>`,
}

var (
	tagRE       = regexp.MustCompile(`<(/?)([a-zA-Z][a-zA-Z0-9-]*)([^>]*)>`)
	eventAttrRE = regexp.MustCompile(`(?i)\son[a-z]+\s*=|javascript:|\s(src|href|action|srcset)\s*=`)
)
