package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/sotlabs/sot/internal/markdown"
	"github.com/sotlabs/sot/persona"
	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/review/synthesis"
)

// Section headings of REVIEW-SYNTHESIS.md, in order (PAW's final-review
// synthesis format).
const (
	SectionSummary      = "Review Summary"
	SectionDiversity    = "Perspective Diversity"
	SectionMustFix      = "Must-Fix Findings"
	SectionShouldFix    = "Should-Fix Findings"
	SectionConsider     = "Consider"
	SectionTradeOffs    = "Trade-offs Requiring Decision"
	SectionObservations = "Observations"
	SectionDissent      = "Dissent Log"
	SectionDebate       = "Debate Trace"
	SectionTrace        = "Synthesis Trace"
	// A re-review (--since) adds what became of the earlier review's
	// findings, and any review what the user dismissed before.
	SectionResolved  = "Resolved Since the Last Review"
	SectionDismissed = "Dismissed Earlier"
)

// Sections lists the "## " headings SynthesisMarkdown writes, in order;
// the Debate Trace appears in debate mode only.
func Sections(debate bool) []string {
	s := []string{SectionSummary, SectionDiversity, SectionMustFix, SectionShouldFix, SectionConsider,
		SectionTradeOffs, SectionObservations, SectionDissent}
	if debate {
		s = append(s, SectionDebate)
	}
	return append(s, SectionTrace)
}

// threadStates orders debate thread states for counting.
var threadStates = []string{"open", "agreed", "contested", "trade-off", "resolved"}

// SynthesisMarkdown renders REVIEW-SYNTHESIS.md: a "# Review Synthesis"
// title and exactly the sections of Sections(res.Mode == "debate").
func SynthesisMarkdown(res *synthesis.Result) string {
	if res == nil {
		res = &synthesis.Result{}
	}
	w := &mdWriter{res: res, debate: res.Mode == "debate"}
	w.line("# Review Synthesis")
	w.section(SectionSummary, w.summary)
	w.section(SectionDiversity, w.diversity)
	w.section(SectionMustFix, func() { w.items(finding.MustFix) })
	w.section(SectionShouldFix, func() { w.items(finding.ShouldFix) })
	w.section(SectionConsider, func() { w.items(finding.Consider) })
	w.section(SectionTradeOffs, w.tradeOffs)
	w.section(SectionObservations, w.observations)
	if res.Since != nil {
		w.section(SectionResolved, w.resolved)
	}
	if len(res.DismissedEarlier) > 0 {
		w.section(SectionDismissed, w.dismissedEarlier)
	}
	w.section(SectionDissent, w.dissent)
	if w.debate {
		w.section(SectionDebate, w.debateTrace)
	}
	w.section(SectionTrace, w.trace)
	return w.b.String()
}

type mdWriter struct {
	b      strings.Builder
	res    *synthesis.Result
	debate bool
}

func (w *mdWriter) line(format string, a ...any) {
	fmt.Fprintf(&w.b, format, a...)
	w.b.WriteString("\n")
}

func (w *mdWriter) blank() { w.b.WriteString("\n") }

func (w *mdWriter) section(title string, body func()) {
	w.blank()
	w.line("## %s", title)
	w.blank()
	body()
}

// bullet writes "<indent>- **name**: value" when value is not empty.
func (w *mdWriter) bullet(indent, name, value string) {
	if value = markdown.OneLine(value); value != "" {
		w.line("%s- **%s**: %s", indent, name, value)
	}
}

// --- Review Summary ---

