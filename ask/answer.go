package ask

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sotlabs/sot/internal/markdown"
)

// Answer is everything a question produced: answer.json holds it whole,
// and ANSWER.md is rendered from it.
type Answer struct {
	RunID    string `json:"run_id"`
	Question string `json:"question"`
	// Intent and Complexity classify the question; Rule is the rule that
	// fired (or "--intent").
	Intent     string `json:"intent"`
	Complexity string `json:"complexity"`
	Rule       string `json:"rule"`
	// SoT is false in the control run, or when too few sources were
	// relevant for a society (SoTNote says which).
	SoT      bool   `json:"sot"`
	SoTNote  string `json:"sot_note,omitempty"`
	Strategy string `json:"role_strategy,omitempty"`
	// Labels: each contribution carries its perspective
	// (include_perspective_in_response).
	Labels bool `json:"include_perspective_in_response"`
	// ByGroup is set when the sources were read by group: every tension is
	// then one between groups.
	ByGroup bool `json:"by_group,omitempty"`

	Sources  []SourceUse `json:"sources"`
	Evidence []Evidence  `json:"answers"`
	// Conflicts is the lexical detector's analysis, in northstar's shape:
	// the counts of every pair, the ListedPairs strongest conflicts and
	// agreements, and pairsFile when PairsFile holds them all; nil when
	// conflict detection is off.
	Conflicts json.RawMessage `json:"lexical_conflicts,omitempty"`
	// ConflictSummary is what ANSWER.md shows of it.
	ConflictSummary *ConflictSummary `json:"conflict_summary,omitempty"`
	Debate          *Debate          `json:"debate,omitempty"`

	Sentences []Sentence `json:"sentences"`
	Dropped   []Dropped  `json:"dropped,omitempty"`
	Missing   []Missing  `json:"missing,omitempty"`
	Skipped   []Skipped  `json:"skipped,omitempty"`
	Notes     []string   `json:"notes,omitempty"`
	Usage     Usage      `json:"usage"`

	// wroteNone: the reduce step answered, twice, with no sentence.
	wroteNone bool
}

// SourceUse is a source the question read: why it was chosen and from
// which perspective it was read.
type SourceUse struct {
	ID        string  `json:"id"`
	Title     string  `json:"title"`
	Type      string  `json:"type,omitempty"`
	Date      string  `json:"date,omitempty"`
	Relevance float64 `json:"relevance"`
	Bonus     float64 `json:"diversity_bonus,omitempty"` // 0 when absent
	// Chosen says why selection picked the source: its relevance and the
	// diversity fields whose value it brought first.
	Chosen  string `json:"chosen"`
	Role    string `json:"role,omitempty"`
	RoleWhy string `json:"role_why,omitempty"`
	Parts   int    `json:"parts"`
	// Group is the group the source was read in, with --groups.
	Group   string   `json:"group,omitempty"`
	Answers []string `json:"answers"` // the ids of the answers read from it
}

// ConflictSummary counts what the lexical detector found: every pair, not
// only those answer.json lists.
type ConflictSummary struct {
	Tensions   int      `json:"tensions"`
	Agreements int      `json:"agreements"`
	Themes     []string `json:"themes"`
	Summary    string   `json:"summary"`
	// Truncated: answer.json lists only the ListedPairs strongest pairs of
	// a type, of more.
	Truncated bool `json:"truncated,omitempty"`
	// PairsFile is the file of the run's directory that holds every pair,
	// when it was asked for.
	PairsFile string `json:"pairs_file,omitempty"`
}

// listing says where the pairs of the conflict summary are listed.
func (c *ConflictSummary) listing() string {
	switch {
	case c.Truncated && c.PairsFile != "":
		return fmt.Sprintf("answer.json lists the %d strongest of each; %s holds every pair, one JSON line each.", ListedPairs, c.PairsFile)
	case c.Truncated:
		return fmt.Sprintf("answer.json lists the %d strongest of each; --format %s writes every pair to %s.", ListedPairs, FormatPairs, PairsFile)
	case c.PairsFile != "":
		return fmt.Sprintf("answer.json lists every pair; so does %s, one JSON line each.", c.PairsFile)
	}
	return ""
}

