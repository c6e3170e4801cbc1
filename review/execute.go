package review

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/internal/lazyre"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/stack"
	"github.com/sotlabs/sot/material"
	"github.com/sotlabs/sot/persona"
	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/review/report"
	"github.com/sotlabs/sot/review/synthesis"
)

// Outcome is a finished review.
type Outcome struct {
	Plan   *Plan
	Result *synthesis.Result
	// Reports are the specialists' reviews, one per specialist and lens.
	Reports []finding.Report
	// Files are the files written, relative to nothing (as given).
	Files []string
	// Stopped is set when a budget ended the run early.
	Stopped error
	// Completed counts the specialist reviews (one per specialist, lens and
	// chunk) that came back; 0 means no specialist reviewed anything.
	Completed int
}

// Execute runs a prepared plan: every task concurrently, then the synthesis,
// then the outputs. A specialist that fails for good is recorded as missing;
// the review carries on and says so.
//
// An error that is the caller's to fix (a missing key, a provider's
// configuration, an output directory in use or unusable) is an
// *engine.UserError.
func Execute(ctx context.Context, p *Plan, o *Options) (*Outcome, error) {
	out, err := execute(ctx, p, o)
	if err != nil {
		return nil, userError(err)
	}
	return out, nil
}

func execute(ctx context.Context, p *Plan, o *Options) (*Outcome, error) {
	p = p.forRun()
	// The stack comes first: a run it refuses (under --max-cost, a model
	// without a price) must not touch the output directory. A resumed
	// run's budget covers what it spent before.
	r, err := scenario.Begin(&o.Options, scenario.Spec{What: "a review", Other: "a review of other material or options", Top: p.top, OutputDir: p.OutputDir,
		Layout: layout, State: p.state(o.Time()), Models: p.models()})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	p.runDir = r.Dir
	st, start := r.Stack, r.Start
	looks, err := p.openLooker()
	if err != nil {
		return nil, err
	}
	defer looks.close()
	p.looks = looks

	res := p.result()
	var reports []finding.Report
	var stopped error
	if p.Debates() {
		reports, stopped, err = runDebate(ctx, p, o, st, res)
		if err != nil {
			return nil, err
		}
	} else {
		if p.Context.InteractionMode == Debate {
			res.Mode = Parallel
			res.Notes = append(res.Notes, "debate needs at least two specialists; with one, the review ran in parallel mode")
		}
		results := p.runTasks(ctx, st, p.Tasks, o, res)
		if err := engine.SetupFailure(results); err != nil {
			return nil, err
		}
		reports, stopped = p.collect(results, res)
	}
	if err := ctx.Err(); err != nil {
		return nil, scenario.Interrupted(err)
	}

	// The specialists' files do not depend on the synthesis: write them
	// while the triage lead thinks. In a debate they hold the first round's
	// findings, and each later round is appended.
	fileReports := reports
	if p.fileReports != nil {
		fileReports = p.fileReports
	}
	p.markCoverage(res, fileReports)
	merged := mergeByLens(fileReports)
	specFiles := r.WriteLater(func() ([]scenario.File, error) { return renderSpecialists(res, merged, p.roundNotes) })
	o.progress("synthesizing %d findings", countFindings(reports))
	syn, err := p.synthesize(ctx, o, st, reports)
	written, werr := specFiles()
	if err != nil {
		return nil, err
	}
	if werr != nil {
		return nil, werr
	}
	res.Items, res.Observations, res.TradeOffs, res.Dissent = syn.Items, syn.Observations, syn.TradeOffs, syn.Dissent
	res.Trace, res.Narrative, res.InputOrder = syn.Trace, syn.Narrative, syn.InputOrder
	res.Rejected = append(res.Rejected, syn.Rejected...)
	if p.debate != nil {
		p.debate.attach(res)
	}
	if syn.TriageError != nil {
		res.Missing = append(res.Missing, synthesis.Missing{Specialist: "triage-lead", Error: llm.Redact(syn.TriageError.Error()), Budget: errors.Is(syn.TriageError, llm.ErrBudget)})
		res.Notes = append(res.Notes, "the triage lead failed, so overlapping findings were merged by location and disputes settled by evidence alone")
	}
	res.FileLines = p.fileLines(ctx, o, res)
	p.usage(res, st, start, o.Time())
	if err := p.applyHistory(ctx, res); err != nil {
		return nil, err
	}
	if err := applyResolutions(r.Dir.Dir, res); err != nil {
		return nil, err
	}
	// Every output in the directory belongs to this synthesis, and the
	// optional ones are those asked for this time: the machine outputs of
	// an earlier invocation are removed, and only the formats asked for
	// are rendered again (see WriteFormats).
	out, err := renderSynthesis(res)
	if err != nil {
		return nil, err
	}
	machine, err := renderFormats(res, o.Formats, o.Version)
	if err != nil {
		return nil, err
	}
	files, err := r.Write(append(out, machine...)...)
	if err != nil {
		return nil, err
	}
	// result.json is the run's own record of its synthesis, not an output
	// listed among the files the review wrote.
	files = slices.DeleteFunc(files, func(f string) bool { return filepath.Base(f) == resultFile })
	files = append(written, files...)
	if err := r.Finish(files); err != nil {
		return nil, err
	}
	completed := 0
	for _, r := range reports {
		if r.Error == "" {
			completed++
		}
	}
	return &Outcome{Plan: p, Result: res, Reports: merged, Files: files, Stopped: stopped, Completed: completed}, nil
}

