package review

import (
	"slices"

	"github.com/sotlabs/sot/material"
	"github.com/sotlabs/sot/review/synthesis"
)

// PlanSummary is what --dry-run reports, in a shape meant for machines: a CI
// job can read the calls and the estimated cost before it pays for a run.
type PlanSummary struct {
	RunID              string                  `json:"run_id"`
	OutputDir          string                  `json:"output_dir"`
	ReviewMode         string                  `json:"review_mode"`
	Mode               string                  `json:"mode"` // parallel or debate
	Type               string                  `json:"type"`
	Coordinates        string                  `json:"coordinates"`
	Files              []string                `json:"files"`
	Skipped            []synthesis.SkippedFile `json:"skipped"`
	Chunks             int                     `json:"chunks"`
	Specialists        []PlannedSpecialist     `json:"specialists"`
	SelectionRationale string                  `json:"selection_rationale,omitempty"`
	SynthesisModel     string                  `json:"synthesis_model"`
	SpecialistCalls    int                     `json:"specialist_calls"`
	SynthesisCalls     int                     `json:"synthesis_calls"`
	// DebateCallsMax bounds the calls a debate adds after the first round
	// (the hub's summaries, later rounds and continuations); 0 in parallel mode.
	DebateCallsMax int `json:"debate_calls_max"`
	// LookCallsMax bounds the calls specialists' looks at the project add
	// (each tool round is a call, and one more when a model asks past its
	// rounds); 0 when no specialist looks.
	LookCallsMax int `json:"look_calls_max"`
	// LookTokens bounds the tool results one specialist call is sent.
	LookTokens int          `json:"look_tokens,omitempty"`
	Estimate   PlanEstimate `json:"estimate"`
	Warnings   []string     `json:"warnings,omitempty"`
}

// PlannedSpecialist is one specialist of the plan with its model and the
// lenses it runs under (empty when lenses do not apply).
type PlannedSpecialist struct {
	ID     string   `json:"id"`
	Model  string   `json:"model"`
	Lenses []string `json:"lenses"`
}

// PlanEstimate is the Estimate in JSON.
type PlanEstimate struct {
	InputTokens         int      `json:"input_tokens"`
	CachedInputTokens   int      `json:"cached_input_tokens"`
	OutputTokensPerCall int      `json:"output_tokens_per_call"`
	CostUSD             float64  `json:"cost_usd"`
	Unpriced            []string `json:"unpriced_models,omitempty"`
}

// Summary describes the plan and its estimate for --dry-run.
func (p *Plan) Summary(est Estimate) PlanSummary {
	s := PlanSummary{
		RunID: p.RunID, OutputDir: p.OutputDir, ReviewMode: p.Mode, Mode: p.EffectiveMode(),
		Type: p.Context.Type, Coordinates: p.Context.Coordinates, Files: []string{}, Skipped: skippedFiles(p.Material.Skipped),
		Chunks: len(p.Chunks), SelectionRationale: p.SelectionRationale, SynthesisModel: p.TriageModel,
		SpecialistCalls: len(p.Tasks), SynthesisCalls: 1, DebateCallsMax: p.DebateCallsMax(), Warnings: p.Warnings,
		LookCallsMax: p.LookCallsMax(),
		Estimate: PlanEstimate{InputTokens: est.InputTokens, CachedInputTokens: est.CachedTokens,
			OutputTokensPerCall: est.OutputPerCall, CostUSD: est.Cost, Unpriced: est.Unpriced},
	}
	if s.LookCallsMax > 0 {
		s.LookTokens = p.lookTokens
	}
	for _, f := range p.Material.Files {
		s.Files = append(s.Files, f.Path)
	}
	lenses := map[string][]string{}
	for _, t := range p.Tasks {
		info := p.taskInfo[t.ID]
		if info.lens != "" && !slices.Contains(lenses[info.specialist], info.lens) {
			lenses[info.specialist] = append(lenses[info.specialist], info.lens)
		}
	}
	for _, sp := range p.Specialists {
		s.Specialists = append(s.Specialists, PlannedSpecialist{ID: sp.ID, Model: p.Models[sp.ID], Lenses: append([]string{}, lenses[sp.ID]...)})
	}
	return s
}

// DebateCallsMax is the most calls a debate can add after its first round:
// per later round, one hub summary and one call per specialist and lens,
// then the continuation budget and the hub's summary after each
// continuation step. It is 0 when the review does not debate. Estimate
// prices the first round's calls only.
func (p *Plan) DebateCallsMax() int {
	if !p.Debates() {
		return 0
	}
	return (maxRounds-1)*(1+len(p.Tasks)) + continuationCallLimit + maxExtraExchanges
}

// LookCallsMax is the most calls the specialists' looks can add: per task
// that looks, one for each round of tool calls and one more for a model
// that asks past its rounds. Estimate prices none of them.
func (p *Plan) LookCallsMax() int {
	n := 0
	for _, t := range p.Tasks {
		if p.taskInfo[t.ID].looks {
			n += p.lookRounds + 1
		}
	}
	return n
}

// Debates reports whether the review runs as a debate: debate mode was asked
// for and at least two specialists take part (with one, there is nobody to
// argue with, and the review runs in parallel mode).
func (p *Plan) Debates() bool {
	return p.Context.InteractionMode == Debate && len(p.Specialists) > 1
}

// EffectiveMode is the interaction mode the review runs in: parallel or
// debate.
func (p *Plan) EffectiveMode() string {
	if p.Debates() {
		return Debate
	}
	return Parallel
}

// skippedFiles turns the material's skipped files into the result's.
func skippedFiles(skipped []material.Skipped) []synthesis.SkippedFile {
	out := make([]synthesis.SkippedFile, 0, len(skipped))
	for _, k := range skipped {
		out = append(out, synthesis.SkippedFile{Path: k.Path, Reason: k.Reason})
	}
	return out
}
