package corpus

import (
	"encoding/json"
	"errors"
	"github.com/sotlabs/sot/internal/project"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sotlabs/sot/internal/secrets"
)

const seedPath = "testdata/northstar/000_addec4909cf46908.txt"

// loadOne loads a single file that must give a single source.
func loadOne(t *testing.T, path string) Source {
	t.Helper()
	srcs, skipped, err := Load([]string{path}, Options{})
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	if len(srcs) != 1 || len(skipped) != 0 {
		t.Fatalf("Load(%s): %d sources, skipped %v; want one source", path, len(srcs), skipped)
	}
	return srcs[0]
}

func date(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// ignoreFileFields leaves out what names the file rather than the source.
var ignoreFileFields = cmpopts.IgnoreFields(Source{}, "ID", "Path", "Hash", "Text", "Parts")

// TestSeedImportedWhole reads the Societies of Thought seed, a northstar
// agent written by hand: its transcript has "##" headings of its own, at
// the first of which northstar's importer cuts it to 57 characters.
func TestSeedImportedWhole(t *testing.T) {
	s := loadOne(t, seedPath)
	raw, err := os.ReadFile(seedPath)
	if err != nil {
		t.Fatal(err)
	}
	file := string(raw)
	// The transcript is everything between its heading and the rule
	// before the payload.
	_, after, _ := strings.Cut(file, "\n## Transcript\n\n")
	wantTranscript, _, ok := strings.Cut(after, "\n\n---\n\n## Export Payload (JSON)")
	if !ok || len(wantTranscript) < 10000 {
		t.Fatalf("the fixture is not the seed: transcript of %d bytes", len(wantTranscript))
	}
	if s.Transcript != wantTranscript {
		t.Errorf("transcript is %d bytes, want %d; it starts %q", len(s.Transcript), len(wantTranscript), s.Transcript[:min(80, len(s.Transcript))])
	}
	for _, h := range []string{"## Overview", "## Architecture", "### Conflict Detection", "### API Functions Reference"} {
		if !strings.Contains(s.Transcript, "\n"+h+"\n") {
			t.Errorf("transcript lacks %q", h)
		}
	}
	if !strings.HasSuffix(s.Transcript, "_executeDebate(mapResults, debateQuery, llmCall, context) -> Debate result") {
		t.Errorf("transcript ends %q", s.Transcript[max(0, len(s.Transcript)-80):])
	}

	want := Source{
		Format:  FormatNorthstar,
		Title:   "Societies of Thought Expert",
		Type:    "documentation",
		Date:    date("2026-01-20T12:00:00Z"),
		AgentID: "sot-expert-20260120",
		// The payload's analysis wins over the sections' longer lists.
		Summary: "The Societies of Thought (SoT) feature enhances northstar.LM's RLM pipeline by introducing diverse cognitive perspectives based on arXiv:2601.10825 research. It implements seven roles (Analyst, Advocate, Critic, Synthesizer, Historian, Stakeholder, Pragmatist) with conflict detection, group-level decomposition, and MAP-DEBATE-REDUCE execution for richer multi-perspective responses.",
		KeyPoints: []string{
			"Seven cognitive perspective roles defined in perspective-roles.js",
			"Four role assignment strategies: UNIFORM, ROTATING, ADAPTIVE, PRIMARY_ONLY",
			"ConflictDetector uses marker-based analysis and Jaccard similarity",
			"Group-level decomposition for 6+ agents reduces tokens 40-60%",
			"MAP-DEBATE-REDUCE adds explicit tension identification",
			"SoT metadata extracted during Agent Builder analysis",
			"UI shows perspective badges and conflict summaries",
		},
		ActionItems: []string{
			"Enable SoT for 3+ agent queries",
			"Use ROTATING strategy for diversity",
			"Monitor 15-30% conflict detection rate",
			"Use GROUP decomposition for 6+ agents",
			"Track token overhead under 20%",
		},
		Sentiment:  "Neutral",
		Transcript: wantTranscript,
		Metadata: &Metadata{
			MeetingType: "report",
			KeyEntities: KeyEntities{
				Projects: []string{"northstar.LM", "RLM Pipeline"},
				Products: []string{"Societies of Thought", "ConflictDetector", "PerspectiveRoles"},
			},
			TemporalContext:      &TemporalContext{Quarter: "Q1 2026", Timeframe: "present"},
			TopicTags:            []string{"sot", "rlm", "perspectives", "conflict-detection", "multi-agent", "cognitive-diversity"},
			ContentSignals:       &ContentSignals{DecisionsMade: 7, ActionsAssigned: 5},
			SuggestedPerspective: "analyst",
		},
	}
	if d := cmp.Diff(want, s, ignoreFileFields); d != "" {
		t.Errorf("seed (-want +got):\n%s", d)
	}
	if !strings.HasPrefix(s.Text, "## Summary\n\n"+want.Summary+"\n\n## Key Points\n\n- Seven") || !strings.HasSuffix(s.Text, "## Transcript\n\n"+wantTranscript) {
		t.Errorf("text does not hold the analysis then the transcript:\n%.300s", s.Text)
	}
	if s.Hash != "ad46f56235ad7cac027f28ab8205598a52844e0e80f9537f18e025014d774a74" || s.ID != s.Hash[:16] {
		t.Errorf("hash %s, id %s", s.Hash, s.ID)
	}
}

func TestNorthstarForms(t *testing.T) {
	tests := []struct {
		path string
		want Source
	}{{
		// northstar.LM's own exporter: agent_type frontmatter, chrome
		// sections, a fenced Full Transcript with a "##" line in it, and
		// "(JSON)" blocks after it.
		path: "testdata/northstar/pricing-review-agent.md",
		want: Source{
			Format:      FormatNorthstar,
			Title:       "Pricing Review",
			Type:        "audio",
			Date:        date("2025-11-04T15:30:00Z"),
			AgentID:     "0b7c1d2e-3f40-4a51-8b62-7c83d94ea5f6",
			Summary:     "The team reviewed the proposed per-seat pricing for the Q4 2025 launch and agreed to keep the annual discount while testing a usage tier.",
			KeyPoints:   []string{"Per-seat pricing stays at the current level for existing customers", "The annual discount remains 15%", "A usage-based tier will be piloted with three customers"},
			ActionItems: []string{"Dana drafts the usage tier terms by November 14", "Lee picks the three pilot customers"},
			Sentiment:   "Positive",
			Transcript:  "Dana: Let's start with the numbers.\n## Numbers\nLee: Seats grew 12% last quarter.\nDana: Then we keep per-seat pricing and pilot usage.",
			Metadata: &Metadata{
				MeetingType:          "decision",
				KeyEntities:          KeyEntities{People: []string{"Dana", "Lee"}, Projects: []string{"Q4 launch"}, Products: []string{"usage tier"}},
				TemporalContext:      &TemporalContext{Quarter: "Q4 2025", ExplicitDates: []string{"2025-11-14"}, Deadlines: []string{"usage tier terms by November 14"}, Timeframe: "future"},
				TopicTags:            []string{"pricing", "discounts", "usage-tier", "pilot"},
				ContentSignals:       &ContentSignals{RiskMentions: 1, DecisionsMade: 2, ActionsAssigned: 2},
				SuggestedPerspective: "pragmatist",
			},
		},
	}, {
		// Sections and a payload that disagree: the payload's fields win
		// where it has them (agent, date, type, summary, lists, metadata);
		// the sections fill the empty ones (sentiment, transcript).
		path: "testdata/northstar/payload-wins.md",
		want: Source{
			Format:      FormatNorthstar,
			Title:       "Roadmap Sync",
			Type:        "video",
			Date:        date("2025-07-02T09:00:00Z"),
			AgentID:     "roadmap-sync",
			Summary:     "The summary as the payload has it.",
			KeyPoints:   []string{"First payload point", "Second payload point"},
			ActionItems: []string{"A payload action", "Another payload action"},
			Sentiment:   "Negative",
			Transcript:  "Ana: The sections' transcript.",
			Extra:       "Notes taken by hand before the export.\n\n## Decisions\n\n- Ship the beta in August",
			Metadata: &Metadata{
				MeetingType:    "planning",
				KeyEntities:    KeyEntities{People: []string{"Ana"}},
				TopicTags:      []string{"roadmap", "beta", "release"},
				ContentSignals: &ContentSignals{RiskMentions: 2, DecisionsMade: 1, ActionsAssigned: 2},
			},
		},
	}, {
		// A payload alone, with the SoT metadata northstar writes for a
		// source it never analysed: no metadata.
		path: "testdata/northstar/placeholder-metadata.json",
		want: Source{
			Format:      FormatPayload,
			Title:       "Daily Standup",
			Type:        "text",
			Date:        date("2025-03-03T00:00:00Z"),
			AgentID:     "standup-1",
			Summary:     "A short standup: the build is green and nobody is blocked.",
			KeyPoints:   []string{"Build is green", "Nobody is blocked"},
			ActionItems: []string{"No specific action items identified."},
			Sentiment:   "Neutral",
			Transcript:  "Sam: Build is green.\nKim: Not blocked.",
		},
	}}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			s := loadOne(t, tt.path)
			if d := cmp.Diff(tt.want, s, ignoreFileFields); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if want := renderText(&tt.want); s.Text != want {
				t.Errorf("text:\n%s\nwant:\n%s", s.Text, want)
			}
		})
	}
}

