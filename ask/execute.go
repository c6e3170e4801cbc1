package ask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sotlabs/sot/ask/route"
	"github.com/sotlabs/sot/conflict"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/internal/jsonlayout"
	"github.com/sotlabs/sot/internal/parallel"
	"github.com/sotlabs/sot/internal/plainfile"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/stack"
)

// The files a question's run writes besides the engine's.
const (
	AnswerFile     = "ANSWER.md"
	AnswerJSONFile = "answer.json"
	AnswerHTMLFile = "answer.html" // with Options.Formats "html"
	// PairsFile holds every pair the lexical detector classified, one JSON
	// line each, with Options.Formats "pairs"; answer.json lists only the
	// strongest (ListedPairs of each type).
	PairsFile = "conflict-pairs.ndjson"
)

// ListedPairs is how many conflicts and how many agreements answer.json
// lists at most, those of the highest confidence; the counts are of all.
// Two hundred pairs in all are more than a reader reads, and at 1,000
// sources they are already a fifth of answer.json: every pair, for a
// program, is in PairsFile.
const ListedPairs = 100

// FormatPairs is the format of Options.Formats that writes PairsFile.
const FormatPairs = "pairs"

var layout = run.Layout{
	Owns: func(name string) bool {
		return name == AnswerFile || name == AnswerJSONFile || name == AnswerHTMLFile || name == PairsFile
	},
	Outputs: []string{AnswerFile, AnswerJSONFile, AnswerHTMLFile, PairsFile},
	Field:   "--output-dir",
}

// record is the question's part of its run's record (run.json).
type record struct {
	Kind     string `json:"kind"`
	Question string `json:"question"`
	Model    string `json:"model"`
	Intent   string `json:"intent"`
	// Command is the command that ran the question, which resumes it.
	Command string `json:"command,omitempty"`
}