func (w *mdWriter) summary() {
	r := w.res
	if len(r.Missing) > 0 {
		w.line("- **Partial review**: %s of the review did not complete; whatever they would have found is missing from this synthesis:",
			plural(len(r.Missing), "part", "parts"))
		for _, m := range r.Missing {
			w.line("  - %s: %s", MissingName(m), orNone(m.Error))
		}
	}
	w.line("- Mode: %s", reviewMode(r))
	w.line("- Specialists: %s", orNone(joinOne(r.Specialists)))
	w.line("- Context: %s", orNone(r.Context))
	w.line("- Perspectives: %s", orNone(joinOne(r.Perspectives)))
	w.line("- Perspective cap: %d", r.PerspectiveCap)
	if s := markdown.OneLine(r.SelectionRationale); s != "" {
		w.line("- Selection rationale: %s", s)
	}
	if w.debate {
		w.line("- Rounds: %d", r.Rounds)
		w.line("- Threads: %s", threadCounts(r.Threads))
	}
	if r.Type != "" || r.Coordinates != "" {
		target := markdown.OneLine(r.Type)
		if c := markdown.OneLine(r.Coordinates); c != "" {
			target = strings.TrimSpace(target + " " + markdown.Code(c))
		}
		w.line("- Reviewed: %s", target)
	}
	if r.RunID != "" {
		w.line("- Run: %s", markdown.Code(r.RunID))
	}
	if sn := r.Since; sn != nil {
		w.line("- Re-review: %s; %s", sinceNote(sn), historyCounts(r))
	}
	if len(r.Models) > 0 {
		w.line("- Models:")
		for _, s := range sortedKeys(r.Models) {
			w.line("  - %s → %s", orNone(s), orNone(r.Models[s]))
		}
	}
	if len(r.Reviewed) > 0 || len(r.Skipped) > 0 || r.Type == "diff" {
		w.line("- Files reviewed: %d", len(r.Reviewed))
		for _, f := range r.Reviewed {
			w.line("  - %s", markdown.Code(f))
		}
		if len(r.Skipped) == 0 {
			w.line("- Files skipped: none")
		} else {
			w.line("- Files skipped: %d", len(r.Skipped))
			for _, f := range r.Skipped {
				w.line("  - %s: %s", markdown.Code(f.Path), orNone(f.Reason))
			}
		}
	}
	if r.Chunks > 1 {
		if slices.ContainsFunc(r.Missing, func(m synthesis.Missing) bool { return m.Chunk > 0 }) {
			w.line("- Chunks: %d (the material was split by groups of files; the parts that did not complete are listed above)", r.Chunks)
		} else {
			w.line("- Chunks: %d (the material was split by groups of files; every chunk was reviewed by every specialist)", r.Chunks)
		}
	}
	sum := Summarize(r)
	w.line("- Findings: %d must-fix, %d should-fix, %d consider; %s, %s",
		sum.MustFix, sum.ShouldFix, sum.Consider,
		plural(sum.Observations, "observation", "observations"), plural(sum.TradeOffs, "trade-off", "trade-offs"))
	u := r.Usage
	usage := fmt.Sprintf("%s, %s input tokens (%s cached), %s output tokens, %s, wall time %s",
		plural(u.Calls, "call", "calls"), num(u.InputTokens), num(u.CachedInputTokens), num(u.OutputTokens), usd(u.CostUSD), wall(u.WallMS))
	if u.Replayed > 0 {
		usage += fmt.Sprintf("; %s replayed from the journal, so the last invocation sent %s (%s)",
			plural(u.Replayed, "call", "calls"), plural(u.NewCalls, "call", "calls"), usd(u.NewCostUSD))
	}
	if u.CacheHits > 0 {
		usage += fmt.Sprintf("; %s served from the response cache", plural(u.CacheHits, "call", "calls"))
	}
	w.line("- Usage: %s", usage)
	if len(r.Notes) > 0 {
		w.line("- Notes:")
		for _, n := range r.Notes {
			w.line("  - %s", orNone(n))
		}
	}
	if strings.TrimSpace(r.Narrative) != "" {
		w.blank()
		w.line("Triage lead's summary:")
		w.blank()
		w.b.WriteString(markdown.Quote("", r.Narrative))
	}
}