// models lists every model the run may call: the specialists' and the
// triage lead's (the default that fallbacks use too).
func (p *Plan) models() []string {
	models := []string{p.TriageModel}
	for _, m := range p.Models {
		if !slices.Contains(models, m) {
			models = append(models, m)
		}
	}
	return models
}

// synthesisFile is the review's synthesis in an output directory.
const synthesisFile = "REVIEW-SYNTHESIS.md"

// runTasks runs the first round of specialist calls. A call whose model
// turned out to be unusable (no key, a rejected key, a model the provider
// does not serve) runs once more on the session default, with a warning,
// as PAW asks of an unavailable model (see engine.Local); the specialist
// keeps the default for the rest of the run, and tasks[i] becomes the task
// that ran.
func (p *Plan) runTasks(ctx context.Context, st *stack.Stack, tasks []*engine.Task, o *Options, res *synthesis.Result) []engine.Result {
	x := o.executor(st, p.TriageModel)
	results := x.Execute(ctx, tasks)
	noted := map[string]bool{}
	for i, r := range results {
		if r.FellBack == nil {
			continue
		}
		tasks[i] = r.Task
		if g := r.Task.Group; !noted[g] {
			noted[g] = true
			res.Notes = append(res.Notes, engine.FallbackNote(r.FellBack.From, g, r.FellBack.Err, p.TriageModel))
			p.Models[g] = p.TriageModel
		}
	}
	if len(noted) == 0 {
		return results
	}
	// Moderator mode summons specialists on the models the run used:
	// record them once the run's own record is on disk.
	if st.Journal != nil {
		_ = st.Journal.Ready()
	}
	if err := p.recordModels(); err != nil {
		o.Warnf("%s", err)
	}
	return results
}

// recordModels records the run's models in its state, when the state on
// disk is this run's.
func (p *Plan) recordModels() error {
	d := p.runDir
	rec := &record{}
	if st := d.State(rec); st.RunID == p.RunID && st.Authentic {
		rec.Models = p.Models
		return d.Save(st)
	}
	return nil
}

func countFindings(rs []finding.Report) int {
	n := 0
	for _, r := range rs {
		n += len(r.Findings)
	}
	return n
}

// state is the run's record (its nonce and seed, so a re-run sends
// identical prompts), begun at now.
func (p *Plan) state(now time.Time) run.State {
	return run.State{RunID: p.RunID, Nonce: p.Nonce, Seed: p.Seed, Created: now.UTC(),
		Payload: &record{Mode: p.Mode, Context: p.Context, Models: maps.Clone(p.Models), TriageModel: p.TriageModel, Lenses: p.LensIDs(),
			Head: p.Material.Head, Worktree: p.Material.Worktree, Since: p.sinceRun()}}
}

