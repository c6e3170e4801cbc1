package askcmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sotlabs/sot/ask"
	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/internal/status"
)

// printAnswer prints the answer to w in the format --stdout names ("" for
// none).
func printAnswer(w io.Writer, format string, a *ask.Answer) error {
	switch format {
	case "markdown":
		io.WriteString(w, a.Markdown())
	case "json":
		b, _ := json.MarshalIndent(a, "", "  ")
		w.Write(append(b, '\n'))
	case "html":
		b, err := a.HTML()
		if err != nil {
			return err
		}
		w.Write(b)
	}
	return nil
}

// summarize says what the answer holds, what it cost and where it is. Its
// calls are those the live display counted (calls), as the run's journal
// records them: one answer a call, replayed and cached ones included. A
// partial answer's missing parts are listed, and a budget that stopped
// them is said once.
func summarize(human io.Writer, out *ask.Outcome, calls status.Counts) {
	if c := out.Answer.ConflictSummary; c != nil {
		fmt.Fprintf(human, "sot: by their words, %d tension(s) and %d agreement(s) between the perspectives", c.Tensions, c.Agreements)
		if len(c.Themes) > 0 {
			cmdutil.Fprintf(human, "; themes: %s", strings.Join(c.Themes, ", "))
		}
		fmt.Fprintln(human)
		if c.PairsFile != "" {
			cmdutil.Fprintf(human, "sot: every pair is in %s\n", filepath.Join(out.Plan.OutputDir, c.PairsFile))
		}
	}
	if d := out.Answer.Debate; d != nil {
		open := 0
		for _, t := range d.Tensions {
			if t.Treatment != "addressed" {
				open++
			}
		}
		fmt.Fprintf(human, "sot: the debate named %d tension(s); %d left open in the answer\n", len(d.Tensions), open)
	}
	u := out.Answer.Usage
	fmt.Fprintf(human, "sot: %d sentence(s) in the answer, %d dropped; %d call(s), $%.4f", len(out.Answer.Sentences), len(out.Answer.Dropped), calls.Done, u.CostUSD)
	switch {
	case calls.Replayed > 0 && calls.Cached > 0:
		fmt.Fprintf(human, " (%d replayed from the journal, %d answered from the response cache)", calls.Replayed, calls.Cached)
	case calls.Replayed > 0:
		fmt.Fprintf(human, " (%d replayed from the journal)", calls.Replayed)
	case calls.Cached > 0:
		fmt.Fprintf(human, " (%d of them answered from the response cache)", calls.Cached)
	}
	fmt.Fprintf(human, "\nsot: wrote %s\n", out.Files[0])
	var partial *ask.PartialError
	if !errors.As(out.Verdict(), &partial) {
		return
	}
	var parts []cmdutil.MissingPart
	stop := ""
	for _, m := range out.Answer.Missing {
		parts = append(parts, cmdutil.MissingPart{Name: m.Step + ", " + m.What, Error: m.Error, Budget: m.Budget})
		if m.Budget && stop == "" {
			stop = m.Error
		}
	}
	cmdutil.PrintMissing(human, parts)
	if stop != "" {
		cmdutil.Say(human, stop)
		fmt.Fprintln(human, "sot: raise the budget and run the same command again to finish; finished calls are replayed, not paid again")
	}
}

// printPlan shows each step of the plan: what the question is, which
// sources answer it and from which perspective.
func printPlan(w io.Writer, p *ask.Plan) {
	c := p.Classification
	cmdutil.Fprintf(w, "sot: question: %s, %s (%s)\n", c.Intent, c.Complexity, c.Rule)
	if p.SoT {
		cmdutil.Fprintf(w, "sot: roles: %s (%s strategy)\n", strings.Join(p.Roles, ", "), p.Strategy)
	} else {
		cmdutil.Fprintf(w, "sot: %s\n", p.SoTNote)
	}
	if len(p.Groups) > 0 {
		cmdutil.Fprintf(w, "sot: read %s:\n", p.GroupsWhy)
		for _, g := range p.Groups {
			cmdutil.Fprintf(w, "  - %s: %d source(s) as %s (%s)\n", g.Group.Name, len(g.Group.Members), g.Role, g.Why)
		}
	} else if p.GroupsWhy != "" {
		cmdutil.Fprintf(w, "sot: groups asked for, but read %s\n", p.GroupsWhy)
	}
	cmdutil.Fprintf(w, "sot: %d source(s) of %d read:\n", len(p.Chosen), len(p.Sources))
	for i, ch := range p.Chosen {
		s := p.Sources[ch.ID]
		role := ""
		if p.SoT {
			role = fmt.Sprintf(" as %s (%s)", p.Assignments[i].Role, p.Assignments[i].Why)
		}
		cmdutil.Fprintf(w, "  - %s: relevance %.2f, diversity bonus %.2f%s\n", s.Title, ch.Normalized, ch.Bonus, role)
	}
	for _, s := range p.Skipped {
		cmdutil.Fprintf(w, "  - skipped %s: %s\n", s.Path, s.Reason)
	}
	if len(p.Spans) > 0 {
		cmdutil.Fprintf(w, "sot: %d cross-source reading(s), each of its sources together in one reading:\n", len(p.Spans))
		for _, sp := range spansOf(p) {
			var titles []string
			for _, m := range sp.Members {
				t := m.Title
				if !m.Own {
					t += " (added; also read as " + m.Role + ")"
				}
				titles = append(titles, t)
			}
			cmdutil.Fprintf(w, "  - %s reads %d source(s): %s (%s)\n", sp.Role, len(sp.Members), strings.Join(titles, "; "), sp.Why)
		}
	}
	debate := "no debate step: " + p.DebateWhy
	if p.Debate {
		debate = "a debate step: " + p.DebateWhy
	}
	cmdutil.Fprintf(w, "sot: %d reading(s), %s; at most %d call(s)\n", len(p.Readings), debate, p.Calls())
}

