package debate

import (
	"fmt"
	"strings"

	"github.com/sotlabs/sot/internal/markdown"
)

// The Markdown outputs of a run, rendered from its Result alone, so their
// form never drifts from the data. Model and user text goes in through
// internal/markdown: one-line values flattened, longer text as block
// quotes, so no answer can open a section of its own.
const (
	LogFile    = "dialectic-log.md"
	ReportFile = "multi-observer-report.md"
)

// BranchFile is the name of branch n's file: branch-1.md, branch-2.md, ...
func BranchFile(n int) string { return fmt.Sprintf("branch-%d.md", n) }

// cell makes text fit a table cell.
func cell(s string) string { return strings.ReplaceAll(markdown.OneLine(s), "|", `\|`) }

// inline is one line of untrusted text, its asterisks and underscores
// left as they are but never able to start a line.
func inline(s string) string { return markdown.OneLine(s) }

// observerNames are the names of the observers with these ids, each on
// one line (inline).
func (r *Result) observerNames(ids []string) []string {
	var out []string
	for _, id := range ids {
		for _, o := range r.Observers {
			if o.ID == id {
				out = append(out, inline(o.Name))
			}
		}
	}
	return out
}

// header is the run's description, as a list.
func (r *Result) header(b *strings.Builder) {
	fmt.Fprintf(b, "- Started: %s\n", r.Started.Format("2006-01-02 15:04:05 MST"))
	fmt.Fprintf(b, "- Passage: %s (%d words)\n", markdown.Code(r.Passage.Name), r.Passage.Words())
	var names []string
	for _, d := range r.Debaters {
		names = append(names, inline(d.Name))
	}
	fmt.Fprintf(b, "- Debaters: %s\n", strings.Join(names, ", "))
	turns := "turn-taking"
	if r.Turns == Simultaneous {
		turns = "simultaneous"
	}
	fmt.Fprintf(b, "- Protocol: %s, %d round(s) in the main debate, %d in each branch\n", turns, r.Rounds, r.BranchRounds)
	fmt.Fprintf(b, "- Observers: %s\n", r.observersLine())
	if g := r.Graph; g != nil {
		fmt.Fprintf(b, "- Argument graph: %s; %s\n", markdown.Code(g.File), inline(g.Note))
	}
	fmt.Fprintf(b, "- Model: %s\n", markdown.Code(r.Model))
	fmt.Fprintf(b, "- Run: %s\n", markdown.Code(r.RunID))
}

func (r *Result) observersLine() string {
	if len(r.Observers) == 0 {
		return "none; one generic branch question"
	}
	var names []string
	for _, o := range r.Observers {
		names = append(names, inline(o.Name))
	}
	how := "named"
	switch {
	case strings.HasPrefix(r.ObserverMode, "generate:"):
		how = "generated, " + r.ObserverMode
	case strings.HasPrefix(r.ObserverMode, "ensemble "):
		how = "from " + markdown.Code(strings.TrimPrefix(r.ObserverMode, "ensemble "))
	}
	return fmt.Sprintf("%s (%s)", strings.Join(names, ", "), how)
}

// turns renders a debate's turns, each with its summary.
func turnsMarkdown(b *strings.Builder, level string, turns []*Turn) {
	if len(turns) == 0 {
		b.WriteString("No turn came back.\n\n")
	}
	for _, t := range turns {
		fmt.Fprintf(b, "%s Turn %d: %s (round %d)\n\n%s\n", level, t.N, inline(t.Name), t.Round, markdown.Quote("", t.Text))
		if t.Summary != "" {
			fmt.Fprintf(b, "*Summary:* %s\n\n", inline(t.Summary))
		} else {
			b.WriteString("*Summary:* missing\n\n")
		}
	}
}

// quoted is a block quote of s, or a note that it is missing.
func quoted(s, missing string) string {
	if strings.TrimSpace(s) == "" {
		return "*" + missing + "*\n"
	}
	return markdown.Quote("", s)
}

func synthesisMarkdown(b *strings.Builder, s *Synthesis) {
	list := func(title string, items []string) {
		fmt.Fprintf(b, "**%s**\n\n", title)
		if len(items) == 0 {
			b.WriteString("- none\n")
		}
		for _, it := range items {
			fmt.Fprintf(b, "- %s\n", inline(it))
		}
		b.WriteString("\n")
	}
	list("Perspectives that emerged", s.Perspectives)
	list("Resolved", s.Resolved)
	list("Still in tension", s.InTension)
	b.WriteString(markdown.Quote("", s.Summary))
}