// Skipped is a file of the corpus that could not be read.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Usage is what the question cost, replayed calls included.
type Usage struct {
	Calls int `json:"calls"`
	// NewCalls are the calls this invocation sent to a provider.
	NewCalls          int     `json:"new_calls"`
	InputTokens       int     `json:"input_tokens"`
	CachedInputTokens int     `json:"cached_input_tokens"`
	OutputTokens      int     `json:"output_tokens"`
	CostUSD           float64 `json:"cost_usd"`
	// Replayed answers came from the run's journal, CacheHits from the
	// response cache.
	Replayed  int `json:"replayed"`
	CacheHits int `json:"cache_hits"`
	// WallMS is how long this invocation's execution took, replays
	// included (sot ask --compare reads a run's wall time from its
	// journal instead; see compare.Definitions).
	WallMS int64 `json:"wall_ms"`
}

// Partial reports whether parts of the answer are missing.
func (a *Answer) Partial() bool { return len(a.Missing) > 0 }

// answerIndex finds an Answer's answers by id: the place in Evidence of
// the first answer of each id. It is built once for a rendering, so that
// citing stays linear in the citations however many answers there are.
type answerIndex map[string]int

// index returns the answerIndex of a.Evidence.
func (a *Answer) index() answerIndex {
	ix := make(answerIndex, len(a.Evidence))
	for i, e := range a.Evidence {
		if _, ok := ix[e.ID]; !ok {
			ix[e.ID] = i
		}
	}
	return ix
}

// cited returns the answer a citation names: its id, in any case, with
// white space around it.
func (a *Answer) cited(ix answerIndex, id string) (*Evidence, bool) {
	i, ok := ix[strings.ToUpper(strings.TrimSpace(id))]
	if !ok {
		return nil, false
	}
	return &a.Evidence[i], true
}