// result starts the Result with what the plan decided.
func (p *Plan) result() *synthesis.Result {
	res := &synthesis.Result{
		RunID: p.RunID, Mode: p.Context.InteractionMode, ReviewMode: p.Mode, Type: p.Context.Type, Coordinates: p.Context.Coordinates,
		Models: p.Models, Context: p.ContextUsed, SelectionRationale: p.SelectionRationale,
		PerspectiveCap: p.Context.PerspectiveCap, PerspectiveMode: p.lenses.mode, PerspectiveRationale: p.lenses.rationale,
		PerspectivesSkipped: p.lenses.skipped, Seed: p.Seed, Reviewed: p.Material.Paths(), Notes: append([]string(nil), p.Warnings...),
	}
	if p.Mode != ModeSociety {
		res.Notes = append(res.Notes, "mode "+p.Mode+": a general reviewer instead of specialists")
	}
	for _, s := range p.Specialists {
		res.Specialists = append(res.Specialists, s.ID)
	}
	if len(p.lenses.lenses) > 0 {
		res.PerspectiveMap = map[string][]string{}
		for _, l := range p.lenses.lenses {
			res.Perspectives = append(res.Perspectives, l.ID)
			res.PerspectiveMap[l.ID] = p.lenses.specialistsUnder(l.ID, res.Specialists)
		}
	}
	res.Skipped = skippedFiles(p.Material.Skipped)
	if note := cutDeleted(p.Material); note != "" {
		res.Notes = append(res.Notes, note)
	}
	if len(p.Chunks) > 1 {
		res.Chunks = len(p.Chunks)
	}
	return res
}

// collect turns task results into reports, recording failures as missing.
// It returns the budget error that stopped calls, if one did.
func (p *Plan) collect(results []engine.Result, res *synthesis.Result) ([]finding.Report, error) {
	var reports []finding.Report
	var stopped error
	for _, r := range results {
		info := p.taskInfo[r.Task.ID]
		if r.Err != nil {
			msg := llm.Redact(r.Err.Error())
			if errors.Is(r.Err, llm.ErrBudget) {
				stopped, msg = r.Err, "not run: "+msg
			}
			if r.Task.Looks != nil && errors.Is(r.Err, llm.ErrBadRequest) {
				msg += " (the call offered the model tools, and was sent again without them when refused; if " + r.Task.Request.Model + " cannot call tools, run again with --no-tools or set review.tools: false)"
			}
			res.Missing = append(res.Missing, synthesis.Missing{Specialist: info.specialist, Lens: info.lens, Chunk: info.chunk, Files: p.chunkFiles(info.chunk), Error: msg, Budget: stopped != nil && stopped == r.Err})
			reports = append(reports, finding.Report{Specialist: info.specialist, Lens: info.lens, Chunk: info.chunk, Model: r.Task.Request.Model, Error: msg})
			continue
		}
		rep, problems, err := finding.FromJSON(r.Resp.JSON, info.specialist, info.lens, info.chunk)
		if err != nil {
			res.Missing = append(res.Missing, synthesis.Missing{Specialist: info.specialist, Lens: info.lens, Chunk: info.chunk, Files: p.chunkFiles(info.chunk), Error: err.Error()})
			reports = append(reports, finding.Report{Specialist: info.specialist, Lens: info.lens, Chunk: info.chunk, Model: r.Task.Request.Model, Error: err.Error()})
			continue
		}
		rep.Model = r.Task.Request.Model
		if ref := p.looks.refusedTools(r.Task.ID); ref.err != nil {
			problems = append(problems, refusedNote(info.specialist, rep.Model, ref.err))
		}
		problems = append(problems, p.groundLooks(r.Task.ID, &rep, p.looks)...)
		for i := range rep.Findings {
			rep.Findings[i].Model = rep.Model
			rep.Findings[i].Round = 1
		}
		res.Notes = append(res.Notes, problems...)
		reports = append(reports, rep)
	}
	return reports, stopped
}

// synthesize runs the synthesis over the successful reports.
func (p *Plan) synthesize(ctx context.Context, o *Options, st *stack.Stack, reports []finding.Report) (*synthesis.Synthesis, error) {
	var ok []finding.Report
	for _, r := range reports {
		if r.Error == "" {
			ok = append(ok, r)
		}
	}
	so := synthesis.Options{Type: p.Context.Type, Anchor: removedLines{newAnchor(p.Material)}, Seed: p.Seed, Nonce: p.Nonce, Executor: o.executor(st, ""), Model: p.TriageModel,
		MaxPromptTokens: p.PromptBudget}
	if p.Mode == ModeSingleModel {
		so.Executor = nil // one source has nothing to triage
	}
	if o.Ask != nil && p.Context.Interactive != persona.InteractiveFalse {
		so.Decide = func(_ context.Context, d *synthesis.Dispute, _ *synthesis.Item) (*synthesis.Decision, error) {
			return decide(p, o, d)
		}
	}
	return synthesis.Synthesize(ctx, ok, so)
}

// removedLines grades findings on a deleted file against the old file's
// lines: every one of them was removed, so a finding citing them cites
// changed lines (Direct), and one citing lines past the old file's end
// cites nothing the change has (Contextual). Other files are graded as the
// anchor grades them.
type removedLines struct{ anchor }