// reviewMode describes how the review was done: "society-of-thought
// (parallel)", "single-model" or "multi-model (3 models)".
func reviewMode(r *synthesis.Result) string {
	switch m := markdown.OneLine(r.ReviewMode); m {
	case "", synthesis.ReviewSociety:
		mode := markdown.OneLine(r.Mode)
		if mode == "" {
			mode = "parallel"
		}
		return synthesis.ReviewSociety + " (" + mode + ")"
	case synthesis.ReviewMultiModel:
		models := map[string]bool{}
		for _, ref := range r.Models {
			models[ref] = true
		}
		n := len(models)
		if n == 0 {
			n = len(r.Specialists)
		}
		return fmt.Sprintf("%s (%s)", m, plural(n, "model", "models"))
	default:
		return m
	}
}

func threadCounts(ts []synthesis.Thread) string {
	n := map[string]int{}
	for _, t := range ts {
		n[markdown.OneLine(strings.ToLower(t.State))]++
	}
	var parts []string
	for _, s := range threadStates {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
		delete(n, s)
	}
	for _, s := range sortedKeys(n) {
		if s == "" {
			s = "no state"
		}
		parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
	}
	if len(parts) == 0 {
		return fmt.Sprintf("%d", len(ts))
	}
	return fmt.Sprintf("%d (%s)", len(ts), strings.Join(parts, ", "))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// --- Perspective Diversity ---

func (w *mdWriter) diversity() {
	r := w.res
	mode := markdown.OneLine(r.PerspectiveMode)
	if mode == "" {
		mode = "none"
	}
	used := len(r.Perspectives) > 0 || len(r.PerspectiveMap) > 0
	if !used {
		w.line("Perspectives were not used: each specialist reviewed the material once, without a perspective overlay.")
		w.blank()
		w.line("- Selection mode: %s", mode)
		w.skippedPerspectives()
		return
	}
	// Lenses in the order the review lists them, then any others by name.
	order := slices.Clone(r.Perspectives)
	for _, l := range sortedKeys(r.PerspectiveMap) {
		if !slices.Contains(order, l) {
			order = append(order, l)
		}
	}
	w.line("- Perspectives applied:")
	for _, l := range order {
		specs := r.PerspectiveMap[l]
		if len(specs) == 0 {
			w.line("  - %s → no specialist", orNone(l))
			continue
		}
		w.line("  - %s → %s", orNone(l), joinOne(specs))
	}
	w.line("- Selection mode: %s", mode)
	if s := markdown.OneLine(r.PerspectiveRationale); s != "" {
		w.line("- Selection rationale: %s", s)
	}
	w.skippedPerspectives()
}

func (w *mdWriter) skippedPerspectives() {
	if len(w.res.PerspectivesSkipped) == 0 {
		return
	}
	w.line("- Perspectives skipped:")
	for _, s := range w.res.PerspectivesSkipped {
		w.line("  - %s", orNone(s))
	}
}

// --- Findings ---

// bucket maps an item to the section it is listed in; an unknown severity
// is listed under Consider rather than dropped.
func bucket(s finding.Severity) finding.Severity {
	if s.Rank() == 0 {
		return finding.Consider
	}
	return s
}

func (w *mdWriter) items(sev finding.Severity) {
	n := 0
	for i := range w.res.Items {
		it := &w.res.Items[i]
		if bucket(it.Severity) != sev {
			continue
		}
		if n > 0 {
			w.blank()
		}
		n++
		w.item(it)
	}
	if n == 0 {
		w.line("None.")
	}
}

func itemTitle(it *synthesis.Item) string {
	claim := markdown.OneLine(it.Claim)
	if claim == "" {
		claim = "(no claim)"
	}
	if id := markdown.OneLine(it.ID); id != "" {
		return id + ": " + claim
	}
	return claim
}

func (w *mdWriter) item(it *synthesis.Item) {
	w.line("### %s", itemTitle(it))
	w.blank()
	sev := string(it.Severity)
	if it.Severity.Rank() == 0 {
		sev = orNone(sev) + " (not a known severity; listed under Consider)"
	}
	w.bullet("", "Severity", sev)
	w.bullet("", "Confidence", orNone(string(it.Confidence)))
	w.bullet("", "Grounding", groundingOf(it))
	if it.Grounding == synthesis.Inferential {
		w.chain(it.Chain)
	}
	w.bullet("", "Location", locOrNone(it.Location))
	w.bullet("", "Category", it.Category)
	w.history(it)
	if it.Severity == finding.MustFix || it.Severity == finding.ShouldFix {
		w.action(it)
	}
	w.sources(it.Sources, true)
	if ls := lenses(it.Sources); len(ls) > 0 {
		w.bullet("", "Perspective", strings.Join(ls, ", "))
	}
	if d := it.Dispute; d != nil {
		w.bullet("", "Dispute", disputeNote(d))
	}
	if d := it.Decision; d != nil {
		w.bullet("", "Decision", decisionNote(d))
	}
	if o := it.Outcome; o != nil {
		s := orNone(o.Status)
		if r := markdown.OneLine(o.Reason); r != "" {
			s += " — " + r
		}
		w.bullet("", "Outcome", s)
	}
}

// action writes what a reader needs to act on an item without opening the
// specialist's file: the reasoning and the suggested check of the source
// that leads it, and the file holding that source's full review.
func (w *mdWriter) action(it *synthesis.Item) {
	lead := it.LeadSource()
	if lead == nil {
		return
	}
	w.block("Reasoning", lead.Warrant, "not given")
	w.block("Suggested check", lead.Verification, "not given")
	if name := reviewFile(lead); name != "" {
		w.bullet("", "From", markdown.Code(name)+" ("+orCode(lead.ID)+")")
	}
}

// block writes a bullet whose value may run over several lines: on one
// line when it fits there, as a quote below the bullet otherwise.
func (w *mdWriter) block(name, value, missing string) {
	switch {
	case strings.TrimSpace(value) == "":
		w.bullet("", name, missing)
	case markdown.MultiLine(value):
		w.line("- **%s**:", name)
		w.b.WriteString(markdown.Quote("  ", value))
	default:
		w.bullet("", name, value)
	}
}

// reviewFile is the name of the REVIEW-<SPECIALIST>[-<LENS>].md file that
// holds a finding's specialist review, or "" when its names cannot make
// one.
func reviewFile(f *finding.Finding) string {
	p, err := persona.ReviewFile("", f.Specialist, f.Lens)
	if err != nil {
		return ""
	}
	return p
}

func (w *mdWriter) chain(chain string) {
	switch {
	case strings.TrimSpace(chain) == "":
		w.bullet("", "Reasoning chain", "not recorded")
	case markdown.MultiLine(chain):
		w.line("- **Reasoning chain**:")
		w.b.WriteString(markdown.Quote("  ", chain))
	default:
		w.bullet("", "Reasoning chain", chain)
	}
}

func locOrNone(l finding.Location) string {
	if l.File == "" && markdown.OneLine(l.Section) != "" {
		return "section " + markdown.Code(l.Section)
	}
	if s := locString(l); s != "" {
		return markdown.Code(s)
	}
	return "none (not tied to a file or section)"
}

// sources lists the findings merged into an item, every one attributed.
func (w *mdWriter) sources(src []finding.Finding, grounds bool) {
	if len(src) == 0 {
		w.bullet("", "Sources", "none recorded")
		return
	}
	w.line("- **Sources**:")
	for _, f := range src {
		s := fmt.Sprintf("%s by %s (%s)", orCode(f.ID), orNone(f.Source()), orNone(string(f.Confidence)))
		if grounds {
			if g := markdown.OneLine(f.Grounds); g != "" {
				s += ": " + g
			}
		}
		w.line("  - %s", s)
	}
}

func orCode(s string) string {
	if c := markdown.Code(s); c != "" {
		return c
	}
	return "(no id)"
}

func disputeNote(d *synthesis.Dispute) string {
	kind := string(d.Kind)
	if d.Kind == synthesis.Factual {
		kind = "factual dispute"
	}
	s := orNone(kind)
	if id := markdown.OneLine(d.ID); id != "" {
		s += " " + id
	}
	if ids := codes(d.FindingIDs); ids != "" {
		s += " between " + ids
	}
	if d.Unresolved {
		s += " — **unresolved**"
	} else if r := markdown.OneLine(d.Resolution); r != "" {
		s += " — " + r
	}
	if d.HighSignal {
		s += " — high-signal perspective disagreement"
	}
	return s + " (see " + SectionDissent + ")"
}

func decisionNote(d *synthesis.Decision) string {
	s := "by " + orNone(d.By) + ": " + orNone(d.Choice)
	if r := markdown.OneLine(d.Reason); r != "" {
		s += " — " + r
	}
	if d.Flagged {
		s += " **(flagged for review: decided without a person)**"
	}
	return s
}

// codes renders ids as code spans joined by ", ".
func codes(ids []string) string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if c := markdown.Code(id); c != "" {
			out = append(out, c)
		}
	}
	return strings.Join(out, ", ")
}

