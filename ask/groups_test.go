package ask

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/ask/corpus"
	"github.com/sotlabs/sot/ask/route"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/index"
)

// taggedNote is a northstar export about the billing migration with its
// topic tags, written under dir.
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

// groupsOf is the plan's groups as name=role(members).
func groupsOf(p *Plan) []string {
	var out []string
	for _, g := range p.Groups {
		out = append(out, fmt.Sprintf("%s=%s(%d)", g.Group.Name, g.Role, len(g.Group.Members)))
	}
	return out
}

// Each kind of group reads from its own perspective, custom groups from
// the whole words of their names, and no two groups share one.
func TestAskGroupPerspectives(t *testing.T) {
	top := taggedCorpus(t)
	tests := []struct {
		name   string
		groups string
		custom []string
		// want are the groups as name(members), in any order; roles are
		// their roles in order when the order is fixed, else first is the
		// first group's role (the groups of a field come in the order of
		// relevance).
		want  []string
		roles []string
		first string
	}{
		{"temporal", "temporal", nil, []string{"Q1 2026(4)", "Q2 2026(4)"}, nil, "historian"},
		{"temporal by month", "temporal:month", nil, []string{"January 2026(2)", "February 2026(1)", "March 2026(1)", "April 2026(2)", "May 2026(2)"}, nil, "historian"},
		{"source", "source", nil, []string{"meeting(4)", "report(2)", "transcript(2)"}, nil, "analyst"},
		// Shared tags: billing-migration is on four notes; of the other
		// four, only security is on two; the last two share no tag with a
		// theme.
		{"thematic", "thematic", nil, []string{"billing-migration(4)", "security(2)", "other topics(2)"}, []string{"synthesizer", "analyst", "advocate"}, ""},
		{"custom by name", "", []string{
			"Launch risks=tags:security",
			"Next steps=tags:action-items",
			"Customer impact=types:transcript",
			"Project timeline=tags:timeline",
		}, []string{"Launch risks(2)", "Next steps(2)", "Customer impact(2)", "Project timeline(2)"}, []string{"critic", "pragmatist", "stakeholder", "historian"}, ""},
		{"custom without a name rule, and the rest", "Transactions,Q1", []string{
			"Transactions=tags:invoices", // "action" inside a word is not an action
			"Q1=from:2026-01-01;to:2026-03-31",
		}, []string{"Transactions(1)", "Q1(4)", "other sources(3)"}, []string{"analyst", "advocate", "critic"}, ""},
		{"paths", "", []string{"Risk folder=paths:.sot/corpus/risks/**"}, []string{"Risk folder(2)", "other sources(6)"}, []string{"critic", "analyst"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions(t, top, "http://127.0.0.1:1")
			o.Question, o.Groups = groupQuestion, tt.groups
			for _, d := range tt.custom {
				g, err := config.ParseCustomGroup(d)
				if err != nil {
					t.Fatal(err)
				}
				o.CustomGroups = append(o.CustomGroups, g)
			}
			p, err := Prepare(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			var got, roles []string
			for _, g := range p.Groups {
				got = append(got, fmt.Sprintf("%s(%d)", g.Group.Name, len(g.Group.Members)))
				roles = append(roles, g.Role)
			}
			if tt.roles != nil && !slices.Equal(got, tt.want) {
				t.Errorf("groups %v (%s), want %v", got, p.GroupsWhy, tt.want)
			}
			if tt.roles == nil && !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(tt.want))) {
				t.Errorf("groups %v (%s), want %v in any order", got, p.GroupsWhy, tt.want)
			}
			if tt.roles != nil && !slices.Equal(roles, tt.roles) {
				t.Errorf("roles %v, want %v", roles, tt.roles)
			}
			if tt.first != "" && (len(roles) == 0 || roles[0] != tt.first) {
				t.Errorf("roles %v, want the first group read as %s", roles, tt.first)
			}
			seen := map[string]bool{}
			for _, r := range roles {
				if seen[r] {
					t.Errorf("two groups read as %s", r)
				}
				seen[r] = true
			}
			if len(p.Readings) != len(p.Groups) {
				t.Errorf("%d readings for %d groups", len(p.Readings), len(p.Groups))
			}
		})
	}
}

// Group decomposition needs at least min_agents_for_group_decomposition
// sources in 2 or more groups and a question that is not simple.
func TestAskGroupThresholds(t *testing.T) {
	top := taggedCorpus(t)
	tests := []struct {
		name     string
		question string
		min      int
		groups   string
		custom   []string
		want     bool
		why      string
	}{
		{"enough", groupQuestion, 6, "temporal", nil, true, "by group: 2 groups over 8 sources"},
		{"exactly the minimum", groupQuestion, 8, "temporal", nil, true, "by group"},
		{"one source short", groupQuestion, 9, "temporal", nil, false, "8 sources, fewer than min_agents_for_group_decomposition (9)"},
		{"a simple question", "What is the billing migration?", 6, "temporal", nil, false, "a simple question"},
		{"one group", groupQuestion, 6, "", []string{"Everything=tags:billing-migration,customers,security,action-items,timeline"}, false, "1 group with sources"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions(t, top, "http://127.0.0.1:1")
			o.Question, o.Groups = tt.question, tt.groups
			o.Config.Ask.MinAgentsForGroupDecomposition = tt.min
			for _, d := range tt.custom {
				g, _ := config.ParseCustomGroup(d)
				o.CustomGroups = append(o.CustomGroups, g)
			}
			p, err := Prepare(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(p.Groups) > 0; got != tt.want || !strings.Contains(p.GroupsWhy, tt.why) {
				t.Errorf("by group %v (%s), want %v (%s)", got, p.GroupsWhy, tt.want, tt.why)
			}
			if !tt.want {
				// Read one by one, each source is read by its role, or
				// in the span of a cross-source role; no reading is a
				// group's.
				read := map[string]bool{}
				for _, r := range p.Readings {
					if strings.HasPrefix(r.Source, "group:") {
						t.Errorf("reading %s is a group's: %s", r.ID, r.Source)
					}
					read[r.Source] = true
					for _, m := range r.Members {
						read[m] = true
					}
				}
				for _, c := range p.Chosen {
					if !read[c.ID] {
						t.Errorf("source %s is not read", c.ID)
					}
				}
			}
		})
	}
}

