package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sotlabs/sot/internal/markdown"
	"github.com/sotlabs/sot/internal/termsafe"
	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/review/synthesis"
)

// SpecialistMarkdown renders one specialist's review (for one lens) as the
// content of its REVIEW-*.md file: a title, a short header, then every
// finding in the Toulmin format, must-fix first. A review without findings
// shows what the specialist examined; a failed one says so plainly. res
// supplies the run's coordinates and may be nil.
func SpecialistMarkdown(r finding.Report, res *synthesis.Result) string {
	if res == nil {
		res = &synthesis.Result{}
	}
	var b strings.Builder
	title := markdown.OneLine(r.Specialist)
	if title == "" {
		title = "unnamed specialist"
	}
	if lens := markdown.OneLine(r.Lens); lens != "" {
		fmt.Fprintf(&b, "# %s review — %s perspective\n\n", title, lens)
	} else {
		fmt.Fprintf(&b, "# %s review\n\n", title)
	}

	field := func(name, v string) {
		if v = markdown.OneLine(v); v != "" {
			fmt.Fprintf(&b, "- **%s**: %s\n", name, v)
		}
	}
	field("Specialist", r.Specialist)
	field("Perspective", r.Lens)
	field("Review type", res.Type)
	field("Coordinates", res.Coordinates)
	model := r.Model
	if model == "" {
		model = res.Models[r.Specialist]
	}
	field("Model", model)
	field("Run", res.RunID)
	switch {
	case r.Chunk > 0 && res.Chunks > 1:
		field("Chunk", fmt.Sprintf("%d of %d", r.Chunk, res.Chunks))
	case r.Chunk > 0:
		field("Chunk", strconv.Itoa(r.Chunk))
	case res.Chunks > 1:
		field("Chunks", fmt.Sprintf("%d (the material was split; findings from every chunk are listed here)", res.Chunks))
	}
	if r.Error == "" || len(r.Findings) > 0 {
		field("Findings", countLine(r.Findings))
	}
	b.WriteString("\n")

	if r.Error != "" {
		if len(r.Findings) == 0 {
			b.WriteString("## This specialist failed\n\n")
			b.WriteString("This specialist did not complete, so it reported no findings and the review is partial.\n\n")
		} else {
			b.WriteString("## This specialist partly failed\n\n")
			b.WriteString("Some of this specialist's work did not complete; the findings below are incomplete and the review is partial.\n\n")
		}
		b.WriteString("Error:\n\n")
		b.WriteString(markdown.Quote("", r.Error))
		b.WriteString("\n")
		if len(r.Findings) == 0 {
			return strings.TrimRight(b.String(), "\n") + "\n"
		}
	}

	if len(r.Findings) == 0 {
		b.WriteString("## No findings\n\n")
		if strings.TrimSpace(r.Examined) == "" {
			b.WriteString("The specialist reported no findings and gave no account of what it examined.\n")
		} else {
			b.WriteString("The specialist reported no findings. What it examined, in its words:\n\n")
			b.WriteString(markdown.Quote("", r.Examined))
		}
		return b.String()
	}

	b.WriteString("## Findings\n")
	for _, f := range sortedFindings(r.Findings) {
		b.WriteString("\n")
		// finding.Markdown puts every value on one line of its own making;
		// what is left to escape is a control character inside a value.
		b.WriteString(termsafe.Text(finding.Markdown(&f)))
	}
	if strings.TrimSpace(r.Examined) != "" {
		b.WriteString("\n## Examined\n\n")
		b.WriteString(markdown.Quote("", r.Examined))
	}
	return b.String()
}

// sortedFindings orders findings must-fix, should-fix, consider, keeping
// the specialist's order within a severity.
func sortedFindings(fs []finding.Finding) []finding.Finding {
	out := slices.Clone(fs)
	slices.SortStableFunc(out, func(a, b finding.Finding) int {
		return b.Severity.Rank() - a.Severity.Rank()
	})
	return out
}