// askedBy says who asked a branch's question.
func (r *Result) askedBy(br *Branch) string {
	q := br.Question
	if q.Observer == "" {
		return "the generic prompt (no observers)"
	}
	s := inline(q.Name)
	if more := r.observerNames(br.Observers[1:]); len(more) > 0 {
		s += fmt.Sprintf(" (and %s, whose near-duplicate question was merged here)", strings.Join(more, ", "))
	}
	return s
}

// branchPoint renders a branch's question.
func (r *Result) branchPoint(b *strings.Builder, br *Branch) {
	q := br.Question
	fmt.Fprintf(b, "- **Question:** %s\n", inline(q.Question))
	fmt.Fprintf(b, "- **Asked by:** %s\n", r.askedBy(br))
	fmt.Fprintf(b, "- **Missing from the transcript:** %s\n", inline(q.Missing))
	why := "Why this observer sees it"
	if q.Observer == "" {
		why = "Why it matters"
	}
	fmt.Fprintf(b, "- **%s:** %s\n", why, inline(q.Why))
	fmt.Fprintf(b, "- **Where the main debate stands:** %s\n\n", inline(q.Context))
}

// branchBody renders a branch from its debate on.
func (r *Result) branchBody(b *strings.Builder, br *Branch, level, suffix string) {
	fmt.Fprintf(b, "%s Branch Debate%s\n\n", level, suffix)
	turnsMarkdown(b, level+"#", br.Debate.Turns)
	fmt.Fprintf(b, "%s# Phase Summary%s\n\n%s\n", level, suffix, quoted(br.Debate.Summary, "missing"))
	if br.Synthesis != nil {
		fmt.Fprintf(b, "%s Branch Synthesis%s\n\n", level, suffix)
		synthesisMarkdown(b, br.Synthesis)
		b.WriteString("\n")
	}
	if br.MergeBack != "" {
		fmt.Fprintf(b, "%s Enriched Understanding (Merge-Back)%s\n\n%s\n", level, suffix, markdown.Quote("", br.MergeBack))
	}
	if br.Failed != "" {
		fmt.Fprintf(b, "%s Branch Not Completed%s\n\nThe branch stopped at its %s; see Missing.\n\n", level, suffix, inline(br.Failed))
	}
}

// missingMarkdown lists what is missing, and the notes.
func (r *Result) missingMarkdown(b *strings.Builder) {
	if len(r.Missing) > 0 {
		b.WriteString("## Missing\n\n")
		for _, m := range r.Missing {
			fmt.Fprintf(b, "- %s, %s: %s\n", inline(m.Step), inline(m.What), inline(m.Error))
		}
		b.WriteString("\n")
	}
	if len(r.Notes) > 0 {
		b.WriteString("## Notes\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(b, "- %s\n", inline(n))
		}
		b.WriteString("\n")
	}
}

