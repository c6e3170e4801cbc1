package corpus

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// loadBytes loads data as a file named name.
func loadBytes(t testing.TB, data []byte, name string) Source {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	srcs, skipped, err := Load([]string{p}, Options{})
	if err != nil || len(srcs) != 1 {
		t.Fatalf("Load(%s): %v, skipped %v, err %v\n%s", name, srcs, skipped, err, data)
	}
	return srcs[0]
}

// roundTripView is what of s Export keeps: everything but the file's
// names for it and the format, with the text of a plain source as the
// transcript it is exported as.
func roundTripView(s Source) Source {
	if s.Transcript == "" && s.Summary == "" && len(s.KeyPoints) == 0 && len(s.ActionItems) == 0 && s.Sentiment == "" && s.Extra == "" {
		s.Transcript = s.Text
	}
	s.ID, s.Path, s.Hash, s.Format, s.Parts = "", "", "", "", nil
	return s
}

// tricky are exports whose fields northstar's section syntax cannot
// hold as they are, so that Export must leave sections out or escape.
var tricky = map[string]string{
	"lists.md":      "---\nagent_name: \"Lists\"\n---\n\n## Key Points\n\n- [ ] looks like a box\n1. numbered\n- first line\n  second line\n  - nested\n• dot\n\n## Action Items\n\n- [ ] [ ] boxed twice\n- [x] done\n* star\n\n## Transcript\n\nT.\n",
	"open-fence.md": "---\nagent_name: \"Open fence\"\n---\n\nBefore the sections.\n\n## Notes\n\n```go\nfunc f() {\n## Summary\n\nswallowed by the fence\n",
	"awkward.md": "---\nagent_name: \"x\"\nsource_type: \"Audio Transcription\"\n---\n\n## Summary\n\nline one\n---\n## not a section\n\n## Sentiment\n\nMixed\nleaning positive\n\n## Transcript\n\n" +
		"```json\n{}\n```\n\n## Export Payload (JSON) in the words\n\n## Export Payload (JSON)\n\n```json\n" +
		`{"agent": {"name": "Quote \" back\\slash # C# 日本\nsecond line", "created": "2025-02-03T04:05:06.789+05:30", "sourceType": "null"}, ` +
		`"sotMetadata": {"temporalContext": {"quarter": null}, "contentSignals": {"riskMentions": 4}}}` + "\n```\n",
	"only-points.json": `{"analysis": {"keyPoints": ["a", "b\nc"]}, "agent": {"name": "  spaced  "}}`,
}