func TestPlainForms(t *testing.T) {
	tests := []struct {
		path string
		want Source
	}{{
		// Title from the first heading, though text comes before it;
		// the date from the file name.
		path: "testdata/plain/2025-03-14-standup.md",
		want: Source{Format: FormatMarkdown, Title: "Standup, March 14", Type: "markdown", Date: date("2025-03-14T00:00:00Z"),
			Text: "Written after the call.\n\n# Standup, March 14\n\n- The migration finished overnight.\n- Two alerts fired and were silenced."},
	}, {
		// Frontmatter: title, date and source type, and the text keeps
		// it, author and all.
		path: "testdata/plain/decision-record.md",
		want: Source{Format: FormatMarkdown, Title: "Decision: keep PostgreSQL", Type: "decision-record", Date: date("2025-05-20T00:00:00Z"),
			Text: "---\ntitle: \"Decision: keep PostgreSQL\"\ndate: 2025-05-20\nsource_type: decision-record\nauthor: Priya\n---\n\n# ADR 7\n\nWe keep PostgreSQL for the event store; the team weighed a switch to a log store and found the migration cost too high for Q2 2025."},
	}, {
		path: "testdata/plain/untitled.markdown",
		want: Source{Format: FormatMarkdown, Title: "untitled", Type: "markdown", Text: "Just a paragraph, with no heading at all."},
	}, {
		// A setext heading; CRLF line breaks become "\n".
		path: "testdata/plain/report.txt",
		want: Source{Format: FormatText, Title: "Quarterly report", Type: "text", Text: "Quarterly report\n================\n\nRevenue rose 4% in Q3."},
	}, {
		path: "testdata/plain/field-notes.txt",
		want: Source{Format: FormatText, Title: "field-notes", Type: "text", Text: "Site visit, north depot. Forklift 3 is out of service until parts arrive."},
	}, {
		path: "testdata/plain/retro-payload.json",
		want: Source{Format: FormatPayload, Title: "Sprint 12 Retro", Type: "text", Date: date("2025-09-30T16:00:00Z"),
			Summary: "The sprint shipped late; estimates were too optimistic.", KeyPoints: []string{"Estimates missed by 30%", "Reviews queued for days"},
			ActionItems: []string{"Cap work in progress at three items"}, Sentiment: "Negative",
			Metadata: &Metadata{MeetingType: "retrospective", TopicTags: []string{"estimates", "reviews", "process"}, SuggestedPerspective: "critic"},
			Text:     "## Summary\n\nThe sprint shipped late; estimates were too optimistic.\n\n## Key Points\n\n- Estimates missed by 30%\n- Reviews queued for days\n\n## Action Items\n\n- Cap work in progress at three items\n\n## Sentiment\n\nNegative"},
	}}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			s := loadOne(t, tt.path)
			if d := cmp.Diff(tt.want, s, cmpopts.IgnoreFields(Source{}, "ID", "Path", "Hash", "Parts")); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestSkipped(t *testing.T) {
	srcs, skipped, err := Load([]string{"testdata/skip"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 0 {
		t.Errorf("sources %v, want none", srcs)
	}
	want := []Skipped{
		{"testdata/skip/.hidden.md", "hidden file"},
		{"testdata/skip/blank.md", "empty file (white space only)"},
		{"testdata/skip/broken.json", "not valid JSON (line 2: unexpected end of JSON input)"},
		{"testdata/skip/empty.txt", "empty file"},
		{"testdata/skip/image.png", "binary file (NUL byte at offset 8)"},
		{"testdata/skip/latin1.txt", "not UTF-8 (invalid byte 0xE9 at offset 3)"},
		{"testdata/skip/package.json", "JSON that is not a northstar export payload"},
		{"testdata/skip/utf16.txt", "UTF-16 text: only UTF-8 is read"},
	}
	for i := range want {
		want[i].Path = filepath.FromSlash(want[i].Path)
	}
	if d := cmp.Diff(want, skipped); d != "" {
		t.Errorf("skipped (-want +got):\n%s", d)
	}
}

func TestSkippedMore(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "big.txt", strings.Repeat("word ", 100))
	write(t, dir, "pdf.txt", "%PDF-1.7\nstream")
	write(t, dir, "a.md", "# Same\n")
	write(t, dir, "b.md", "# Same\n")
	write(t, dir, "empty-export.md", "---\nagent_name: \"Nothing\"\n---\n\n## Summary\n\n")
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, ".git/HEAD", "ref: refs/heads/main\n")
	srcs, skipped, err := Load([]string{dir}, Options{MaxFileBytes: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 1 || srcs[0].Path != filepath.Join(dir, "a.md") {
		t.Errorf("sources %v, want a.md alone", srcs)
	}
	want := []Skipped{
		{".git", "hidden directory"},
		{"b.md", "same content as " + filepath.Join(dir, "a.md")},
		{"big.txt", "larger than 200 bytes (500)"},
		{"empty-export.md", "northstar file with no text"},
		{"pdf.txt", "binary file (PDF): convert it to text or Markdown"},
	}
	for i := range want {
		want[i].Path = filepath.Join(dir, want[i].Path)
	}
	if d := cmp.Diff(want, skipped); d != "" {
		t.Errorf("skipped (-want +got):\n%s", d)
	}
}

func TestErrors(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		srcs, _, err := Load([]string{"testdata/no-such-dir", "testdata/plain/field-notes.txt"}, Options{})
		if !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("err = %v, want one that is os.ErrNotExist", err)
		}
		var pe *PathError
		if !errors.As(err, &pe) || pe.Path != "testdata/no-such-dir" {
			t.Errorf("err = %#v, want a *PathError for the path", err)
		}
		if want := "testdata/no-such-dir: no such file or directory"; err.Error() != want {
			t.Errorf("message %q, want %q", err, want)
		}
		if len(srcs) != 1 {
			t.Errorf("the other path was not read: %v", srcs)
		}
	})
	t.Run("dangling link", func(t *testing.T) {
		dir := t.TempDir()
		link := filepath.Join(dir, "gone")
		if err := os.Symlink(filepath.Join(dir, "nowhere"), link); err != nil {
			t.Skip(err)
		}
		if _, _, err := Load([]string{link}, Options{}); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("err = %v, want os.ErrNotExist", err)
		}
	})
	// A malformed export is one file skipped with its reason, never the
	// end of the whole load: the other sources are read.
	t.Run("malformed payloads", func(t *testing.T) {
		dir := t.TempDir()
		for _, name := range []string{"bad-syntax.md", "bad-type.md", "truncated.md"} {
			b, err := os.ReadFile(filepath.Join("testdata/malformed", name))
			if err != nil {
				t.Fatal(err)
			}
			write(t, dir, name, string(b))
		}
		write(t, dir, "huge-number.json", `{"schema": "northstar-agent-md", "agent": {"name": "x"}, "sotMetadata": {"contentSignals": {"riskMentions": 1e308}}}`)
		write(t, dir, "notes.md", "# Notes\n\nThe launch moved to May.\n")
		srcs, skipped, err := Load([]string{dir}, Options{})
		if err != nil {
			t.Fatalf("err = %v: a malformed export ended the load", err)
		}
		if len(srcs) != 1 || srcs[0].Title != "Notes" {
			t.Errorf("sources %v, want notes.md alone", srcs)
		}
		var got []string
		for _, sk := range skipped {
			got = append(got, filepath.Base(sk.Path)+": "+sk.Reason)
		}
		want := []string{
			"bad-syntax.md: malformed export payload at line 17: invalid character '\"' after object key:value pair",
			"bad-type.md: malformed export payload at line 17: agent.name: should be a string, not an object",
			"huge-number.json: malformed export payload at line 1: sotMetadata.contentSignals.riskMentions: should be a whole number, not \"1e308\"",
			"truncated.md: malformed export payload at line 15: its ```json fence is never closed",
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("skipped (-want +got):\n%s", d)
		}
	})
}