// DialecticLog renders dialectic-log.md: the seed's log, section by
// section, with the session's figures at the end.
func (r *Result) DialecticLog() string {
	var b strings.Builder
	b.WriteString("# Dialectical Debate Log\n\n")
	if r.Partial() {
		fmt.Fprintf(&b, "> **Partial debate:** %d part(s) could not be made; see Missing.\n\n", len(r.Missing))
	}
	r.header(&b)
	fmt.Fprintf(&b, "\n## Passage\n\n%s\n## Main Debate\n\n", markdown.Quote("", r.Passage.Text))
	turnsMarkdown(&b, "###", r.Main.Turns)
	fmt.Fprintf(&b, "## Phase Summary: Main Debate\n\n%s\n", quoted(r.Main.Summary, "missing"))
	for _, br := range r.Branches {
		suffix := fmt.Sprintf(": Branch %d", br.N)
		fmt.Fprintf(&b, "## Branch Point Identified%s\n\n", suffix)
		r.branchPoint(&b, br)
		r.branchBody(&b, br, "##", suffix)
	}
	if len(r.Merged) > 0 {
		b.WriteString("## Merged Questions\n\n")
		for _, m := range r.Merged {
			fmt.Fprintf(&b, "- %s asked %q; merged into branch %d, %s's question (word similarity %.2f)\n", inline(m.Observer), inline(m.Question), m.Into, inline(m.IntoAsker), m.Similarity)
		}
		b.WriteString("\n")
	}
	if r.Final != "" {
		fmt.Fprintf(&b, "## Final Merge: Enriched Understanding\n\n%s\n", markdown.Quote("", r.Final))
	}
	if r.Graph != nil {
		r.graphMarkdown(&b)
	}
	r.missingMarkdown(&b)
	u := r.Usage
	b.WriteString("## Session Complete\n\n")
	fmt.Fprintf(&b, "- Duration: %.1f seconds\n", float64(u.WallMS)/1000)
	fmt.Fprintf(&b, "- Calls: %d", u.Calls)
	if u.Replayed > 0 {
		fmt.Fprintf(&b, " (%d replayed from the journal, not paid again)", u.Replayed)
	}
	fmt.Fprintf(&b, "\n- Steps: %d (the critical path of dependent calls)\n", u.Steps)
	fmt.Fprintf(&b, "- Tokens: %d input (%d of them cached), %d output\n", u.InputTokens, u.CachedInputTokens, u.OutputTokens)
	fmt.Fprintf(&b, "- Cost: $%.4f\n", u.CostUSD)
	return b.String()
}

// BranchMarkdown renders branch-N.md: one branch, from its question to
// its merge-back.
func (r *Result) BranchMarkdown(br *Branch) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Branch %d\n\n", br.N)
	r.branchPoint(&b, br)
	r.branchBody(&b, br, "##", "")
	return b.String()
}

// ObserverReport renders multi-observer-report.md: the observers, how
// diverse they are and what each figure measures, each branch question
// with its synthesis and merge-back, and the distances between the
// questions.
func (r *Result) ObserverReport() string {
	var b strings.Builder
	b.WriteString("# Multi-Observer Report\n\n")
	if r.Partial() {
		fmt.Fprintf(&b, "> **Partial debate:** %d part(s) could not be made; see Missing.\n\n", len(r.Missing))
	}
	r.header(&b)
	fmt.Fprintf(&b, "- Branches: %d from %d question(s)\n\n## Observers\n\n", len(r.Branches), len(r.Questions))
	if len(r.Observers) == 0 {
		b.WriteString("No observers: the generic prompt asked for the most important unresolved question.\n\n")
	}
	for i, o := range r.Observers {
		fmt.Fprintf(&b, "### %d. %s\n\n", i+1, inline(o.Name))
		fmt.Fprintf(&b, "- **Origin:** %s\n- **Bias:** %s\n- **Focus:** %s\n", inline(o.Origin), inline(o.Bias), inline(o.Focus))
		var bs []string
		for _, s := range o.BlindSpots {
			bs = append(bs, inline(s))
		}
		fmt.Fprintf(&b, "- **Blind spots:** %s\n", strings.Join(bs, "; "))
		if n := len(o.Rejected); n > 0 {
			fmt.Fprintf(&b, "- **Regenerated:** %d time(s); discarded as too close:\n", n)
			for _, a := range o.Rejected {
				fmt.Fprintf(&b, "  - %s, %.2f from %s\n", inline(a.Name), a.Distance, inline(a.CloseTo))
			}
		}
		b.WriteString("\n")
	}
	if d := r.Diversity; d != nil {
		r.diversityMarkdown(&b, d)
	}
	b.WriteString("## Branch Questions\n\n")
	for _, br := range r.Branches {
		fmt.Fprintf(&b, "### Branch %d: asked by %s\n\n", br.N, r.askedBy(br))
		q := br.Question
		fmt.Fprintf(&b, "- **Question:** %s\n- **Missing from the transcript:** %s\n- **Why:** %s\n\n", inline(q.Question), inline(q.Missing), inline(q.Why))
		if br.Synthesis != nil {
			fmt.Fprintf(&b, "**Synthesis**\n\n")
			synthesisMarkdown(&b, br.Synthesis)
			b.WriteString("\n")
		}
		if br.MergeBack != "" {
			fmt.Fprintf(&b, "**Merge-back**\n\n%s\n", markdown.Quote("", br.MergeBack))
		}
		if br.Failed != "" {
			fmt.Fprintf(&b, "*Not completed: the branch stopped at its %s.*\n\n", inline(br.Failed))
		}
		fmt.Fprintf(&b, "Full branch: [%s](%s)\n\n", BranchFile(br.N), BranchFile(br.N))
	}
	if len(r.Merged) > 0 {
		b.WriteString("## Merged Questions\n\n")
		for _, m := range r.Merged {
			fmt.Fprintf(&b, "- %s asked %q; merged into branch %d, %s's question (word similarity %.2f)\n", inline(m.Observer), inline(m.Question), m.Into, inline(m.IntoAsker), m.Similarity)
		}
		b.WriteString("\n")
	}
	if d := r.Diversity; d != nil && d.Questions != nil {
		r.questionDistances(&b, d.Questions)
	}
	if r.Final != "" {
		fmt.Fprintf(&b, "## Final Merge: Enriched Understanding\n\n%s\n", markdown.Quote("", r.Final))
	}
	r.missingMarkdown(&b)
	return b.String()
}