func TestExportRoundTrip(t *testing.T) {
	srcs, _, err := Load([]string{"testdata/northstar", "testdata/plain"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range tricky {
		srcs = append(srcs, loadBytes(t, []byte(content), name))
	}
	for _, s := range srcs {
		t.Run(filepath.Base(s.Path), func(t *testing.T) {
			out := Export(s)
			if string(Export(s)) != string(out) {
				t.Fatal("Export is not deterministic")
			}
			got := loadBytes(t, out, "exported.md")
			if got.Format != FormatNorthstar {
				t.Errorf("exported file read as %s", got.Format)
			}
			if d := cmp.Diff(roundTripView(s), roundTripView(got)); d != "" {
				t.Errorf("Load(Export(s)) (-want +got):\n%s\nexport:\n%s", d, out)
			}
			// A second trip changes nothing at all.
			if again := Export(got); string(again) != string(out) {
				t.Errorf("a second export differs:\n%s\nfirst:\n%s", again, out)
			}
			checkNorthstarShape(t, s, out)
		})
	}
}

// TestExportSections checks that the sections Export writes say what the
// payload says: read without the payload, an export gives the same
// fields, but for those whose sections it had to leave out.
func TestExportSections(t *testing.T) {
	s := loadOne(t, "testdata/northstar/pricing-review-agent.md")
	out := string(Export(s))
	for _, h := range []string{"## Executive Summary\n", "## Key Points\n", "## Action Items\n\n- [ ] Dana", "## Sentiment Analysis\n\n**Overall Sentiment**: Positive\n", "## Full Transcript\n\n```\nDana:"} {
		if !strings.Contains(out, h) {
			t.Errorf("export lacks %q:\n%s", h, out)
		}
	}
	head, _, _ := strings.Cut(out, "## Export Payload (JSON)")
	bare := loadBytes(t, []byte(head), "bare.md")
	bare.Metadata, bare.AgentID, bare.Date = s.Metadata, s.AgentID, s.Date
	if d := cmp.Diff(roundTripView(s), roundTripView(bare)); d != "" {
		t.Errorf("sections without the payload (-want +got):\n%s", d)
	}

	// The seed's transcript holds fences: northstar would cut it in a
	// fenced section, so it travels in the payload alone.
	seed := string(Export(loadOne(t, seedPath)))
	if strings.Contains(seed, "## Full Transcript") || !strings.Contains(seed, `"transcript": "# Societies of Thought (SoT) Implementation Documentation\n\n## Overview`) {
		t.Errorf("seed export:\n%.3000s", seed)
	}
	// A Markdown source's text is the transcript.
	md := string(Export(loadOne(t, "testdata/plain/decision-record.md")))
	if !strings.Contains(md, "source_type: decision-record\n") || !strings.Contains(md, "## Full Transcript\n\n```\n---\ntitle: \"Decision: keep PostgreSQL\"\n") || !strings.Contains(md, "created: 2025-05-20T00:00:00Z\n") {
		t.Errorf("markdown export:\n%s", md)
	}
}

// checkNorthstarShape checks what northstar.LM's importers need of an
// agent file: frontmatter opening the file with an unquoted agent_type of
// northstar-meeting-agent (its agent importer refuses anything else), the
// summary or the transcript somewhere (in a section or the payload) when
// the source has one, and a
// final "## Export Payload (JSON)" heading whose "```json" block is a JSON
// object in northstar's shape.
func checkNorthstarShape(t *testing.T, s Source, out []byte) {
	t.Helper()
	text := string(out)
	fm := regexp.MustCompile(`^---\n((?s:.*?))\n---\n`).FindStringSubmatch(text)
	if fm == nil || !regexp.MustCompile(`(?m)^agent_type: northstar-meeting-agent$`).MatchString(fm[1]) {
		t.Fatalf("no northstar frontmatter:\n%s", text)
	}
	_, block, ok := strings.Cut(text, "\n## Export Payload (JSON)\n\n```json\n")
	if !ok || !strings.HasSuffix(block, "\n```\n") {
		t.Fatalf("no payload block at the end:\n%s", text)
	}
	var p struct {
		Schema string `json:"schema"`
		Agent  struct {
			ID, Name, SourceType string
		} `json:"agent"`
		Analysis struct {
			Summary, KeyPoints, ActionItems, Sentiment, Transcript string
		} `json:"analysis"`
		SotMetadata map[string]json.RawMessage `json:"sotMetadata"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSuffix(block, "\n```\n")), &p); err != nil {
		t.Fatalf("payload: %v", err)
	}
	if p.Schema != "northstar-agent-md" || p.Agent.Name != s.Title || p.Agent.SourceType != s.Type || p.Analysis.Summary != s.Summary {
		t.Errorf("payload %+v does not match the source", p)
	}
	if (s.Summary != "" || s.Transcript != "" || s.Text != "" && roundTripView(s).Transcript == s.Text) && p.Analysis.Summary == "" && p.Analysis.Transcript == "" {
		t.Errorf("northstar refuses an agent with neither summary nor transcript:\n%s", text)
	}
	if s.Metadata != nil {
		for _, k := range []string{"meetingType", "keyEntities", "temporalContext", "topicTags", "suggestedPerspective"} {
			if _, ok := p.SotMetadata[k]; !ok {
				t.Errorf("sotMetadata lacks %s", k)
			}
		}
		var ke map[string][]string
		if err := json.Unmarshal(p.SotMetadata["keyEntities"], &ke); err != nil || len(ke) != 4 || ke["people"] == nil {
			t.Errorf("keyEntities %s: want four arrays", p.SotMetadata["keyEntities"])
		}
	}
}

func TestExportBuilt(t *testing.T) {
	// A Source made in Go, not loaded: the fields Export knows survive.
	s := Source{
		Title:       "Built",
		Type:        "meeting",
		Date:        time.Date(2024, 12, 31, 23, 0, 0, 0, time.FixedZone("", -5*3600)),
		Summary:     "S.",
		KeyPoints:   []string{"k1", "k2"},
		ActionItems: []string{"a1"},
		Sentiment:   "Positive",
		Transcript:  "hello",
		Metadata:    &Metadata{MeetingType: "review", TopicTags: []string{"x", "y", "z"}, ContentSignals: &ContentSignals{QuestionsRaised: 4}},
	}
	got := loadBytes(t, Export(s), "built.md")
	s.Text = renderText(&s)
	if d := cmp.Diff(roundTripView(s), roundTripView(got)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if !strings.Contains(string(Export(s)), `"readableDate": "Tuesday, December 31, 2024"`) {
		t.Errorf("no readable date:\n%s", Export(s))
	}
}