// --- Trade-offs ---

func (w *mdWriter) tradeOffs() {
	if len(w.res.TradeOffs) == 0 {
		w.line("None.")
		return
	}
	for i := range w.res.TradeOffs {
		d := &w.res.TradeOffs[i]
		if i > 0 {
			w.blank()
		}
		w.line("### %s", heading(d.ID, d.Axis, "Trade-off"))
		w.blank()
		affected := w.itemsFor(d.ID)
		if len(affected) > 0 {
			ids := make([]string, len(affected))
			for j, it := range affected {
				ids[j] = it.ID
			}
			w.bullet("", "Affects", joinOne(ids))
		}
		w.positions(d.Positions)
		w.bullet("", "Decision axis", orNone(d.Axis))
		if len(d.Options) > 0 {
			w.line("- **Options**:")
			for _, o := range d.Options {
				w.line("  - %s", orNone(o))
			}
		}
		w.bullet("", "Recommendation", orNone(d.Recommendation)+" (priority hierarchy: "+strings.Join(synthesis.PriorityHierarchy, " > ")+")")
		res := markdown.OneLine(d.Resolution)
		if d.Unresolved {
			res = strings.TrimSpace("**unresolved** " + res)
		}
		w.bullet("", "Resolution", orNone(res))
		var decision *synthesis.Decision
		for _, it := range affected {
			if it.Decision != nil {
				decision = it.Decision
				w.bullet("", "Decision", decisionNote(it.Decision))
				break
			}
		}
		w.bullet("", "Decision needed", decisionNeeded(d, decision))
	}
}

