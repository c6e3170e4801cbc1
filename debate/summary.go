package debate

import (
	"github.com/sotlabs/sot/internal/tokens"
	"github.com/sotlabs/sot/llm"
)

// PersonaCalls is how many of the plan's calls are a persona's work (the
// turns, the branch questions, the syntheses, the merges): the calls a
// live display counts. The summaries and the observer generation serve the
// run (engine.Task.Support) and are counted apart.
func (p *Plan) PersonaCalls() int {
	d, b := len(p.Debaters), p.Branches()
	n := d*p.Rounds + b + b*d*p.BranchRounds + 2*b
	if b > 1 {
		n++
	}
	return n
}

// PlanSummary is a plan as a dry run shows it.
type PlanSummary struct {
	RunID     string `json:"run_id"`
	OutputDir string `json:"output_dir"`
	Model     string `json:"model"`
	Passage   struct {
		Name   string `json:"name"`
		Words  int    `json:"words"`
		Tokens int    `json:"tokens"`
	} `json:"passage"`
	Debaters     []Speaker   `json:"debaters"`
	Turns        string      `json:"turns"`
	Rounds       int         `json:"rounds"`
	BranchRounds int         `json:"branch_rounds"`
	ObserverMode string      `json:"observer_mode"`
	Observers    []*Observer `json:"observers,omitempty"`
	// Generate is N of generate:N, with up to Regenerations more
	// generations for each observer.
	Generate      int      `json:"generate,omitempty"`
	Regenerations int      `json:"regenerations,omitempty"`
	MaxBranches   int      `json:"max_branches"`
	Settings      Settings `json:"settings"`
	Estimate      Estimate `json:"estimate"`
	Warnings      []string `json:"warnings,omitempty"`
	// Graph is what the debaters get from the argument graph.
	Graph *GraphPlan `json:"graph,omitempty"`
}

// Summary describes the plan and its estimate at prices.
func (p *Plan) Summary(prices llm.PriceTable) PlanSummary {
	r := p.result()
	s := PlanSummary{RunID: p.RunID, OutputDir: p.OutputDir, Model: p.Model, Debaters: r.Debaters, Turns: p.Turns, Rounds: p.Rounds,
		BranchRounds: p.BranchRounds, ObserverMode: r.ObserverMode, Observers: p.Observers, Generate: p.ObserverSpec.Generate,
		MaxBranches: p.Branches(), Settings: p.Settings, Estimate: p.Estimate(prices), Warnings: p.Warnings, Graph: p.Graph}
	if s.Generate > 0 {
		s.Regenerations = p.Settings.Regenerations
	}
	s.Passage.Name, s.Passage.Words, s.Passage.Tokens = p.Passage.Name, p.Passage.Words(), tokens.Count(p.Passage.Text)
	return s
}
