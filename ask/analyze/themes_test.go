package analyze

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sotlabs/sot/ask"
	"github.com/sotlabs/sot/ask/corpus"
	"github.com/sotlabs/sot/ask/route"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/index"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/stack"
	"github.com/sotlabs/sot/persona"
)

// taggedNote is a northstar export about the billing migration with its
// topic tags.
type taggedNote struct {
	file string
	typ  string
	date string
	tags []string
}

var taggedNotes = []taggedNote{
	{"risks/security-review.md", "meeting", "2026-01-12", []string{"security", "vendor-contract"}},
	{"risks/vendor-audit.md", "report", "2026-02-03", []string{"security", "audit"}},
	{"planning/kickoff.md", "meeting", "2026-01-05", []string{"billing-migration", "timeline"}},
	{"planning/roadmap.md", "report", "2026-03-20", []string{"billing-migration", "timeline", "roadmap"}},
	{"actions/standup-1.md", "meeting", "2026-04-02", []string{"action-items", "owners"}},
	{"actions/standup-2.md", "meeting", "2026-04-09", []string{"action-items", "billing-migration"}},
	{"people/customer-call.md", "transcript", "2026-05-14", []string{"customers", "invoices", "billing-migration"}},
	{"people/support-sync.md", "transcript", "2026-05-21", []string{"customers", "support"}},
}

