package debate

import "github.com/sotlabs/sot/config"

// Temperatures are the sampling temperatures of each kind of call.
type Temperatures = config.DebateTemperatures

// Settings are the tunable parts of a debate that are not flags (the
// config's debate: section). A zero field takes its default.
type Settings = config.Debate

// DefaultSettings are the seed's temperatures and sot's thresholds.
func DefaultSettings() Settings { return config.DefaultDebate() }

// The longest answer each kind of call may give, in tokens. They bound the
// plan's worst case (Plan.Bound) and keep a runaway answer from being fed
// to every later turn.
// A turn's is turnMaxTokens of its length (Settings.TurnWords).
const (
	maxSummaryTokens  = 64
	maxPhaseTokens    = 320
	maxObserverTokens = 1024
	maxQuestionTokens = 768
	maxSynthTokens    = 1536
	maxMergeTokens    = 1536
	maxFinalTokens    = 2048
)

// The answer lengths a typical run sees, for the dry run's estimate.
// A turn's is turnTypicalTokens of its length.
const (
	typicalSummaryTokens  = 24
	typicalPhaseTokens    = 110
	typicalObserverTokens = 320
	typicalQuestionTokens = 220
	typicalSynthTokens    = 420
	typicalMergeTokens    = 380
	typicalFinalTokens    = 600
)
