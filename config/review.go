package config

import "fmt"

// Review configures sot review: how far its specialists may look beyond
// the material.
type Review struct {
	// Tools lets specialists look at the project with read-only tools
	// (read, grep, list, git log, git show) where their model can call
	// tools; off, every specialist answers from the material alone.
	Tools bool `yaml:"tools" json:"tools"`
	// ToolRounds is how many rounds of tool calls one specialist call may
	// make before it must answer.
	ToolRounds int `yaml:"tool_rounds" json:"tool_rounds"`
	// ToolTokens bounds the tool results one specialist call is sent,
	// estimated at four bytes a token.
	ToolTokens int `yaml:"tool_tokens" json:"tool_tokens"`
	// LearnFromResolutions weighs the specialists --specialists adaptive:N
	// picks by how often their findings were accepted in this project
	// (sot stats), once a specialist has enough decisions to tell.
	LearnFromResolutions bool `yaml:"learn_from_resolutions" json:"learn_from_resolutions"`
}

// DefaultReview is the review configuration a run starts from.
func DefaultReview() Review { return Review{Tools: true, ToolRounds: 4, ToolTokens: 16000} }

// Validate checks the review settings; its errors start with the key.
func (r Review) Validate() error {
	if r.ToolRounds < 1 || r.ToolRounds > 20 {
		return fmt.Errorf("review.tool_rounds: %d; allow 1 to 20 rounds (set review.tools to false for none)", r.ToolRounds)
	}
	if r.ToolTokens < 1 {
		return fmt.Errorf("review.tool_tokens: %d; give a number of tokens of tool results (set review.tools to false for none)", r.ToolTokens)
	}
	return nil
}