// planDoc is the plan of a dry run as --stdout json prints it: what the
// human plan shows, with ids beside titles.
type planDoc struct {
	RunID        string           `json:"run_id"`
	OutputDir    string           `json:"output_dir"`
	Question     string           `json:"question"`
	Model        string           `json:"model"`
	Intent       string           `json:"intent"`
	Complexity   string           `json:"complexity"`
	Rule         string           `json:"rule"`
	SoT          bool             `json:"sot"`
	SoTNote      string           `json:"sot_note,omitempty"`
	Roles        []string         `json:"roles,omitempty"`
	RoleStrategy string           `json:"role_strategy,omitempty"`
	Debate       bool             `json:"debate"`
	DebateWhy    string           `json:"debate_why"`
	GroupsWhy    string           `json:"groups_why,omitempty"`
	Groups       []plannedGroup   `json:"groups,omitempty"`
	Sources      []plannedSource  `json:"sources"`
	Skipped      []plannedSkip    `json:"skipped,omitempty"`
	Spans        []plannedSpan    `json:"spans,omitempty"`
	Readings     []plannedReading `json:"readings"`
	CallsMax     int              `json:"calls_max"`
	Notes        []string         `json:"notes,omitempty"`
}

type plannedGroup struct {
	Name    string   `json:"name"`
	Role    string   `json:"role"`
	Members []string `json:"members"`
	Why     string   `json:"why"`
}

type plannedSource struct {
	ID             string  `json:"id"`
	Title          string  `json:"title"`
	Relevance      float64 `json:"relevance"`
	DiversityBonus float64 `json:"diversity_bonus"`
	Role           string  `json:"role,omitempty"`
	RoleWhy        string  `json:"role_why,omitempty"`
}

type plannedSkip struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// plannedSpan is a cross-source role's reading: the sources it reads
// together, in reading order.
type plannedSpan struct {
	Role    string       `json:"role"`
	Rule    string       `json:"rule"`
	Across  string       `json:"across,omitempty"`
	Why     string       `json:"why"`
	Members []spanMember `json:"members"`
}

// spanMember is one source of a span. Own is true when the strategy gave
// the source to the span's role; an added source is also read by its own
// role, Role.
type spanMember struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Own   bool   `json:"own"`
	Role  string `json:"role,omitempty"`
}

// plannedReading is one MAP call: its answer's id, the role it reads
// from, and the sources it reads.
type plannedReading struct {
	ID      string   `json:"id"`
	Role    string   `json:"role,omitempty"`
	Title   string   `json:"title"`
	Sources []string `json:"sources"`
	Part    int      `json:"part"`
	Parts   int      `json:"parts"`
}

// spansOf gives the plan's spans with each member's title and, for the
// members added to span time or themes, the role that reads them on
// their own.
func spansOf(p *ask.Plan) []plannedSpan {
	roleOf := map[string]string{}
	for i, ch := range p.Chosen {
		if i < len(p.Assignments) {
			roleOf[ch.ID] = p.Assignments[i].Role
		}
	}
	var out []plannedSpan
	for _, sp := range p.Spans {
		ps := plannedSpan{Role: sp.Role, Rule: sp.Rule, Across: sp.Across, Why: sp.Why}
		for _, id := range sp.Members {
			m := spanMember{ID: id, Title: p.Sources[id].Title, Own: slices.Contains(sp.Own, id)}
			if !m.Own {
				m.Role = roleOf[id]
			}
			ps.Members = append(ps.Members, m)
		}
		out = append(out, ps)
	}
	return out
}

// printPlanJSON writes the plan of a dry run to w as one JSON document.
func printPlanJSON(w io.Writer, p *ask.Plan) error {
	c := p.Classification
	doc := planDoc{RunID: p.RunID, OutputDir: p.OutputDir, Question: p.Question, Model: p.Model,
		Intent: string(c.Intent), Complexity: string(c.Complexity), Rule: c.Rule,
		SoT: p.SoT, SoTNote: p.SoTNote, Debate: p.Debate, DebateWhy: p.DebateWhy, GroupsWhy: p.GroupsWhy,
		Sources: []plannedSource{}, Spans: spansOf(p), Readings: []plannedReading{}, CallsMax: p.Calls(), Notes: p.Notes}
	if p.SoT {
		doc.Roles, doc.RoleStrategy = p.Roles, string(p.Strategy)
	}
	for _, g := range p.Groups {
		doc.Groups = append(doc.Groups, plannedGroup{Name: g.Group.Name, Role: g.Role, Members: g.Group.Members, Why: g.Why})
	}
	for i, ch := range p.Chosen {
		s := plannedSource{ID: ch.ID, Title: p.Sources[ch.ID].Title, Relevance: ch.Normalized, DiversityBonus: ch.Bonus}
		if p.SoT && i < len(p.Assignments) {
			s.Role, s.RoleWhy = p.Assignments[i].Role, p.Assignments[i].Why
		}
		doc.Sources = append(doc.Sources, s)
	}
	for _, s := range p.Skipped {
		doc.Skipped = append(doc.Skipped, plannedSkip{Path: s.Path, Reason: s.Reason})
	}
	for _, r := range p.Readings {
		pr := plannedReading{ID: r.ID, Title: r.Title, Sources: r.Members, Part: r.Part, Parts: r.Parts}
		if len(pr.Sources) == 0 {
			pr.Sources = []string{r.Source}
		}
		if r.Role != nil {
			pr.Role = r.Role.ID
		}
		doc.Readings = append(doc.Readings, pr)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