func decisionNeeded(d *synthesis.Dispute, dec *synthesis.Decision) string {
	switch {
	case dec != nil && dec.Flagged:
		return "yes — decided by " + orNone(dec.By) + " without a person; confirm or overturn it"
	case dec != nil:
		return "no — decided by " + orNone(dec.By)
	case d.Unresolved:
		return "yes — no decision has been made"
	}
	return "no"
}

// itemsFor lists the items (actionable and observations) carrying the
// dispute with this id.
func (w *mdWriter) itemsFor(id string) []*synthesis.Item {
	if id == "" {
		return nil
	}
	var out []*synthesis.Item
	for _, list := range [][]synthesis.Item{w.res.Items, w.res.Observations} {
		for i := range list {
			if list[i].Dispute != nil && list[i].Dispute.ID == id {
				out = append(out, &list[i])
			}
		}
	}
	return out
}

func (w *mdWriter) positions(ps []synthesis.Position) {
	if len(ps) == 0 {
		w.bullet("", "Positions", "none recorded")
		return
	}
	w.line("- **Positions**:")
	for _, p := range ps {
		s := orNone(p.Source)
		if c := markdown.Code(p.FindingID); c != "" {
			s += " (" + c + ")"
		}
		w.line("  - %s: %s", s, orNone(p.Summary))
	}
}

// --- Observations ---