func (a removedLines) IsChanged(p string, l int) bool {
	if n, ok := a.deleted(p); ok {
		return l >= 1 && l <= n
	}
	return a.anchor.IsChanged(p, l)
}

func (a removedLines) IsShown(p string, l int) bool {
	if n, ok := a.deleted(p); ok {
		return l >= 1 && l <= n
	}
	return a.anchor.IsShown(p, l)
}

// deleted reports whether p is a file the diff deletes, and how many
// lines the old file had.
func (a removedLines) deleted(p string) (int, bool) {
	if a.m.Type != material.TypeDiff {
		return 0, false
	}
	f, ok := a.m.File(p)
	if !ok || f.Status != material.StatusDeleted {
		return 0, false
	}
	return f.Deletions, true
}

// removedShown matches a removed line of the material: "-|" after the
// gutter, which holds the old file's line number or nothing.
var removedShown = lazyre.New(`(?m)^ *(\d+ )?-\|`)

// cutDeleted says which deleted files the specialists saw only in part: the
// material shows the first lines of a deleted file, and a review must not
// pass that off as the whole file.
func cutDeleted(m *material.Material) string {
	if m.Type != material.TypeDiff {
		return ""
	}
	var cut []string
	for _, f := range m.Files {
		if f.Status != material.StatusDeleted {
			continue
		}
		if n := len(removedShown.Re().FindAllStringIndex(f.Text, -1)); n < f.Deletions {
			cut = append(cut, fmt.Sprintf("%s (%d of %d lines)", f.Path, n, f.Deletions))
		}
	}
	if len(cut) == 0 {
		return ""
	}
	return fmt.Sprintf("deleted files were shown to the specialists only in part, their first lines without the rest: %s; "+
		"findings on these files are graded against all of the old file's lines, but nothing past the lines shown was read", strings.Join(cut, ", "))
}

// usage fills the run's usage.
func (p *Plan) usage(res *synthesis.Result, st *stack.Stack, start, now time.Time) {
	sp := st.Spent()
	res.Usage = synthesis.Usage{Calls: sp.Calls, CostUSD: sp.Cost, WallMS: now.Sub(start).Milliseconds(), NewCalls: sp.NewCalls, NewCostUSD: sp.NewCost,
		CacheHits: sp.CacheHits, Replayed: sp.Replayed,
		InputTokens: sp.Usage.InputTokens, CachedInputTokens: sp.Usage.CachedInputTokens, OutputTokens: sp.Usage.OutputTokens}
	if len(sp.Unpriced) > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("cost excludes models with no known price: %v (add them under prices: in config)", sp.Unpriced))
	}
}

// mergeByLens combines the chunk reports of each specialist and lens.
func mergeByLens(rs []finding.Report) []finding.Report {
	groups := map[[2]string][]finding.Report{}
	var keys [][2]string
	for _, r := range rs {
		k := [2]string{r.Specialist, r.Lens}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	var out []finding.Report
	for _, k := range keys {
		out = append(out, report.MergeReports(groups[k]))
	}
	return out
}

// renderSpecialists renders every REVIEW-<SPECIALIST>.md.
// REVIEW-SYNTHESIS.md is rendered after the synthesis, machine formats by
// renderFormats.
func renderSpecialists(res *synthesis.Result, reports []finding.Report, rounds map[[2]string]map[int]string) ([]scenario.File, error) {
	var files []scenario.File
	for _, r := range reports {
		path, err := persona.ReviewFile(".", r.Specialist, r.Lens)
		if err != nil {
			return nil, err
		}
		text := report.SpecialistMarkdown(r, res)
		notes := rounds[[2]string{r.Specialist, r.Lens}]
		for _, n := range sortedRounds(notes) {
			if n > maxRounds {
				text = report.AppendContinuation(text, n-maxRounds, notes[n])
			} else {
				text = report.AppendRound(text, n, notes[n])
			}
		}
		files = append(files, scenario.File{Name: filepath.Base(path), Data: []byte(text)})
	}
	return files, nil
}

// renderSynthesis renders result.json, which --resolve and moderator mode
// read, and REVIEW-SYNTHESIS.md.
func renderSynthesis(res *synthesis.Result) ([]scenario.File, error) {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return nil, err
	}
	return []scenario.File{{Name: resultFile, Data: append(b, '\n')}, {Name: synthesisFile, Data: []byte(report.SynthesisMarkdown(res))}}, nil
}