// A symbolic link is read as what it points to while it stays in the
// project; one that leads out is refused when named and skipped when
// found, unless FollowSymlinks.
func TestSymlinksStayInTheProject(t *testing.T) {
	outside := t.TempDir()
	write(t, outside, "credentials.md", "# Creds\n\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n")
	top := t.TempDir()
	os.MkdirAll(filepath.Join(top, ".git"), 0o755)
	corpus := filepath.Join(top, "corpus")
	os.MkdirAll(corpus, 0o755)
	write(t, corpus, "a.md", "# A\n\nThe launch moved to May.\n")
	os.MkdirAll(filepath.Join(top, "shared"), 0o755)
	write(t, filepath.Join(top, "shared"), "b.md", "# B\n\nThe budget grew.\n")
	for _, l := range []struct{ target, link string }{
		{filepath.Join(outside, "credentials.md"), filepath.Join(corpus, "creds.md")},
		{outside, filepath.Join(corpus, "elsewhere")},
		{filepath.Join(top, "shared", "b.md"), filepath.Join(corpus, "b.md")},
		{outside, filepath.Join(top, "notes")},
	} {
		if err := os.Symlink(l.target, l.link); err != nil {
			t.Skip(err)
		}
	}
	titles := func(srcs []Source) string {
		var out []string
		for _, s := range srcs {
			out = append(out, s.Title)
		}
		return strings.Join(out, ",")
	}

	srcs, skipped, err := Load([]string{corpus}, Options{})
	if err != nil || titles(srcs) != "A,B" {
		t.Fatalf("walk: sources %s, err %v; want A and the link inside the project, B", titles(srcs), err)
	}
	if len(skipped) != 2 || !strings.Contains(skipped[0].Reason, "outside the project") {
		t.Errorf("skipped %v, want both links out", skipped)
	}
	for _, named := range []string{filepath.Join(corpus, "creds.md"), filepath.Join(top, "notes")} {
		srcs, _, err = Load([]string{named}, Options{})
		var le *project.LinkError
		if len(srcs) != 0 || !errors.As(err, &le) || !strings.Contains(err.Error(), "--follow-symlinks") {
			t.Errorf("named %s: sources %s, err %v; want a *project.LinkError", named, titles(srcs), err)
		}
	}
	srcs, _, err = Load([]string{corpus}, Options{FollowSymlinks: true})
	if err != nil || titles(srcs) != "A,B,Creds" {
		t.Errorf("--follow-symlinks: sources %s, err %v", titles(srcs), err)
	}
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeToken returns a made-up token: prefix, then n characters drawn from
// alphabet by a generator seeded with seed, so that no literal token is
// written in the tests.
func fakeToken(prefix, alphabet string, n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	b := []byte(prefix)
	for range n {
		b = append(b, alphabet[r.IntN(len(alphabet))])
	}
	return string(b)
}

func TestSecretsMasked(t *testing.T) {
	aws := fakeToken("AKIA", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16, 1)
	gh := fakeToken("ghp_", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 36, 3)
	dir := t.TempDir()
	write(t, dir, "notes.md", "# Deploy notes\n\nThe key is "+aws+" for now.\n")
	write(t, dir, "log.txt", "token="+gh+"\n")
	write(t, dir, "agent.md", "---\nagent_name: \"Keys "+aws+"\"\n---\n\n## Summary\n\nUses "+gh+".\n\n## Transcript\n\nRead out "+aws+" on the call.\n\n---\n\n## Export Payload (JSON)\n\n```json\n"+
		`{"analysis": {"keyPoints": "- the key `+aws+`\n- fine", "sentiment": ""}, "sotMetadata": {"topicTags": ["`+aws+`"], "keyEntities": {"people": ["`+gh+`"]}}}`+"\n```\n")
	write(t, dir, "payload.json", `{"analysis": {"summary": "key `+aws+`", "transcript": "again `+gh+`"}}`)
	srcs, skipped, err := Load([]string{dir}, Options{PartTokens: 8})
	if err != nil || len(skipped) > 0 || len(srcs) != 4 {
		t.Fatalf("Load: %d sources, skipped %v, err %v", len(srcs), skipped, err)
	}
	for _, s := range srcs {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		all := string(b) + string(Export(s))
		for _, tok := range []string{aws, gh} {
			if strings.Contains(all, tok[4:]) {
				t.Errorf("%s: a token reached the source:\n%s", s.Path, all)
			}
		}
		if !strings.Contains(s.Text, secrets.Marker) {
			t.Errorf("%s: no mask in the text:\n%s", s.Path, s.Text)
		}
	}
	agent := srcs[0]
	if agent.Title != "Keys AKIA"+secrets.Marker+"aws-access-token]" || !strings.Contains(agent.KeyPoints[0], secrets.Marker) || !strings.Contains(agent.Metadata.TopicTags[0], secrets.Marker) {
		t.Errorf("agent not masked everywhere: %+v", agent)
	}
	// Masking is stable: a masked source exports and loads the same.
	again := loadBytes(t, Export(agent), "again.md")
	if d := cmp.Diff(roundTripView(agent), roundTripView(again)); d != "" {
		t.Errorf("masked source after Export and Load (-want +got):\n%s", d)
	}
}

func TestLinks(t *testing.T) {
	outside := t.TempDir()
	write(t, outside, "secret-notes.md", "# Outside\n")
	if err := os.Mkdir(filepath.Join(outside, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, outside, "dir/x.md", "# Outside dir\n")
	root := t.TempDir()
	write(t, root, "b-real.md", "# Inside\n")
	for link, target := range map[string]string{
		"a-inside.md":  filepath.Join(root, "b-real.md"),
		"c-out.md":     filepath.Join(outside, "secret-notes.md"),
		"d-outdir":     filepath.Join(outside, "dir"),
		"e-loop":       root,
		"f-relative":   "../" + filepath.Base(outside) + "/secret-notes.md",
		"g-dangling":   filepath.Join(root, "missing"),
		"h-inside-dir": filepath.Join(root, "sub"),
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Skip(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, root, "sub/y.md", "# Sub\n")
	srcs, skipped, err := Load([]string{root}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, s := range srcs {
		paths = append(paths, strings.TrimPrefix(s.Path, root+string(filepath.Separator)))
	}
	// The link inside is read (once, under the name reached first), the
	// linked directory inside too; nothing outside is.
	if want := []string{"a-inside.md", filepath.Join("h-inside-dir", "y.md")}; !slices.Equal(paths, want) {
		t.Errorf("sources %v, want %v", paths, want)
	}
	reasons := map[string]string{}
	for _, s := range skipped {
		reasons[filepath.Base(s.Path)] = s.Reason
	}
	// b-real.md is the file a-inside.md was: reached again, not a second
	// file with the same bytes.
	if r, ok := reasons["b-real.md"]; ok {
		t.Errorf("b-real.md skipped: %s", r)
	}
	realOutside, _ := filepath.EvalSymlinks(outside)
	for name, want := range map[string]string{
		"c-out.md":   "a symbolic link to " + filepath.Join(realOutside, "secret-notes.md") + ", outside ",
		"d-outdir":   "a symbolic link to " + filepath.Join(realOutside, "dir") + ", outside ",
		"f-relative": "a symbolic link to " + filepath.Join(realOutside, "secret-notes.md") + ", outside ",
		"g-dangling": "broken link",
	} {
		if !strings.HasPrefix(reasons[name], want) {
			t.Errorf("%s: reason %q, want %q...", name, reasons[name], want)
		}
	}
	// A link given to Load that lies in no project is followed wherever it
	// leads: the user named it.
	srcs, _, err = Load([]string{filepath.Join(root, "c-out.md")}, Options{})
	if err != nil || len(srcs) != 1 || srcs[0].Title != "Outside" {
		t.Errorf("a link given: %v, %v", srcs, err)
	}
}

func TestOrder(t *testing.T) {
	paths := []string{"testdata/plain", seedPath, "testdata/plain/report.txt"}
	first, skipped, err := Load(paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A file reached twice (the last path given is in the first) is one
	// file, read once: not a second file with the same bytes.
	for _, s := range skipped {
		if strings.Contains(s.Reason, "same content") {
			t.Errorf("%s skipped: %s", s.Path, s.Reason)
		}
	}
	var got []string
	for _, s := range first {
		got = append(got, filepath.ToSlash(s.Path))
	}
	want := []string{
		"testdata/plain/2025-03-14-standup.md", "testdata/plain/decision-record.md", "testdata/plain/field-notes.txt",
		"testdata/plain/report.txt", "testdata/plain/retro-payload.json", "testdata/plain/untitled.markdown", seedPath,
	}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	for range 3 {
		again, _, _ := Load(paths, Options{})
		if d := cmp.Diff(first, again); d != "" {
			t.Fatalf("a second Load differs:\n%s", d)
		}
	}
}

func TestMetadataValidate(t *testing.T) {
	tests := []struct {
		m    Metadata
		want string
	}{
		{Metadata{MeetingType: "review", TopicTags: []string{"a", "b", "c"}, SuggestedPerspective: "critic"}, ""},
		{Metadata{MeetingType: "party", TopicTags: []string{"a"}, SuggestedPerspective: "Critic", ContentSignals: &ContentSignals{RiskMentions: -1}},
			`meetingType "party" is not one of planning, review, standup, brainstorm, decision, retrospective, report, general; ` +
				`1 topicTags, want 3 to 7; suggestedPerspective "Critic" is not one of analyst, advocate, critic, synthesizer, historian, pragmatist, stakeholder; ` +
				`contentSignals.riskMentions is negative`},
	}
	for _, tt := range tests {
		err := tt.m.Validate()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("Validate(%+v) = %q, want %q", tt.m, got, tt.want)
		}
	}
}

// Each source is shown as the path given joined with where the file lies
// below it, however the path was given: absolute, relative, ".", through
// a link inside the project, or not clean.
func TestShownPaths(t *testing.T) {
	top := t.TempDir()
	os.MkdirAll(filepath.Join(top, ".git"), 0o755)
	corpus := filepath.Join(top, "corpus")
	os.MkdirAll(filepath.Join(corpus, "sub"), 0o755)
	write(t, corpus, "a.md", "# A\n\nThe launch moved to May.\n")
	write(t, filepath.Join(corpus, "sub"), "b.md", "# B\n\nThe budget grew.\n")
	if err := os.Symlink(corpus, filepath.Join(top, "alias")); err != nil {
		t.Skip(err)
	}
	for _, c := range []struct{ name, wd, given string }{
		{"absolute", top, corpus},
		{"relative", top, "corpus"},
		{"dot", corpus, "."},
		{"through a link", top, "alias"},
		{"not clean", top, "corpus/../corpus/"},
		{"parent", filepath.Join(corpus, "sub"), ".."},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Chdir(c.wd)
			srcs, skipped, err := Load([]string{c.given}, Options{FollowSymlinks: true})
			if err != nil || len(skipped) > 0 {
				t.Fatalf("Load: skipped %v, err %v", skipped, err)
			}
			var got []string
			for _, s := range srcs {
				got = append(got, s.Path)
			}
			want := []string{filepath.Join(c.given, "a.md"), filepath.Join(c.given, "sub", "b.md")}
			if !slices.Equal(got, want) {
				t.Errorf("shown as %q, want %q", got, want)
			}
		})
	}
}