// A custom group name --groups asks for that nobody defined is a usage
// error that lists the groups there are.
func TestAskUnknownCustomGroup(t *testing.T) {
	top := taggedCorpus(t)
	o := testOptions(t, top, "http://127.0.0.1:1")
	o.Question, o.Groups = groupQuestion, "Risks,Nope"
	o.Config.Ask.CustomGroups = []config.CustomGroup{{Name: "Risks", Tags: []string{"security"}}}
	_, err := Prepare(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), `"Nope" is no grouping`) || !strings.Contains(err.Error(), `the custom groups are "Risks"`) {
		t.Fatalf("Prepare = %v", err)
	}
}

// A group too large for one prompt is read in parts, every member in one
// of them: nothing is cut.
func TestAskLargeGroupIsSplit(t *testing.T) {
	top := taggedCorpus(t)
	// Make two notes of Q1 long: with a 32k-token model a group of them
	// does not fit one prompt.
	long := strings.Repeat("The billing migration review went through every invoice line and vendor clause again. ", 1200)
	for _, f := range []string{"risks/security-review.md", "planning/kickoff.md"} {
		path := filepath.Join(top, ".sot", "corpus", f)
		b, _ := os.ReadFile(path)
		os.WriteFile(path, append(b, []byte("\n\n## Full Transcript\n\n"+long+"\n")...), 0o644)
	}
	o := testOptions(t, top, "http://127.0.0.1:1")
	o.Question, o.Groups, o.Model = groupQuestion, "temporal", "openai:qwen-32k"
	p, err := Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	parts := 0
	var text strings.Builder
	for _, r := range p.Readings {
		if r.Source == "group:quarter:q1 2026" {
			parts++
			text.WriteString(r.Text)
			if r.Parts < 2 || len(r.Members) != 4 {
				t.Errorf("reading %s: part %d of %d, %d members", r.ID, r.Part, r.Parts, len(r.Members))
			}
		}
	}
	if parts < 2 {
		t.Fatalf("the Q1 group was read in %d part(s), want it split", parts)
	}
	for _, g := range p.Groups {
		if g.Group.Name != "Q1 2026" {
			continue
		}
		for _, m := range g.Group.Members {
			if !strings.Contains(text.String(), "## Source: "+p.Sources[m].Title) {
				t.Errorf("member %s is in no part", p.Sources[m].Title)
			}
		}
	}
	if got := strings.Count(text.String(), "every invoice line"); got < 2*1200-2 {
		t.Errorf("the parts hold %d of the %d repeated sentences: text was cut", got, 2*1200)
	}
}

// Temporal groups are periods of the sources' parsed dates; a model's
// free-text quarter names a source's period only when the source has no
// date and the text parses as one. The groups come in time order, with the
// sources that fall in no period last, as "undated".
func TestGroupsOfPeriods(t *testing.T) {
	day := func(s string) time.Time {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	doc := func(id, date, quarter string) index.Doc {
		d := index.Doc{ID: id, Title: id, Type: "meeting", Path: id + ".md",
			Analysis: []byte(fmt.Sprintf(`{"sotMetadata": {"meetingType": "planning", "temporalContext": {"quarter": %q}}}`, quarter))}
		if date != "" {
			d.Date = day(date)
		}
		return d
	}
	docs := []index.Doc{
		doc("board", "2025-10-01", "The board meets after the pilot ships"),
		doc("kickoff", "2026-01-05", "Q3 2025"),
		doc("plan", "2025-07-02", "the planning quarter"),
		doc("undated-q2", "", "2025-Q2"),
		doc("undated-text", "", "sometime before the audit"),
		doc("undated-q4", "", "q4/2025"),
	}
	for _, by := range []struct {
		by   string
		want []string
	}{
		{"temporal", []string{"Q2 2025: undated-q2", "Q3 2025: plan", "Q4 2025: board, undated-q4", "Q1 2026: kickoff", "undated: undated-text"}},
		{"temporal:month", []string{"July 2025: plan", "October 2025: board", "January 2026: kickoff", "undated: undated-q2, undated-text, undated-q4"}},
	} {
		gas, err := GroupsOf(docs, by.by, t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ga := range gas {
			got = append(got, ga.Group.Name+": "+strings.Join(ga.Group.Members, ", "))
		}
		if !slices.Equal(got, by.want) {
			t.Errorf("%s: groups\n%s\nwant\n%s", by.by, strings.Join(got, "\n"), strings.Join(by.want, "\n"))
		}
	}
	// Selection diversifies on the same periods.
	c := candidateOf(corpus.Source{ID: "s", Date: day("2025-08-20"), Metadata: &corpus.Metadata{TemporalContext: &corpus.TemporalContext{Quarter: "the retro quarter"}}}, 1)
	if q := c.Fields[route.FieldQuarter]; q != "Q3 2025" {
		t.Errorf("a dated source's quarter is %q, want Q3 2025", q)
	}
}