func (r *Result) diversityMarkdown(b *strings.Builder, d *Diversity) {
	b.WriteString("## Diversity\n\n| Measure | Average | Min | Max | What it measures |\n| --- | --- | --- | --- | --- |\n")
	fmt.Fprintf(b, "| Seed Jaccard distance (bias + focus words) | %.3f | %.3f | %.3f | %s |\n", d.Seed.Avg, d.Seed.Min, d.Seed.Max, cell(measures["diversity_analysis"]))
	fmt.Fprintf(b, "| Content-word distance (bias + focus) | %.3f | %.3f | %.3f | %s |\n", d.Content.Avg, d.Content.Min, d.Content.Max, cell(measures["content_diversity"]))
	if q := d.Questions; q != nil {
		fmt.Fprintf(b, "| Branch questions against the baseline | %.3f (baseline %.3f) | | | %s |\n", q.Observed, q.Baseline, cell(measures["question_diversity"]))
		fmt.Fprintf(b, "\nThe observers' questions are %.3f apart on average, where random word sets of the same sizes from the passage and the main debate are %.3f apart: a distinctness of %.3f (from -1, the same words, through 0, no more different than chance, to 1, no word shared).\n", q.Observed, q.Baseline, q.Distinctness)
	}
	b.WriteString("\n### Pairs of Observers\n\n| Observer | Observer | Seed Jaccard | Content words |\n| --- | --- | --- | --- |\n")
	for _, p := range d.Pairs {
		fmt.Fprintf(b, "| %s | %s | %.3f | %.3f |\n", cell(p.A), cell(p.B), p.Seed, p.Content)
	}
	b.WriteString("\n")
}

// questionDistances is the table of distances between the observers'
// questions, each with the baseline for questions of its sizes.
func (r *Result) questionDistances(b *strings.Builder, q *QuestionDiversity) {
	var asked []*Question
	for _, x := range r.Questions {
		if x.Observer != "" {
			asked = append(asked, x)
		}
	}
	b.WriteString("## Distances Between Branch Questions\n\nJaccard distance between the content words of every two questions; in brackets, the baseline for random word sets of the same sizes from the passage and the main debate.\n\n")
	b.WriteString("| Question |")
	for i := range asked {
		fmt.Fprintf(b, " Q%d |", i+1)
	}
	b.WriteString("\n| --- |")
	for range asked {
		b.WriteString(" --- |")
	}
	b.WriteString("\n")
	dist := map[[2]int]QuestionPair{}
	for _, p := range q.Pairs {
		dist[[2]int{p.A, p.B}], dist[[2]int{p.B, p.A}] = p, p
	}
	for i, x := range asked {
		fmt.Fprintf(b, "| Q%d (%s) |", i+1, cell(x.Name))
		for j := range asked {
			if i == j {
				b.WriteString(" – |")
				continue
			}
			p := dist[[2]int{i + 1, j + 1}]
			fmt.Fprintf(b, " %.2f (%.2f) |", p.Distance, p.Baseline)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	for i, x := range asked {
		fmt.Fprintf(b, "- Q%d: %s\n", i+1, inline(x.Question))
	}
	b.WriteString("\n")
}
