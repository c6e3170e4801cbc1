package ask

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

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
		t.Fatalf("%v (run go test ./ask -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s\n(go test ./ask -run %s -update rewrites it)", name, diff, t.Name())
	}
}

// ANSWER.md shows the answer with its citations and perspective labels,
// the conflict summary, the tensions and how the answer treats them, one
// section per perspective, the sources and why they were chosen, and what
// was dropped or is missing; untrusted text cannot change its shape.
func TestAnswerMarkdown(t *testing.T) {
	a := &Answer{
		RunID: "rabc", Question: "When does the billing migration happen?", Intent: "temporal", Complexity: "simple", Rule: `"when" asks about time`,
		SoT: true, Strategy: "rotating", Labels: true,
		Sources: []SourceUse{
			{ID: "s1", Title: "Q3 planning | board", Type: "meeting", Relevance: 0.91, Bonus: 0.3, Chosen: "pick 1: relevance 0.91, the first of its source type", Role: "critic", RoleWhy: "rotation: the first role", Parts: 1, Answers: []string{"A1"}},
			{ID: "s2", Title: "Q3 retro", Type: "meeting", Relevance: 0.75, Role: "advocate", RoleWhy: "rotation: the second role", Parts: 2, Answers: []string{"A2"}},
		},
		Evidence: []Evidence{
			{ID: "A1", Source: "s1", Title: "Q3 planning | board", Role: "critic", Addresses: true, Summary: "Delayed to Q4.", Points: []Point{{Point: "It moved to Q4.", Quote: "delay to Q4", QuoteFound: true}}},
			{ID: "A2", Source: "s2", Title: "Q3 retro", Role: "advocate", Addresses: true, Summary: "The pilot shipped.\n# not a heading", Points: []Point{{Point: "Shipped in August.", Quote: "invented", QuoteFound: false}}},
		},
		ConflictSummary: &ConflictSummary{Tensions: 1, Agreements: 0, Themes: []string{"migration", "contract"}, Summary: "1 potential conflict detected.", Truncated: true, PairsFile: PairsFile},
		Debate: &Debate{
			Tensions:    []Tension{{ID: "T1", Topic: "when it happens", Sides: []Side{{Position: "Q4", Answers: []string{"A1"}}, {Position: "under way", Answers: []string{"A2"}}}, Treatment: "open", How: "two dates"}},
			UniqueRisks: []UniqueRisk{{Risk: "the unsigned contract", Answer: "A1"}},
		},
		Sentences: []Sentence{{Text: "The migration was delayed to Q4.", Answers: []string{"A1"}, Quote: "delay to Q4"}},
		Dropped:   []Dropped{{Sentence: Sentence{Text: "Everyone agrees."}, Reason: "it cites no answer"}},
		Missing:   []Missing{{Step: "map", What: "A3 (Facilities)", Error: "the provider is unavailable"}},
		Usage:     Usage{Calls: 4, InputTokens: 1200, OutputTokens: 300, CostUSD: 0.0123},
	}
	golden(t, "answer.md", []byte(a.Markdown()))
}