// countLine summarises findings by severity: "2 must-fix, 0 should-fix, 1 consider".
func countLine(fs []finding.Finding) string {
	n := map[finding.Severity]int{}
	for _, f := range fs {
		n[f.Severity]++
	}
	parts := make([]string, 0, len(finding.Severities))
	for _, s := range finding.Severities {
		parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
	}
	return fmt.Sprintf("%d (%s)", len(fs), strings.Join(parts, ", "))
}

// MergeReports combines the chunk reports of one specialist and lens into
// one report: findings concatenated in chunk order, examined accounts
// joined under chunk labels, and the errors of failed chunks kept (the
// merged report has Error set when any chunk failed, even if other chunks
// produced findings). The merged report has Chunk 0. One report is
// returned as it is; none gives the zero Report.
func MergeReports(rs []finding.Report) finding.Report {
	switch len(rs) {
	case 0:
		return finding.Report{}
	case 1:
		return rs[0]
	}
	sorted := slices.Clone(rs)
	slices.SortStableFunc(sorted, func(a, b finding.Report) int { return a.Chunk - b.Chunk })

	out := finding.Report{Specialist: sorted[0].Specialist, Lens: sorted[0].Lens}
	var models, examined, errs []string
	for i, r := range sorted {
		label := "Chunk " + strconv.Itoa(r.Chunk)
		if r.Chunk == 0 {
			label = "Part " + strconv.Itoa(i+1)
		}
		if r.Model != "" && !slices.Contains(models, r.Model) {
			models = append(models, r.Model)
		}
		out.Findings = append(out.Findings, r.Findings...)
		if e := strings.TrimSpace(r.Examined); e != "" {
			examined = append(examined, label+": "+e)
		}
		if e := strings.TrimSpace(r.Error); e != "" {
			errs = append(errs, strings.ToLower(label[:1])+label[1:]+": "+e)
		}
	}
	out.Model = strings.Join(models, ", ")
	out.Examined = strings.Join(examined, "\n\n")
	out.Error = strings.Join(errs, "\n")
	return out
}

// AppendRound adds a debate round to a specialist's review file: a
// "## Round N" section holding body. Headings of level one or two inside
// body are demoted by two levels so the round cannot open sections of its
// own. Appending a round that is already present replaces it, so a
// resumed run that writes a round again gives the same file.
func AppendRound(existing string, round int, body string) string {
	return appendExchange(existing, fmt.Sprintf("## Round %d", round), body, "round")
}

// AppendContinuation adds a continuation of the debate (an exchange after
// the global rounds, among the participants of contested threads only) to
// a specialist's review file as a "## Continuation N" section, as
// AppendRound adds a round.
func AppendContinuation(existing string, n int, body string) string {
	return appendExchange(existing, fmt.Sprintf("## Continuation %d", n), body, "continuation")
}

// appendExchange adds or replaces the section of one debate exchange; kind
// names it in the note that replaces an empty body.
func appendExchange(existing, heading, body, kind string) string {
	lines := strings.Split(existing, "\n")
	start, end := -1, len(lines)
	for i, l := range lines {
		if start < 0 && strings.TrimRight(l, " \t") == heading {
			start = i
			continue
		}
		if start >= 0 && (strings.HasPrefix(l, "## Round ") || strings.HasPrefix(l, "## Continuation ")) {
			end = i
			break
		}
	}
	var before, after string
	if start >= 0 {
		before = strings.Join(lines[:start], "\n")
		if end < len(lines) {
			after = strings.Join(lines[end:], "\n")
		}
	} else {
		before = existing
	}

	var b strings.Builder
	before = strings.TrimRight(before, "\n")
	if before != "" {
		b.WriteString(before)
		b.WriteString("\n\n")
	}
	b.WriteString(heading + "\n\n")
	body = strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\r", "\n")
	body = strings.Trim(body, "\n")
	if strings.TrimSpace(body) == "" {
		body = "No new findings or positions in this " + kind + "."
	}
	for _, l := range strings.Split(body, "\n") {
		b.WriteString(markdown.Demote(l))
		b.WriteString("\n")
	}
	if after != "" {
		b.WriteString("\n")
		b.WriteString(after)
		if !strings.HasSuffix(after, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}