// taggedCorpus makes a project with the tagged notes as its corpus.
func taggedCorpus(t *testing.T) string {
	t.Helper()
	top := t.TempDir()
	os.MkdirAll(filepath.Join(top, ".git"), 0o755)
	for i, n := range taggedNotes {
		d, err := time.Parse(time.DateOnly, n.date)
		if err != nil {
			t.Fatal(err)
		}
		title := strings.TrimSuffix(filepath.Base(n.file), ".md")
		src := corpus.Source{Title: title, Type: n.typ, Date: d,
			Summary: fmt.Sprintf("Note %d on the billing migration: %s.", i, strings.Join(n.tags, ", ")),
			Metadata: &corpus.Metadata{MeetingType: "general", TopicTags: n.tags, SuggestedPerspective: "analyst",
				TemporalContext: &corpus.TemporalContext{Quarter: fmt.Sprintf("Q%d 2026", (int(d.Month())-1)/3+1), Timeframe: "past"}}}
		path := filepath.Join(top, ".sot", "corpus", n.file)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, corpus.Export(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return top
}

const groupQuestion = "Summarize all the billing migration notes: what happened across the year?"

// askOptions are the options of a question over the project at top, with
// the analysis's configuration and key: planning one indexes the corpus,
// as sot ask or sot sources add would.
func askOptions(t *testing.T, top, baseURL string) *ask.Options {
	t.Helper()
	ao := azOptions(t, top, baseURL)
	lib, err := persona.Discover(persona.Dirs{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, getenv := ao.Config, ao.Getenv
	o := &ask.Options{Question: "What happened to the billing migration?", Library: lib}
	o.Dir, o.Config, o.Getenv = top, cfg, getenv
	o.NewStack = func(journal string) (*stack.Stack, error) {
		return stack.New(cfg, stack.Options{JournalPath: journal, Getenv: getenv})
	}
	return o
}

// groupsOf is the plan's groups as name=role(members).
func groupsOf(p *ask.Plan) []string {
	var out []string
	for _, g := range p.Groups {
		out = append(out, fmt.Sprintf("%s=%s(%d)", g.Group.Name, g.Role, len(g.Group.Members)))
	}
	return out
}

// sot sources group --thematic: one structured call names the themes from
// the corpus's tags; an answer with too few usable themes is asked for
// again; the themes are kept, and --groups thematic reads by them.
func TestNameThemes(t *testing.T) {
	top := taggedCorpus(t)
	var calls atomic.Int32
	respond := func(rec *llmtest.Recorded) llmtest.Reply {
		if rec.SchemaName != themesSchemaName {
			return llmtest.Reply{}
		}
		if calls.Add(1) == 1 {
			// Only one theme has a tag from the list.
			return llmtest.Reply{JSON: map[string]any{"themes": []any{
				map[string]any{"name": "Risk", "description": "Security and vendors.", "tags": []any{"security"}},
				map[string]any{"name": "Made up", "description": "Nothing.", "tags": []any{"astrology"}}}}}
		}
		return llmtest.Reply{JSON: map[string]any{"themes": []any{
			map[string]any{"name": "Risk and Vendors", "description": "Security and the vendor contract.", "tags": []any{"security", "vendor-contract", "audit"}},
			map[string]any{"name": "Delivery", "description": "Plans, timelines and who does what.", "tags": []any{"timeline", "action-items", "roadmap", "owners"}},
			map[string]any{"name": "Customers", "description": "What customers and support said.", "tags": []any{"customers", "support", "invoices"}}}}}
	}
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: respond}}})
	defer srv.Close()
	o := askOptions(t, top, srv.OpenAIBaseURL())
	// Index the corpus, as a question or sot sources add would.
	o.Question = groupQuestion
	if _, err := ask.Prepare(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	ao := &Options{Dir: top, Config: o.Config, NewStack: o.NewStack, Getenv: o.Getenv}
	dry := *ao
	dry.DryRun = true
	rep, err := NameThemes(context.Background(), &dry)
	if err != nil || rep.Calls != 1 || rep.Input == 0 || len(srv.Requests()) != 0 {
		t.Fatalf("dry run: %+v, %v, %d requests", rep, err, len(srv.Requests()))
	}
	rep, err = NameThemes(context.Background(), ao)
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 2 || len(rep.Themes) != 3 || rep.Tagged != 8 || rep.Usage == nil || rep.Usage.Calls != 2 {
		t.Fatalf("report %+v after %d calls", rep, calls.Load())
	}
	reqs := srv.Requests()
	if last := reqs[len(reqs)-1].LastUser(); !strings.Contains(last, "Those themes do not fit") {
		t.Errorf("the second call does not say what was wrong: %q", last)
	}
	// The tags went in fenced, as data.
	if !strings.Contains(reqs[0].LastUser(), "billing-migration (4 source(s)") {
		t.Errorf("the tags sent: %s", reqs[0].LastUser())
	}
	saved, err := ask.LoadThemes(top)
	if err != nil || saved == nil || len(saved.Themes) != 3 || saved.Model != "openai:gpt-4.1" {
		t.Fatalf("themes kept: %+v, %v", saved, err)
	}

	o.Groups = "thematic"
	p, err := ask.Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Risk and Vendors=synthesizer(2)", "Delivery=analyst(4)", "Customers=advocate(2)"}
	if got := groupsOf(p); !slices.Equal(got, want) {
		t.Errorf("groups %v, want %v", got, want)
	}
	if !slices.ContainsFunc(p.Notes, func(n string) bool { return strings.Contains(n, "sot sources group --thematic") }) {
		t.Errorf("notes %v do not say the themes were named", p.Notes)
	}
	for _, g := range p.Groups {
		if g.Group.Kind != route.GroupThematic {
			t.Errorf("group %s is %s", g.Group.Name, g.Group.Kind)
		}
	}

	// The same command again is answered from the journal.
	before := len(srv.Requests())
	if _, err := NameThemes(context.Background(), ao); err != nil {
		t.Fatal(err)
	}
	if len(srv.Requests()) != before {
		t.Errorf("naming the same themes again sent %d call(s)", len(srv.Requests())-before)
	}
}

// Without tags there are no themes to name: a usage error says what to do.
func TestNameThemesWithoutTags(t *testing.T) {
	top := t.TempDir()
	os.MkdirAll(filepath.Join(top, ".git"), 0o755)
	ix, err := ask.OpenIndex(top)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range azNotes {
		if _, err := ix.Add(context.Background(), index.Doc{ID: name, Title: name, Text: text, Hash: name}); err != nil {
			t.Fatal(err)
		}
	}
	ix.Close()
	_, err = NameThemes(context.Background(), &Options{Dir: top, Config: azOptions(t, top, "http://127.0.0.1:1").Config, DryRun: true})
	if !engine.IsUserError(err) || !strings.Contains(err.Error(), "Run sot sources analyze first") {
		t.Fatalf("NameThemes = %v", err)
	}
}