// cite renders the citations of a sentence: each answer with its source,
// and its perspective when the answer is labelled so.
func (a *Answer) cite(ix answerIndex, ids []string) string {
	var parts []string
	for _, id := range ids {
		e, ok := a.cited(ix, id)
		if !ok {
			continue
		}
		s := e.ID + ", " + markdown.OneLine(e.Title)
		if a.Labels && e.Role != "" {
			s = e.ID + ", " + markdown.OneLine(e.Role) + ", " + markdown.OneLine(e.Title)
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return ""
	}
	return " [" + strings.Join(parts, "; ") + "]"
}

// Markdown renders ANSWER.md.
func (a *Answer) Markdown() string {
	var b strings.Builder
	line := func(format string, args ...any) {
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
	}
	ix := a.index()
	line("# Answer")
	line("")
	line("**Question:** %s", markdown.OneLine(a.Question))
	line("")
	if a.Partial() {
		line("> **Partial answer:** %d part(s) could not be made; see Missing below.", len(a.Missing))
		line("")
	}
	if len(a.Sentences) == 0 {
		line("_No sentence of the answer stood on its sources._")
	}
	for _, s := range a.Sentences {
		text := markdown.OneLine(s.Text)
		if q := strings.TrimSpace(s.Quote); q != "" {
			text += " (" + markdown.Code(q) + ")"
		}
		line("- %s%s", text, a.cite(ix, s.Answers))
	}
	line("")

	if c := a.ConflictSummary; c != nil {
		line("## Conflict summary")
		line("")
		themes := "none"
		if len(c.Themes) > 0 {
			themes = markdown.OneLine(strings.Join(c.Themes, ", "))
		}
		between := "the perspectives' answers"
		if a.ByGroup {
			between = "the groups' answers (inter-group)"
		}
		line("%d tension(s), %d agreement(s) between %s, by their words; key themes: %s.", c.Tensions, c.Agreements, between, themes)
		if c.Summary != "" {
			line("")
			line("%s", markdown.OneLine(c.Summary))
		}
		if l := c.listing(); l != "" {
			line("")
			line("%s", markdown.OneLine(l))
		}
		line("")
	}
	if d := a.Debate; d != nil {
		if a.ByGroup {
			line("## Tensions between groups")
		} else {
			line("## Tensions")
		}
		line("")
		if len(d.Tensions) == 0 {
			line("The debate step found no tension between the answers.")
		}
		for _, t := range d.Tensions {
			treatment := "not treated by the answer"
			switch t.Treatment {
			case "addressed":
				treatment = "addressed: " + markdown.OneLine(t.How)
			case "open":
				treatment = "open: " + markdown.OneLine(t.How)
			}
			line("- **%s, %s**: %s", t.ID, markdown.OneLine(t.Topic), treatment)
			for _, s := range t.Sides {
				line("  - %s%s", markdown.OneLine(s.Position), a.cite(ix, s.Answers))
			}
		}
		for _, r := range d.UniqueRisks {
			line("- Raised by one perspective only: %s%s", markdown.OneLine(r.Risk), a.cite(ix, []string{r.Answer}))
		}
		for _, as := range d.Assumptions {
			line("- Differing assumption: %s%s", markdown.OneLine(as.Assumption), a.cite(ix, as.Answers))
		}
		line("")
	}

	line("## Perspectives")
	line("")
	byRole := map[string][]Evidence{}
	var roles []string
	for _, e := range a.Evidence {
		r := e.Role
		if r == "" {
			r = "plain reading"
		}
		if _, ok := byRole[r]; !ok {
			roles = append(roles, r)
		}
		byRole[r] = append(byRole[r], e)
	}
	for _, r := range roles {
		line("### %s", markdown.OneLine(r))
		line("")
		for _, e := range byRole[r] {
			if !e.Addresses {
				line("- %s, %s: does not address the question. %s", e.ID, markdown.OneLine(e.Title), markdown.OneLine(e.Summary))
				continue
			}
			line("- %s, %s: %s", e.ID, markdown.OneLine(e.Title), markdown.OneLine(e.Summary))
			for _, p := range e.Points {
				q := ""
				if p.QuoteFound {
					q = " (" + markdown.Code(p.Quote) + ")"
				}
				line("  - %s%s", markdown.OneLine(p.Point), q)
			}
		}
		line("")
	}

	line("## Sources")
	line("")
	line("| source | relevance | diversity bonus | why chosen | read as | why |")
	line("| --- | --- | --- | --- | --- | --- |")
	for _, s := range a.Sources {
		title := markdown.OneLine(s.Title)
		if s.Parts > 1 {
			title += fmt.Sprintf(" (%d parts)", s.Parts)
		}
		if s.Group != "" {
			title += " (group " + markdown.OneLine(s.Group) + ")"
		}
		role := s.Role
		if role == "" {
			role = "plain"
		}
		line("| %s | %.2f | %.2f | %s | %s | %s |", cell(title), s.Relevance, s.Bonus, cell(markdown.OneLine(s.Chosen)), cell(markdown.OneLine(role)), cell(markdown.OneLine(s.RoleWhy)))
	}
	line("")
	if len(a.Dropped) > 0 {
		line("## Dropped from the answer")
		line("")
		for _, d := range a.Dropped {
			line("- %s (dropped: %s)", markdown.OneLine(d.Sentence.Text), markdown.OneLine(d.Reason))
		}
		line("")
	}
	if len(a.Missing) > 0 {
		line("## Missing")
		line("")
		for _, m := range a.Missing {
			line("- %s, %s: %s", markdown.OneLine(m.Step), markdown.OneLine(m.What), markdown.OneLine(m.Error))
		}
		line("")
	}
	if len(a.Skipped) > 0 {
		line("## Files not read")
		line("")
		for _, s := range a.Skipped {
			line("- %s: %s", markdown.Code(s.Path), markdown.OneLine(s.Reason))
		}
		line("")
	}
	line("## How this answer was made")
	line("")
	line("- Question: %s, %s (%s).", markdown.OneLine(a.Intent), markdown.OneLine(a.Complexity), markdown.OneLine(a.Rule))
	switch {
	case a.SoT:
		line("- A society of thought: each source read by one perspective (%s strategy).", markdown.OneLine(a.Strategy))
	case a.SoTNote != "":
		line("- No society of thought: %s", markdown.OneLine(a.SoTNote))
	}
	for _, n := range a.Notes {
		line("- %s", markdown.OneLine(n))
	}
	u := a.Usage
	line("- %d call(s), %d input tokens (%d cached), %d output tokens, $%.4f.", u.Calls, u.InputTokens, u.CachedInputTokens, u.OutputTokens, u.CostUSD)
	return b.String()
}

// cell keeps a table cell in its column.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
