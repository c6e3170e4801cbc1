package reviewcmd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/cli/version"
	"github.com/sotlabs/sot/internal/status"
	"github.com/sotlabs/sot/material"
	"github.com/sotlabs/sot/review"
	"github.com/sotlabs/sot/review/report"
)

func printAssignments(w io.Writer, p *review.Plan) {
	ids := make([]string, 0, len(p.Models))
	for id := range p.Models {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var parts []string
	for _, id := range ids {
		parts = append(parts, id+"="+p.Models[id])
	}
	cmdutil.Fprintf(w, "sot: run %s: models %s; synthesis %s\n", p.RunID, strings.Join(parts, ", "), p.TriageModel)
}

func printPlan(f *cmdutil.Factory, w io.Writer, p *review.Plan, est review.Estimate, o *Options) error {
	if o.Stdout == "json" {
		return printPlanJSON(f.IO.Out, p, est, o)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	cmdutil.Fprintf(tw, "Run\t%s\n", p.RunID)
	cmdutil.Fprintf(tw, "Output\t%s\n", p.OutputDir)
	mode := p.EffectiveMode()
	if mode != p.Context.InteractionMode {
		mode += " (debate needs at least two specialists)"
	}
	cmdutil.Fprintf(tw, "Mode\t%s, %s\n", p.Mode, mode)
	cmdutil.Fprintf(tw, "Material\t%s: %d file(s), %d skipped, %d chunk(s)\n", p.Context.Coordinates, len(p.Material.Files), len(p.Material.Skipped), len(p.Chunks))
	if paths := p.Material.Paths(); len(paths) > 0 {
		cmdutil.Fprintf(tw, "Files\t%s\n", listSome(paths, 20))
	}
	if len(p.Material.Skipped) > 0 {
		var sk []string
		for _, k := range p.Material.Skipped {
			sk = append(sk, k.Path+" ("+k.Reason+")")
		}
		cmdutil.Fprintf(tw, "Skipped\t%s\n", listSome(sk, 20))
	}
	var specs []string
	for _, s := range p.Specialists {
		specs = append(specs, fmt.Sprintf("%s (%s)", s.ID, p.Models[s.ID]))
	}
	cmdutil.Fprintf(tw, "Specialists\t%s\n", strings.Join(specs, ", "))
	if p.SelectionRationale != "" {
		cmdutil.Fprintf(tw, "Selection\t%s\n", p.SelectionRationale)
	}
	lenses := "none"
	if ls := p.LensIDs(); len(ls) > 0 {
		lenses = strings.Join(ls, ", ")
	}
	cmdutil.Fprintf(tw, "Lenses\t%s\n", lenses)
	calls := fmt.Sprintf("%d specialist call(s) + 1 synthesis call", len(p.Tasks))
	if n := p.DebateCallsMax(); n > 0 {
		calls += fmt.Sprintf(" + up to %d debate call(s) after the first round (not in the estimate below)", n)
	}
	if n := p.LookCallsMax(); n > 0 {
		calls += fmt.Sprintf(" + up to %d call(s) of specialists looking at the project with tools (not in the estimate below; --no-tools for none)", n)
	}
	cmdutil.Fprintf(tw, "Calls\t%s\n", calls)
	cmdutil.Fprintf(tw, "Input tokens\t~%d (~%d of them cacheable as a shared prefix)\n", est.InputTokens, est.CachedTokens)
	cost := fmt.Sprintf("~$%.4f (assuming %d output tokens a call)", est.Cost, est.OutputPerCall)
	if len(est.Unpriced) > 0 {
		cost += "; no price known for " + strings.Join(est.Unpriced, ", ")
	}
	cmdutil.Fprintf(tw, "Cost\t%s\n", cost)
	if err := tw.Flush(); err != nil {
		return err
	}
	if o.ShowPrompt != "" {
		text, err := p.Prompt(o.ShowPrompt)
		if err != nil {
			return cmdutil.AsUsage(err)
		}
		fmt.Fprintf(w, "\n--- prompt of %s ---\n%s", cmdutil.Line(o.ShowPrompt), cmdutil.Text(text))
	}
	return nil
}

// emptyOutputs gives a review that called no model the machine outputs it
// was asked for, as valid documents without findings: --stdout prints one,
// and --format writes files when an output directory was named (without
// one there is no run to name a directory after). A dry run's --stdout json
// prints a plan of no calls.
func emptyOutputs(f *cmdutil.Factory, human io.Writer, o *Options, ro *review.Options, why string, skipped []material.Skipped) error {
	if o.DryRun {
		if o.Stdout == "json" {
			return writeJSON(f.IO.Out, review.EmptyPlan(ro.Context, why, skipped))
		}
		return nil
	}
	empty, err := review.Empty(ro, why, skipped)
	if err != nil {
		return err
	}
	if o.Stdout != "" {
		b, err := review.Render(o.Stdout, empty.Result, version.Get().Version)
		if err != nil {
			return err
		}
		f.IO.Out.Write(b)
	}
	if len(empty.Unwritten) > 0 {
		fmt.Fprintf(human, "sot: no %s written: there is no run to name an output directory after; pass --output-dir to get empty documents\n", strings.Join(empty.Unwritten, ", "))
	}
	for _, p := range empty.Files {
		fmt.Fprintf(human, "sot: wrote %s (no findings)\n", p)
	}
	return nil
}

// printPlanJSON writes the plan of a dry run as one JSON document, with the
// composed prompt of --show-prompt's specialist when asked for.
func printPlanJSON(w io.Writer, p *review.Plan, est review.Estimate, o *Options) error {
	doc := struct {
		review.PlanSummary
		Prompt *shownPrompt `json:"prompt,omitempty"`
	}{PlanSummary: p.Summary(est)}
	if o.ShowPrompt != "" {
		text, err := p.Prompt(o.ShowPrompt)
		if err != nil {
			return cmdutil.AsUsage(err)
		}
		doc.Prompt = &shownPrompt{Specialist: o.ShowPrompt, Text: text}
	}
	return writeJSON(w, doc)
}

// writeJSON writes v as one indented JSON document.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

type shownPrompt struct {
	Specialist string `json:"specialist"`
	Text       string `json:"text"`
}

// redirectTarget is the file standard output is redirected to, when it is a
// regular file whose path can be found, so that a review does not review
// its own output (sot review --stdout sarif > out.sarif creates out.sarif
// before sot runs).
func redirectTarget(w io.Writer) []string {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	for _, link := range []string{fmt.Sprintf("/proc/self/fd/%d", f.Fd()), fmt.Sprintf("/dev/fd/%d", f.Fd())} {
		if p, err := filepath.EvalSymlinks(link); err == nil && p != link {
			return []string{p}
		}
	}
	return nil
}

// listSome joins up to most items with ", ", saying how many more there are.
func listSome(items []string, most int) string {
	if len(items) <= most {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:most], ", ") + fmt.Sprintf(" and %d more", len(items)-most)
}

// summarize says what the review found and cost. Its calls are those the
// live display counted (calls), as the run's journal records them: one
// answer a call, replayed and cached ones included.
func summarize(w io.Writer, out *review.Outcome, calls status.Counts) {
	res := out.Result
	s := report.Summarize(res)
	u := res.Usage
	fmt.Fprintf(w, "\nsot: %d must-fix, %d should-fix, %d consider, %d observation(s) from %d specialist(s)\n",
		s.MustFix, s.ShouldFix, s.Consider, s.Observations, len(res.Specialists))
	fmt.Fprintf(w, "sot: %d calls, %d input tokens (%d cached), %d output tokens, $%.4f, %.1fs",
		calls.Done, u.InputTokens, u.CachedInputTokens, u.OutputTokens, u.CostUSD, float64(u.WallMS)/1000)
	if calls.Replayed > 0 || calls.Cached > 0 {
		fmt.Fprintf(w, " for the whole run; this time %d call(s), $%.4f (%d replayed from the journal, %d from the cache)",
			calls.Sent(), u.NewCostUSD, calls.Replayed, calls.Cached)
	}
	fmt.Fprintln(w)
	if len(res.Skipped) > 0 {
		fmt.Fprintf(w, "sot: %d file(s) skipped (listed in REVIEW-SYNTHESIS.md)\n", len(res.Skipped))
	}
	if res.Partial() {
		label := "PARTIAL review"
		if out.Completed == 0 && out.Stopped == nil {
			label = "FAILED review: no specialist call succeeded"
		}
		fmt.Fprintf(w, "sot: %s: %d part(s) missing:\n", label, len(res.Missing))
		// Parts that failed the same way are listed together, with the
		// error once; the budget's message is said once, below.
		var parts []cmdutil.MissingPart
		for _, m := range res.Missing {
			parts = append(parts, cmdutil.MissingPart{Name: report.MissingName(m), Error: m.Error, Budget: m.Budget})
		}
		cmdutil.PrintMissing(w, parts)
	}
	if out.Stopped != nil {
		cmdutil.Say(w, out.Stopped.Error())
		fmt.Fprintln(w, "sot: raise the budget and run the same command again to finish; finished calls are replayed, not paid again")
	} else if res.Partial() {
		fmt.Fprintln(w, "sot: run the same command again to retry the missing parts; finished calls are replayed, not paid again")
	}
	var machine []string
	for _, f := range out.Files {
		if b := filepath.Base(f); strings.HasPrefix(b, "review.") {
			machine = append(machine, b)
		}
	}
	also := ""
	if len(machine) > 0 {
		also = " (and " + strings.Join(machine, ", ") + ")"
	}
	fmt.Fprintf(w, "sot: wrote %s%s\n", filepath.Join(out.Plan.OutputDir, "REVIEW-SYNTHESIS.md"), also)
}