func (w *mdWriter) observations() {
	if len(w.res.Observations) == 0 {
		w.line("None.")
		return
	}
	w.line("Beyond this change; kept for reference and not presented for resolution.")
	for i := range w.res.Observations {
		it := &w.res.Observations[i]
		w.blank()
		w.line("### %s", itemTitle(it))
		w.blank()
		w.bullet("", "Stated severity", string(it.Severity))
		w.bullet("", "Confidence", orNone(string(it.Confidence)))
		w.bullet("", "Grounding", groundingOf(it))
		w.bullet("", "Location", locOrNone(it.Location))
		w.history(it)
		srcs := make([]string, len(it.Sources))
		for j, f := range it.Sources {
			srcs[j] = fmt.Sprintf("%s by %s (%s)", orCode(f.ID), orNone(f.Source()), orNone(string(f.Confidence)))
		}
		w.bullet("", "Sources", orNone(strings.Join(srcs, "; ")))
		if ls := lenses(it.Sources); len(ls) > 0 {
			w.bullet("", "Perspective", strings.Join(ls, ", "))
		}
	}
}

// --- Dissent Log ---

func (w *mdWriter) dissent() {
	if len(w.res.Dissent) == 0 {
		w.line("None.")
		return
	}
	for i := range w.res.Dissent {
		d := &w.res.Dissent[i]
		if i > 0 {
			w.blank()
		}
		title := markdown.OneLine(d.ID)
		kind := "factual dispute"
		if d.Kind == synthesis.TradeOff {
			kind = "trade-off"
		} else if d.Kind != synthesis.Factual {
			kind = orNone(string(d.Kind))
		}
		title = strings.TrimSpace(title + " (" + kind + ")")
		if d.HighSignal {
			title += " — high-signal perspective disagreement"
		}
		w.line("### %s", title)
		w.blank()
		if d.HighSignal {
			w.line("- **High-signal perspective disagreement**: two perspectives of the same specialist reached different conclusions.")
		}
		w.bullet("", "Kind", orNone(string(d.Kind)))
		w.bullet("", "Findings", codes(d.FindingIDs))
		w.positions(d.Positions)
		if d.Kind == synthesis.TradeOff {
			w.bullet("", "Decision axis", d.Axis)
		}
		if d.Unresolved {
			s := "**unresolved**"
			if r := markdown.OneLine(d.Resolution); r != "" {
				s += " — " + r
			}
			w.bullet("", "Resolution", s)
		} else {
			w.bullet("", "Resolution", orNone(d.Resolution))
		}
	}
}

// --- Debate Trace ---

func (w *mdWriter) debateTrace() {
	if len(w.res.Threads) == 0 {
		w.line("None.")
		return
	}
	for i := range w.res.Threads {
		t := &w.res.Threads[i]
		if i > 0 {
			w.blank()
		}
		w.line("### %s", heading(t.ID, t.Claim, "Thread"))
		w.blank()
		initial := orCode(t.FindingID)
		if s := markdown.OneLine(t.Source); s != "" {
			initial += " by " + s
		}
		w.bullet("", "Initial finding", initial)
		for _, r := range t.Rounds {
			called := ""
			if r.Continuation > 0 {
				called = " (" + orNone(joinOne(r.Called)) + ")"
			}
			w.line("- **%s**%s (state: %s)", r.Name(), called, orNone(r.State))
			if len(r.Responses) == 0 {
				w.line("  - no responses")
			}
			for _, resp := range r.Responses {
				head := fmt.Sprintf("  - %s, %s", orNone(resp.Source), orNone(resp.Stance))
				if markdown.MultiLine(resp.Argument) {
					w.line("%s:", head)
					w.b.WriteString(markdown.Quote("    ", resp.Argument))
				} else {
					w.line("%s: %s", head, orNone(resp.Argument))
				}
			}
		}
		w.bullet("", "Final state", orNone(t.State))
		w.bullet("", "Resolution method", orNone(t.Resolution))
	}
}

// --- Synthesis Trace ---