// The pairs answer.json lists are bounded, and their counts are not: over
// 40 sources (780 pairs), answer.json lists at most ListedPairs conflicts
// and agreements, the strongest, says it left some out, and counts every
// pair. With --format pairs, conflict-pairs.ndjson holds every pair the
// counts count, one JSON line each, and answer.json and ANSWER.md name it;
// the same question asked again without it removes the file, and ANSWER.md
// says how to get it. The same question gives the same files.
func TestAnswerListsTheStrongestPairs(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	const n = 40
	top := benchCorpus(t, n, 0, 120)
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: sizeResponder}}})
	defer srv.Close()
	ask := func(dir string, formats ...string) (*Outcome, []byte) {
		t.Helper()
		// Every source read by the analyst, none in a synthesizer's span:
		// one answer a source, so that the pairs are many.
		o := benchAskOptions(t, top, srv.OpenAIBaseURL(), func(c *config.Config) { c.Ask.MaxSources, c.Ask.RoleStrategy = n, "uniform" })
		o.OutputDir, o.Formats = filepath.Join(top, ".sot", "answers", dir), formats
		p, err := Prepare(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Execute(context.Background(), p, o)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(o.OutputDir, AnswerJSONFile))
		if err != nil {
			t.Fatal(err)
		}
		return out, b
	}
	out, raw := ask("pairs", FormatPairs)
	var file struct {
		Lexical struct {
			Conflicts       []json.RawMessage `json:"conflicts"`
			Agreements      []json.RawMessage `json:"agreements"`
			TotalConflicts  int               `json:"totalConflicts"`
			TotalAgreements int               `json:"totalAgreements"`
			Truncated       bool              `json:"truncated"`
			PairsFile       string            `json:"pairsFile"`
		} `json:"lexical_conflicts"`
		Summary ConflictSummary `json:"conflict_summary"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	lex := file.Lexical
	if len(lex.Conflicts) > ListedPairs || len(lex.Agreements) > ListedPairs {
		t.Errorf("answer.json lists %d conflicts and %d agreements; at most %d of each", len(lex.Conflicts), len(lex.Agreements), ListedPairs)
	}
	total := lex.TotalConflicts + lex.TotalAgreements
	if total <= ListedPairs || !lex.Truncated || len(lex.Conflicts)+len(lex.Agreements) >= total {
		t.Fatalf("%d pairs counted, %d listed, truncated %v: the corpus must give more pairs than answer.json lists", total, len(lex.Conflicts)+len(lex.Agreements), lex.Truncated)
	}
	if lex.PairsFile != PairsFile || file.Summary.PairsFile != PairsFile || !file.Summary.Truncated ||
		file.Summary.Tensions != lex.TotalConflicts || file.Summary.Agreements != lex.TotalAgreements {
		t.Errorf("answer.json: pairsFile %q, conflict_summary %+v; want %s and the totals %d, %d", lex.PairsFile, file.Summary, PairsFile, lex.TotalConflicts, lex.TotalAgreements)
	}
	f, err := os.Open(filepath.Join(out.Plan.OutputDir, PairsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, conflicts := 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var p struct{ Type string }
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("%s line %d: %v", PairsFile, lines+1, err)
		}
		lines++
		if p.Type == "conflict" {
			conflicts++
		}
	}
	if lines != total || conflicts != lex.TotalConflicts {
		t.Errorf("%s has %d lines, %d conflicts; answer.json counts %d pairs, %d conflicts", PairsFile, lines, conflicts, total, lex.TotalConflicts)
	}
	if !slices.Contains(out.Files, filepath.Join(out.Plan.OutputDir, PairsFile)) {
		t.Errorf("the files written %v do not name %s", out.Files, PairsFile)
	}
	md := out.Answer.Markdown()
	if !strings.Contains(md, PairsFile+" holds every pair") {
		t.Errorf("ANSWER.md does not say where every pair is:\n%s", md)
	}

	_, again := ask("pairs", FormatPairs)
	if !jsonEqualButUsage(t, raw, again) {
		t.Error("the same question gave another answer.json")
	}
	out, _ = ask("pairs")
	if _, err := os.Stat(filepath.Join(out.Plan.OutputDir, PairsFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s of the earlier invocation is still there (%v)", PairsFile, err)
	}
	if md := out.Answer.Markdown(); !strings.Contains(md, "--format pairs writes every pair") {
		t.Errorf("ANSWER.md does not say how to get every pair:\n%s", md)
	}
}

// jsonEqualButUsage compares two answer.json files, leaving out what the
// run spent (usage), which a replayed run reports otherwise.
func jsonEqualButUsage(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y map[string]any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	delete(x, "usage")
	delete(y, "usage")
	return cmp.Equal(x, y)
}