// renderFormats renders the machine formats asked for, in the order of
// their names, and marks every other one for removal, so that none is
// left from an earlier invocation.
func renderFormats(res *synthesis.Result, formats []string, version string) ([]scenario.File, error) {
	var files []scenario.File
	for _, format := range formats {
		name, ok := Formats[format]
		if !ok || slices.ContainsFunc(files, func(f scenario.File) bool { return f.Name == name }) {
			continue // markdown is always written
		}
		b, err := Render(format, res, version)
		if err != nil {
			return nil, err
		}
		files = append(files, scenario.File{Name: name, Data: b})
	}
	for _, format := range slices.Sorted(maps.Keys(Formats)) {
		if !slices.Contains(formats, format) {
			files = append(files, scenario.File{Name: Formats[format]})
		}
	}
	return files, nil
}

// Formats are the machine outputs and their file names.
var Formats = map[string]string{"json": "review.json", "sarif": "review.sarif", "rdjson": "review.rdjsonl", "html": "review.html"}

// Render produces one machine format.
func Render(format string, res *synthesis.Result, version string) ([]byte, error) {
	switch format {
	case "json":
		return report.JSON(res)
	case "sarif":
		return report.SARIF(res, version)
	case "rdjson":
		return report.RDJSONL(res)
	case "html":
		return report.HTML(res, version)
	case "markdown":
		return []byte(report.SynthesisMarkdown(res)), nil
	}
	return nil, fmt.Errorf("unknown format %q: use markdown, json, sarif, rdjson or html", format)
}

func sortedRounds(m map[int]string) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// fileLines finds the number of lines of each file the result's items and
// observations cite by line, so that the outputs pointing at lines keep
// them inside the file (SARIF regions must). It is keyed by the material's
// path and by every other spelling the findings used. The material knows
// the length of a document, an added file (shown whole) and a deleted one
// (every line removed); a changed file's new side is read from the work
// tree, the index or the revision the diff compared with. A file whose
// length cannot be read is left out, and its lines are not clamped.
func (p *Plan) fileLines(ctx context.Context, o *Options, res *synthesis.Result) map[string]int {
	m := p.Material
	spellings := map[string][]string{}
	for _, list := range [][]synthesis.Item{res.Items, res.Observations} {
		for _, it := range list {
			if it.Location.File == "" || it.Location.StartLine <= 0 {
				continue
			}
			if f, ok := m.File(it.Location.File); ok && !slices.Contains(spellings[f.Path], it.Location.File) {
				spellings[f.Path] = append(spellings[f.Path], it.Location.File)
			}
		}
	}
	out := map[string]int{}
	var unknown []string
	for _, path := range slices.Sorted(maps.Keys(spellings)) {
		f, _ := m.File(path)
		switch {
		case m.Type != material.TypeDiff || f.Status == material.StatusAdded:
			if len(f.Shown) > 0 {
				out[path] = f.Shown[len(f.Shown)-1].End
			}
		case f.Status == material.StatusDeleted:
			out[path] = f.Deletions
		default:
			unknown = append(unknown, path)
		}
	}
	prefix, worktree := newSide(o)
	for path, n := range m.NewSideLines(ctx, prefix, worktree, unknown) {
		out[path] = n
	}
	for path, n := range maps.Clone(out) {
		for _, s := range spellings[path] {
			out[s] = n
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// newSide says where the diff o reviews takes the new side of a file from:
// the work tree, or the object name prefix of a revision (":" for the
// index of --staged, "B:" for A..B, A...B, "A B" and B^!).
func newSide(o *Options) (prefix string, worktree bool) {
	if o.Staged {
		return ":", false
	}
	revs := strings.Fields(o.Diff)
	switch len(revs) {
	case 0:
		return "", true
	case 1:
		r := revs[0]
		if _, b, ok := strings.Cut(r, "..."); ok {
			return cmp.Or(b, "HEAD") + ":", false
		}
		if _, b, ok := strings.Cut(r, ".."); ok {
			return cmp.Or(b, "HEAD") + ":", false
		}
		if c, ok := strings.CutSuffix(r, "^!"); ok {
			return c + ":", false
		}
		return "", true // one revision is compared with the work tree
	}
	return revs[len(revs)-1] + ":", false
}

// CheckPrices refuses, as Execute does before any call, a plan whose
// models have no known price under a cost cap; a dry run calls it so that
// it fails as the run would.
func (p *Plan) CheckPrices(o *Options) error {
	return scenario.CheckPrices(&o.Options, p.models()...)
}