func (w *mdWriter) trace() {
	r := w.res
	w.line("### Items")
	w.blank()
	if len(r.Trace) == 0 {
		w.line("None.")
	}
	for _, t := range r.Trace {
		s := fmt.Sprintf("- %s ← %s; grounding %s", orCode(t.ItemID), orNone(codes(t.Sources)), orNone(string(t.Grounding)))
		if res := markdown.OneLine(t.Resolution); res != "" {
			s += "; conflict resolution: " + res
		}
		w.line("%s", s)
	}
	w.blank()
	w.line("### Input order")
	w.blank()
	w.line("Specialists' findings were presented to the triage lead in a randomized order to avoid position bias.")
	w.blank()
	w.line("- Seed: %d", r.Seed)
	w.line("- Order: %s", orNone(joinOne(r.InputOrder)))
	if len(r.Rejected) > 0 {
		w.blank()
		w.line("### Rejected triage-lead output")
		w.blank()
		w.line("The program refused these parts of the triage lead's answer:")
		w.blank()
		for _, x := range r.Rejected {
			w.line("- %s", orNone(x))
		}
	}
}

// heading is "ID: text" on one line, or fallback when both are empty.
func heading(id, text, fallback string) string {
	title := markdown.OneLine(id)
	if t := markdown.OneLine(text); t != "" {
		title = strings.TrimSpace(title + ": " + t)
	}
	if title == "" {
		return fallback
	}
	return title
}

// groundingOf writes an item's grounding tier; a contextual item that a
// specialist's tools read (not the material) says so.
func groundingOf(it *synthesis.Item) string {
	g := orNone(string(it.Grounding))
	if it.Grounding == synthesis.Contextual && looked(it) {
		g += " (read by a tool)"
	}
	return g
}

// looked reports whether a source of the item cites a file its
// specialist's tools showed it.
func looked(it *synthesis.Item) bool {
	return slices.ContainsFunc(it.Sources, func(f finding.Finding) bool { return f.Looked })
}

// --- History (a re-review) ---

// sinceNote names the earlier review a re-review continued.
func sinceNote(sn *synthesis.Since) string {
	short := sn.Commit
	if len(short) > 12 {
		short = short[:12]
	}
	if sn.RunID == "" {
		return "the changes since commit " + markdown.Code(short)
	}
	return fmt.Sprintf("the changes since review %s (commit %s)", markdown.Code(sn.RunID), markdown.Code(short))
}

// historyCounts counts the findings by what became of them.
func historyCounts(r *synthesis.Result) string {
	var n, c int
	for _, list := range [][]synthesis.Item{r.Items, r.Observations} {
		for _, it := range list {
			if it.History == synthesis.HistoryCarried {
				c++
			} else {
				n++
			}
		}
	}
	return fmt.Sprintf("%d new, %d carried over, %d resolved, %d dismissed earlier", n, c, len(r.Resolved), len(r.DismissedEarlier))
}

// history says whether an item is new or carried over, in a re-review.
func (w *mdWriter) history(it *synthesis.Item) {
	switch it.History {
	case synthesis.HistoryNew:
		w.bullet("", "History", "new in this review")
	case synthesis.HistoryCarried:
		w.bullet("", "History", "carried over from review "+markdown.Code(it.From))
	}
}

func (w *mdWriter) resolved() {
	if len(w.res.Resolved) == 0 {
		w.line("None: every finding of the earlier review still stands where it was.")
		return
	}
	w.line("Findings of earlier reviews whose lines this change rewrote or removed.")
	for i := range w.res.Resolved {
		it := &w.res.Resolved[i]
		w.blank()
		w.line("- %s (%s, %s), first reported in review %s", markdown.OneLine(it.Claim), orNone(string(it.Severity)), locOrNone(it.Location), markdown.Code(it.From))
	}
}

func (w *mdWriter) dismissedEarlier() {
	w.line("Findings this review or the one it continues made again, which you dismissed before; they are not counted.")
	for i := range w.res.DismissedEarlier {
		it := &w.res.DismissedEarlier[i]
		reason := ""
		if it.Outcome != nil {
			reason = markdown.OneLine(it.Outcome.Reason)
		}
		w.blank()
		w.line("- %s (%s, %s): dismissed in review %s — %s", markdown.OneLine(it.Claim), orNone(string(it.Severity)), locOrNone(it.Location), markdown.Code(orNone(it.From)), orNone(reason))
	}
}