func loadState(dir string) run.State {
	b, err := plainfile.ReadOwn(filepath.Join(dir, run.StateFile))
	if err != nil {
		return run.State{}
	}
	return run.ParseState(b, &record{}, run.Key())
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// Outcome is an answered question.
type Outcome struct {
	Plan   *Plan
	Answer *Answer
	// Files are the files written.
	Files []string
}

// PartialError: the answer was written without some of its parts (exit
// 3).
type PartialError = scenario.PartialError

// UnfoundedError: the answer was written, but the check dropped every
// sentence of it, so nothing in it stands on the sources.
type UnfoundedError struct{ Dropped int }

func (e *UnfoundedError) Error() string {
	if e.Dropped == 0 {
		return "the answer has no sentence: the model wrote none, twice (ANSWER.md has the readings and the tensions)"
	}
	return fmt.Sprintf("no sentence of the answer stood on its sources: the check dropped all %d (ANSWER.md lists them with the reasons)", e.Dropped)
}

// Verdict is nil for a whole answer; an *UnfoundedError when the check
// dropped every sentence; a *PartialError when parts are missing.
func (out *Outcome) Verdict() error {
	a := out.Answer
	if len(a.Sentences) == 0 && (len(a.Dropped) > 0 || a.wroteNone) {
		return &UnfoundedError{Dropped: len(a.Dropped)}
	}
	if a.Partial() {
		return &PartialError{Result: "the answer", Missing: len(a.Missing), See: AnswerFile}
	}
	return nil
}

// Execute runs the plan's calls (map, then debate, then reduce), checks the
// answer and writes ANSWER.md and answer.json. Every finished call is
// journaled in the run's directory, so running the same question again
// continues where an interrupted run stopped. An error that is the
// caller's to fix is an *engine.UserError.
func Execute(ctx context.Context, p *Plan, o *Options) (*Outcome, error) {
	out, err := execute(ctx, p, o)
	return out, scenario.UserErrors(err)
}

func execute(ctx context.Context, p *Plan, o *Options) (*Outcome, error) {
	r, err := scenario.Begin(&o.Options, scenario.Spec{What: "an answer", Other: "another question or corpus", Top: p.top, OutputDir: p.OutputDir, Layout: layout,
		State: run.State{RunID: p.RunID, Nonce: p.Nonce,
			Payload: &record{Kind: "ask", Question: p.Question, Model: p.Model, Intent: string(p.Classification.Intent), Command: o.Command}},
		Models: []string{p.Model}})
	if err != nil {
		return nil, err
	}
	defer r.Close()

	pr := &protocol{x: r.Executor(""), model: p.Model, nonce: p.Nonce, question: p.Question, seed: run.Seed(p.RunID)}
	a := p.answer()

	o.Progressf("reading %d source(s)%s", len(p.Chosen), map[bool]string{true: " from their perspectives", false: ""}[p.SoT])
	evidence, missing := pr.mapStep(ctx, p.Readings)
	a.Evidence, a.Missing = evidence, append(a.Missing, missing...)
	if err := ctx.Err(); err != nil {
		return nil, scenario.Interrupted(err)
	}
	if len(evidence) == 0 {
		if err := setupFailure(missing); err != nil {
			return nil, err
		}
	}
	// The lexical detector runs beside the debate call, which does not
	// read what it finds: the answers' words are compared while the
	// model thinks.
	pairs := slices.Contains(o.Formats, FormatPairs)
	type detection struct {
		an  conflict.Analysis
		err error
	}
	var detected func() detection
	if p.SoT && p.cfg.ConflictDetection && len(evidence) > 1 {
		detected = parallel.Go(func() detection {
			an, err := p.detectInto(r, evidence, pairs)
			return detection{an, err}
		})
	} else if pairs {
		a.Notes = append(a.Notes, "no "+PairsFile+": the lexical conflict detector did not run")
	}
	addressing := slices.DeleteFunc(slices.Clone(evidence), func(e Evidence) bool { return !e.Addresses })
	var debate *Debate
	if p.Debate && len(addressing) > 1 {
		o.Progressf("debating %d answers", len(addressing))
		debate, err = pr.debateStep(ctx, evidence)
		if err != nil {
			a.Missing = append(a.Missing, Missing{Step: "debate", What: "the tensions between the answers", Error: llm.Redact(err.Error()), Budget: errors.Is(err, llm.ErrBudget)})
		}
	} else if p.Debate {
		a.Notes = append(a.Notes, "the debate step did not run: fewer than two answers address the question")
	}

	var extra []string // files written besides the answer's
	if detected != nil {
		d := detected()
		an, err := d.an, d.err
		if err != nil {
			return nil, err
		}
		// Four decimals say all a reader can use of a similarity, and
		// keep the listed pairs' share of answer.json small.
		for _, list := range [][]conflict.Pair{an.Conflicts, an.Agreements} {
			for i := range list {
				list[i].Similarity = round4(list[i].Similarity)
			}
		}
		lex := lexicalAnalysis{Analysis: an}
		if pairs {
			lex.PairsFile = PairsFile
			extra = append(extra, filepath.Join(p.OutputDir, PairsFile))
		}
		if a.Conflicts, err = json.Marshal(lex); err != nil {
			return nil, err
		}
		a.ConflictSummary = &ConflictSummary{Tensions: an.TotalConflicts, Agreements: an.TotalAgreements, Themes: an.ConflictThemes, Summary: an.Summary,
			Truncated: an.Truncated, PairsFile: lex.PairsFile}
	}
	if err := ctx.Err(); err != nil {
		return nil, scenario.Interrupted(err)
	}
	if len(addressing) == 0 {
		a.Notes = append(a.Notes, "no source read addresses the question, so there is nothing to answer from")
	} else {
		o.Progressf("writing the answer")
		ra, v, err := pr.reduceStep(ctx, evidence, debate)
		if err != nil {
			if ctx.Err() != nil {
				return nil, scenario.Interrupted(ctx.Err())
			}
			a.Missing = append(a.Missing, Missing{Step: "reduce", What: "the answer", Error: llm.Redact(err.Error()), Budget: errors.Is(err, llm.ErrBudget)})
		} else {
			a.Sentences, a.Dropped, a.wroteNone = v.Kept, v.Dropped, v.Empty
			treat := map[string]TensionTreatment{}
			for _, t := range ra.Tensions {
				treat[strings.ToUpper(strings.TrimSpace(t.ID))] = t
			}
			if debate != nil {
				for i, t := range debate.Tensions {
					if tt, ok := treat[t.ID]; ok {
						debate.Tensions[i].Treatment, debate.Tensions[i].How = tt.Treatment, strings.TrimSpace(tt.How)
					}
				}
			}
			for _, id := range v.Untreated {
				a.Notes = append(a.Notes, fmt.Sprintf("the answer left tension %s untreated; it stays open", id))
			}
		}
	}
	a.Debate = debate
	a.Usage = UsageOf(r.Spent(), r.Wall())
	rendered, err := render(a, o.Formats)
	if err != nil {
		return nil, err
	}
	if len(extra) == 0 {
		rendered = append(rendered, scenario.File{Name: PairsFile}) // none asked for: none left from before
	}
	files, err := r.Write(rendered...)
	if err != nil {
		return nil, err
	}
	files = append(files, extra...)
	if err := r.Finish(files); err != nil {
		return nil, err
	}
	return &Outcome{Plan: p, Answer: a, Files: files}, nil
}

// spanNoteTitles is how many of a cross-source reading's sources its
// note names; the others are counted (each says so in its role_why), so
// that the note does not grow with the corpus.
const spanNoteTitles = 10

// spanNote says which sources a cross-source role reads in one reading.
func spanNote(why string, members []string, title func(string) string) string {
	var titles []string
	for _, id := range members[:min(len(members), spanNoteTitles)] {
		titles = append(titles, title(id))
	}
	list := strings.Join(titles, "; ")
	if more := len(members) - len(titles); more > 0 {
		list += fmt.Sprintf("; and %d more, each marked so in its role_why", more)
	}
	return fmt.Sprintf("%s, in one reading: %s", why, list)
}

// answer starts the Answer with what the plan decided.
func (p *Plan) answer() *Answer {
	a := &Answer{RunID: p.RunID, Question: p.Question, Intent: string(p.Classification.Intent), Complexity: string(p.Classification.Complexity),
		Rule: p.Classification.Rule, SoT: p.SoT, SoTNote: p.SoTNote, Labels: p.cfg.IncludePerspectiveInResponse, Notes: slices.Clone(p.Notes)}
	if p.SoT {
		a.Strategy = string(p.Strategy)
	}
	if !p.Debate {
		a.Notes = append(a.Notes, "no debate step: "+p.DebateWhy)
	}
	for _, sp := range p.Spans {
		a.Notes = append(a.Notes, spanNote(sp.Why, sp.Members, func(id string) string { return p.source(id).Title }))
	}
	if len(p.Groups) > 0 {
		a.ByGroup = true
		var gs []string
		for _, g := range p.Groups {
			gs = append(gs, fmt.Sprintf("%s (%d source(s)) as %s", g.Group.Name, len(g.Group.Members), g.Role))
		}
		a.Notes = append(a.Notes, fmt.Sprintf("read by group, %s: %s", p.GroupsWhy, strings.Join(gs, "; ")))
	}
	// The answers read from each source, and the group it was read in (the
	// last group that holds it), found once rather than for every source.
	answersOf := map[string][]string{}
	for _, r := range p.Readings {
		answersOf[r.Source] = append(answersOf[r.Source], r.ID)
		for _, m := range r.Members {
			if m != r.Source && !slices.Contains(answersOf[m], r.ID) {
				answersOf[m] = append(answersOf[m], r.ID)
			}
		}
	}
	groupOf := map[string]string{}
	for _, g := range p.Groups {
		for _, m := range g.Group.Members {
			groupOf[m] = g.Group.Name
		}
	}
	for i, c := range p.Chosen {
		s := p.source(c.ID)
		// Four decimals say all a score says (ANSWER.md shows two), and
		// not seventeen digits of rounding noise a source.
		u := SourceUse{ID: s.ID, Title: s.Title, Type: s.Type, Relevance: round4(c.Normalized), Bonus: round4(c.Bonus), Parts: max(1, len(s.Parts)),
			Chosen: chosenWhy(c)}
		if !s.Date.IsZero() {
			u.Date = s.Date.Format("2006-01-02")
		}
		if p.SoT {
			u.Role, u.RoleWhy = p.Assignments[i].Role, p.Assignments[i].Why
		}
		u.Group = groupOf[s.ID]
		u.Answers = answersOf[s.ID]
		a.Sources = append(a.Sources, u)
	}
	for _, s := range p.Skipped {
		a.Skipped = append(a.Skipped, Skipped{Path: s.Path, Reason: s.Reason})
	}
	return a
}

// round4 rounds a score to four decimals.
func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// chosenWhy says why selection picked a source: its relevance, and the
// diversity fields whose value it brought first. The order of the picks
// is the list's, and the relevance a field of its own.
func chosenWhy(c route.Choice) string {
	if len(c.New) == 0 {
		return "relevance"
	}
	names := make([]string, len(c.New))
	for k, f := range c.New {
		names[k] = strings.ReplaceAll(f, "_", " ")
	}
	return "relevance; the first of its " + strings.Join(names, " and ")
}

// render renders answer.json and ANSWER.md, and answer.html when formats
// asks for html; an answer.html of an earlier invocation not asked for
// again is removed, so none describes another answer.
func render(a *Answer, formats []string) ([]scenario.File, error) {
	js, err := answerJSON(a)
	if err != nil {
		return nil, err
	}
	files := []scenario.File{{Name: AnswerFile, Data: []byte(a.Markdown())}, {Name: AnswerJSONFile, Data: js}, {Name: AnswerHTMLFile}}
	if slices.Contains(formats, "html") {
		if files[2].Data, err = a.HTML(); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// answerJSON is answer.json: the answer's fields a line each, and each
// source, answer, sentence and listed pair on a line of its own, compact
// (see jsonlayout), with a line break at the end. Indented throughout, a
// question over 1,000 sources spent a quarter of the file on spaces.
func answerJSON(a *Answer) ([]byte, error) {
	b, err := json.Marshal(a)
	if err == nil {
		b, err = jsonlayout.Layout(b, 2)
	}
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", AnswerJSONFile, err)
	}
	return b, nil
}

// lexicalAnalysis is the detector's analysis as answer.json holds it:
// northstar's shape, and the file that holds every pair when one was
// written.
type lexicalAnalysis struct {
	conflict.Analysis
	PairsFile string `json:"pairsFile,omitempty"`
}

// detectInto runs the lexical detector over the answers; with pairs, the
// runner streams every pair into PairsFile in the run's directory as it is
// found.
func (p *Plan) detectInto(r *scenario.Run, evidence []Evidence, pairs bool) (an conflict.Analysis, err error) {
	if !pairs {
		return DetectConflicts(evidence, p.cfg.ConflictThreshold, ListedPairs, nil)
	}
	_, err = r.Stream(PairsFile, func(w io.Writer) error {
		an, err = DetectConflicts(evidence, p.cfg.ConflictThreshold, ListedPairs, conflict.NDJSON(w))
		return err
	})
	return an, err
}

// DetectConflicts runs the lexical conflict detector at threshold over the
// answers the readings gave, in their order, listing the keep strongest
// pairs of each type and handing every pair to each when it is not nil.
// Execute makes the answer's conflict summary with it, at the config's
// ask.conflict_threshold; sot ask --compare (package ask/compare) counts
// the tensions of every configuration with it, the same way.
func DetectConflicts(evidence []Evidence, threshold float64, keep int, each func(conflict.Pair) error) (conflict.Analysis, error) {
	rs := make([]conflict.Response, 0, len(evidence))
	for _, e := range evidence {
		rs = append(rs, conflict.Response{Response: responseText(e), AgentName: e.Title, Perspective: e.Role})
	}
	return conflict.Detect(rs, conflict.Options{Threshold: threshold, Keep: keep, Each: each})
}

// responseText is what the lexical detector reads of an answer.
func responseText(e Evidence) string {
	parts := []string{e.Summary}
	for _, pt := range e.Points {
		parts = append(parts, pt.Point)
	}
	return strings.Join(parts, " ")
}

// setupFailure: every reading failed on a key or a provider's
// configuration, which is not a partial answer but one that could not
// start.
func setupFailure(missing []Missing) error {
	if len(missing) == 0 {
		return nil
	}
	for _, m := range missing {
		if m.err == nil || !engine.Unusable(m.err) {
			return nil
		}
	}
	return fmt.Errorf("no source could be read: %w", missing[0].err)
}

// UsageOf is what a run cost, from what its stack spent and its wall
// time, with the calls replayed from its journal at what they cost when
// they were made. The runs over the indexed sources (package ask/analyze)
// report theirs in the same shape.
func UsageOf(sp stack.Spent, wall time.Duration) Usage {
	return Usage{Calls: sp.Calls, NewCalls: sp.NewCalls, CostUSD: sp.Cost, Replayed: sp.Replayed, CacheHits: sp.CacheHits, WallMS: wall.Milliseconds(),
		InputTokens: sp.Usage.InputTokens, CachedInputTokens: sp.Usage.CachedInputTokens, OutputTokens: sp.Usage.OutputTokens}
}

// CheckPrices refuses, as Execute does before any call, a plan whose
// model has no known price under a cost cap; a dry run calls it so that
// it fails as the run would.
func (p *Plan) CheckPrices(o *Options) error {
	return scenario.CheckPrices(&o.Options, p.Model)
}
