package askcmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
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
	debate := "no debate step: " + p.DebateWhy
	if p.Debate {
		debate = "a debate step: " + p.DebateWhy
	}
	cmdutil.Fprintf(w, "sot: %d reading(s), %s; at most %d call(s)\n", len(p.Readings), debate, p.Calls())
}
