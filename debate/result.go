package debate

import "time"

// Result is everything a debate produced; debate.json is its JSON form and
// every Markdown output is rendered from it.
type Result struct {
	RunID   string  `json:"run_id"`
	Passage Passage `json:"passage"`
	Model   string  `json:"model"`
	// Turns is the protocol: sequential (turn-taking) or simultaneous.
	Turns        string `json:"turns"`
	Rounds       int    `json:"rounds"`
	BranchRounds int    `json:"branch_rounds"`
	// Settings are the temperatures and thresholds the run used.
	Settings Settings `json:"settings"`

	Debaters  []Speaker   `json:"debaters"`
	Observers []*Observer `json:"observers,omitempty"`
	// ObserverMode is how the observers were chosen: named, generate:N,
	// from an ensemble file, or none.
	ObserverMode string `json:"observer_mode"`

	Main Phase `json:"main"`
	// Questions are the branch questions as the observers asked them (or the
	// one generic question), before near-duplicates were merged.
	Questions []*Question `json:"questions,omitempty"`
	// Merged are the questions folded into an earlier one as near-duplicates.
	Merged   []Merge   `json:"merged,omitempty"`
	Branches []*Branch `json:"branches,omitempty"`
	// Final is the final merge across every branch: the enriched
	// understanding. With one branch it is that branch's merge-back.
	Final     string     `json:"final,omitempty"`
	Diversity *Diversity `json:"diversity,omitempty"`
	// Graph is what the debaters got from the argument graph and what the
	// debate added to it (sot debate --graph).
	Graph *GraphRecord `json:"graph,omitempty"`

	Missing []Missing `json:"missing,omitempty"`
	Notes   []string  `json:"notes,omitempty"`
	// Steps are the Executes the run made, in order, with the calls that
	// made each one due and the calls that rode along.
	Steps []Step `json:"steps"`
	Usage Usage  `json:"usage"`
	// Started and Finished are the wall-clock times of this invocation;
	// they go into outputs only, never into a prompt.
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
}

// Partial reports whether parts of the debate are missing.
func (r *Result) Partial() bool { return len(r.Missing) > 0 }

// Speaker is a debater as the result names it.
type Speaker struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Stance string `json:"stance"`
	Focus  string `json:"focus"`
	Source string `json:"source"` // built-in, project, user or a file
}

// Phase is one debate: the main one or a branch's.
type Phase struct {
	Turns []*Turn `json:"turns"`
	// Summary is the phase's summary in two or three sentences; no later
	// call reads it.
	Summary string `json:"summary,omitempty"`
}

// Turn is one debater's contribution.
type Turn struct {
	// N numbers the turns of a phase from 1 in speaking order; Round is
	// the round it belongs to (from 1).
	N       int    `json:"n"`
	Round   int    `json:"round"`
	Debater string `json:"debater"`
	Name    string `json:"name"`
	Text    string `json:"text"`
	// Summary is the turn in 15 words or fewer; no later call reads it.
	Summary string `json:"summary,omitempty"`
	// Step is the step (1-based) that produced the turn.
	Step int `json:"step"`
}

// Question is a branch question, as one observer (or the generic prompt)
// gave it.
type Question struct {
	// Observer is the observer's id; "" for the generic question.
	Observer string `json:"observer,omitempty"`
	Name     string `json:"observer_name,omitempty"`
	Question string `json:"question"`
	// Missing is what the observer found lacking in the transcript; Why is
	// why its bias sees it.
	Missing string `json:"missing"`
	Why     string `json:"why"`
	// Context is the observer's neutral account of where the main debate
	// stands, which the branch's debaters read instead of the transcript.
	Context string `json:"context"`
	// Branch is the number of the branch that debates the question (after
	// merging); 0 when the question failed.
	Branch int `json:"branch,omitempty"`
}

// Merge records a question folded into an earlier, near-identical one.
type Merge struct {
	Observer   string  `json:"observer"`
	Question   string  `json:"question"`
	Into       int     `json:"into_branch"`
	IntoAsker  string  `json:"into_observer"`
	Similarity float64 `json:"similarity"`
}

// Branch is one branch question debated, synthesized and merged back.
type Branch struct {
	N        int       `json:"n"`
	Question *Question `json:"question"`
	// Observers are the observers that asked it (more than one when
	// near-duplicates were merged into it).
	Observers []string   `json:"observers,omitempty"`
	Debate    Phase      `json:"debate"`
	Synthesis *Synthesis `json:"synthesis,omitempty"`
	// MergeBack is how the branch changes the reading of the main debate.
	MergeBack string `json:"merge_back,omitempty"`
	// Failed says at which step the branch stopped, when it did.
	Failed string `json:"failed,omitempty"`
}

// Complete reports whether the branch was debated, synthesized and merged
// back.
func (b *Branch) Complete() bool { return b.Failed == "" && b.MergeBack != "" }

// Synthesis is a branch debate's resolution.
type Synthesis struct {
	Perspectives []string `json:"perspectives"`
	Resolved     []string `json:"resolved"`
	InTension    []string `json:"in_tension"`
	Summary      string   `json:"summary"`
}

// Missing is a part of the debate that could not be made.
type Missing struct {
	Step  string `json:"step"`
	What  string `json:"what"`
	Error string `json:"error"`
	// Budget: the part was not run because a budget was reached.
	Budget bool `json:"budget,omitempty"`
	err    error
}

// Step is one Execute of the run.
type Step struct {
	N int `json:"n"`
	// What made the step due ("main debate, turn 3"), and the labels of the
	// calls that did; Riders are the calls that rode along (summaries, the
	// observer chain), which no call of this step waits for.
	What   string   `json:"what"`
	Calls  []string `json:"calls"`
	Riders []string `json:"riders,omitempty"`
}

// Usage is what the run cost, the journal's replayed calls included.
type Usage struct {
	Calls             int     `json:"calls"`
	NewCalls          int     `json:"new_calls"`
	Replayed          int     `json:"replayed"`
	CacheHits         int     `json:"cache_hits,omitempty"`
	InputTokens       int     `json:"input_tokens"`
	CachedInputTokens int     `json:"cached_input_tokens,omitempty"`
	OutputTokens      int     `json:"output_tokens"`
	CostUSD           float64 `json:"cost_usd"`
	NewCostUSD        float64 `json:"new_cost_usd"`
	// Steps is the number of Executes: the critical path of dependent calls.
	Steps  int   `json:"steps"`
	WallMS int64 `json:"wall_ms"`
}
