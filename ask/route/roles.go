package route

import (
	"fmt"
	"strings"
	"time"
)

// The seven perspective roles. Each is the ID of a role persona in
// persona/builtin/roles/ (analyst.md, ...), which a project may override.
const (
	RoleAnalyst     = "analyst"
	RoleAdvocate    = "advocate"
	RoleCritic      = "critic"
	RoleSynthesizer = "synthesizer"
	RoleHistorian   = "historian"
	RoleStakeholder = "stakeholder"
	RolePragmatist  = "pragmatist"
)

// PrimaryRoles are the four roles used most often, in the seed's order.
var PrimaryRoles = []string{RoleAnalyst, RoleAdvocate, RoleCritic, RoleSynthesizer}

// AllRoles are the seven roles: the primary ones, then the specialized
// historian, stakeholder and pragmatist.
var AllRoles = []string{
	RoleAnalyst, RoleAdvocate, RoleCritic, RoleSynthesizer,
	RoleHistorian, RoleStakeholder, RolePragmatist,
}

// RolesFor returns the perspective roles for an intent, as the seed's table
// gives them:
//
//	factual      analyst, advocate, critic (also any unknown intent)
//	comparative  analyst, critic, synthesizer
//	aggregative  analyst, advocate, synthesizer
//	analytical   analyst, critic, advocate, synthesizer
//	temporal     analyst, historian, synthesizer
//
// The list is not padded to the number of sources; Assign cycles through it.
// The result is a new slice the caller may change.
func RolesFor(intent Intent) []string {
	switch intent {
	case IntentComparative:
		return []string{RoleAnalyst, RoleCritic, RoleSynthesizer}
	case IntentAggregative:
		return []string{RoleAnalyst, RoleAdvocate, RoleSynthesizer}
	case IntentAnalytical:
		return []string{RoleAnalyst, RoleCritic, RoleAdvocate, RoleSynthesizer}
	case IntentTemporal:
		return []string{RoleAnalyst, RoleHistorian, RoleSynthesizer}
	default:
		return []string{RoleAnalyst, RoleAdvocate, RoleCritic}
	}
}

// Strategy is how Assign gives roles to sources.
type Strategy string

// The four strategies of the seed.
const (
	// Uniform gives every source the first role.
	Uniform Strategy = "uniform"
	// Rotating cycles through the roles in order, source by source.
	Rotating Strategy = "rotating"
	// Adaptive takes the role from the source itself: its suggested
	// perspective, else its content signals, else the rotation.
	Adaptive Strategy = "adaptive"
	// PrimaryOnly cycles through the four primary roles whatever the intent.
	PrimaryOnly Strategy = "primary-only"
)

// DefaultStrategy is the seed's roleAssignmentStrategy default.
const DefaultStrategy = Rotating

// Strategies lists every strategy.
var Strategies = []Strategy{Uniform, Rotating, Adaptive, PrimaryOnly}

// ParseStrategy reads a strategy name as --role-strategy and the
// role_strategy setting give it. Case, surrounding space and "_" for "-" do
// not matter; "" is the default, rotating.
func ParseStrategy(s string) (Strategy, error) {
	v := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "_", "-")
	if v == "" {
		return DefaultStrategy, nil
	}
	for _, st := range Strategies {
		if Strategy(v) == st {
			return st, nil
		}
	}
	return "", fmt.Errorf("unknown role strategy %q: want one of uniform, rotating, adaptive, primary-only", s)
}

// Signals are a source's content signals (the seed's contentSignals): how
// many risks, decisions, assigned actions, open questions and conflict
// indicators its analysis counted.
type Signals struct {
	RiskMentions       int `json:"riskMentions"`
	DecisionsMade      int `json:"decisionsMade"`
	ActionsAssigned    int `json:"actionsAssigned"`
	QuestionsRaised    int `json:"questionsRaised"`
	ConflictIndicators int `json:"conflictIndicators"`
}

// The content-signal thresholds of the adaptive strategy: a count strictly
// above its threshold gives the role, tried in this order.
const (
	RiskThreshold     = 3 // riskMentions > 3 → critic
	ActionThreshold   = 5 // actionsAssigned > 5 → pragmatist
	DecisionThreshold = 2 // decisionsMade > 2 → analyst
	QuestionThreshold = 3 // questionsRaised > 3 → advocate
)

// Candidate is one retrieved source as planning sees it.
type Candidate struct {
	// ID names the source uniquely in the corpus.
	ID string `json:"id"`
	// Relevance is the retrieval score, higher is better (a BM25 score
	// with its sign turned so, plus any recency bonus). Negative values
	// count as 0.
	Relevance float64 `json:"relevance"`
	// Fields are the values Select diversifies on, by field name
	// (FieldSourceType, FieldMeetingType, FieldQuarter, or any other).
	// A missing or empty value is never new.
	Fields map[string]string `json:"fields,omitempty"`
	// Suggested is the source's suggestedPerspective, a role ID, or "".
	Suggested string `json:"suggested,omitempty"`
	// Signals are the source's content signals.
	Signals Signals `json:"signals"`
	// Tags are the source's topic tags, for thematic groups and custom
	// group rules; Path (slash-separated, relative to the project's top)
	// and Date serve custom group rules too.
	Tags []string  `json:"tags,omitempty"`
	Path string    `json:"path,omitempty"`
	Date time.Time `json:"date,omitzero"`
}

// Assignment is the role one source is read from, and why.
type Assignment struct {
	SourceID string `json:"source"`
	Role     string `json:"role"`
	// Rule is the kind of rule that gave the role: "uniform", "rotation",
	// "suggested", "signal", "primary-only", or "group" (MemberRoles).
	Rule string `json:"rule"`
	// Why says the rule in words, with its numbers, to print.
	Why string `json:"why"`
}

// Assign gives every source exactly one role, in the order of sources,
// whatever the number of sources and roles:
//
//   - uniform: every source gets roles[0];
//   - rotating: source i gets roles[i mod len(roles)];
//   - adaptive: the source's suggested perspective when it is one of the
//     seven roles or one of roles, else the first content signal over its
//     threshold (riskMentions > 3 → critic, actionsAssigned > 5 →
//     pragmatist, decisionsMade > 2 → analyst, questionsRaised > 3 →
//     advocate), else the rotation as for rotating (by the source's position);
//   - primary-only: source i gets PrimaryRoles[i mod 4], whatever roles says.
//
// Role IDs are lowercased and trimmed and empty ones dropped; a roles list
// left empty is RolesFor(IntentFactual). An empty or unknown strategy is
// rotating.
func Assign(sources []Candidate, roles []string, strategy Strategy) []Assignment {
	roles = cleanRoles(roles)
	out := make([]Assignment, 0, len(sources))
	for i, s := range sources {
		a := Assignment{SourceID: s.ID}
		switch strategy {
		case Uniform:
			a.Role, a.Rule = roles[0], "uniform"
			a.Why = fmt.Sprintf("uniform: every source reads as %s, the first role for this question", roles[0])
		case Adaptive:
			a = adaptive(s, i, roles)
		case PrimaryOnly:
			a.Role, a.Rule = PrimaryRoles[i%len(PrimaryRoles)], "primary-only"
			a.Why = fmt.Sprintf("primary-only: source %d of the rotation over %s", i+1, strings.Join(PrimaryRoles, ", "))
		default:
			a = rotation(s.ID, i, roles, "")
		}
		out = append(out, a)
	}
	return out
}

func rotation(id string, i int, roles []string, prefix string) Assignment {
	return Assignment{
		SourceID: id,
		Role:     roles[i%len(roles)],
		Rule:     "rotation",
		Why:      fmt.Sprintf("%srotation: source %d over %s", prefix, i+1, strings.Join(roles, ", ")),
	}
}

func adaptive(s Candidate, i int, roles []string) Assignment {
	prefix := ""
	if sug := strings.ToLower(strings.TrimSpace(s.Suggested)); sug != "" {
		if contains(AllRoles, sug) || contains(roles, sug) {
			return Assignment{SourceID: s.ID, Role: sug, Rule: "suggested",
				Why: fmt.Sprintf("suggested perspective: the source suggests %s", sug)}
		}
		prefix = fmt.Sprintf("suggested perspective %q is not a role; ", s.Suggested)
	}
	if role, why := SignalRole(s.Signals); role != "" {
		return Assignment{SourceID: s.ID, Role: role, Rule: "signal", Why: prefix + "content signal: " + why}
	}
	return rotation(s.ID, i, roles, prefix+"no suggested perspective or signal over its threshold; ")
}

// SignalRole is the role a source's content signals call for, and the
// signal with its count; "" when none is over its threshold. The signals
// are tried in the seed's order: risks, actions, decisions, questions.
func SignalRole(sig Signals) (role, why string) {
	switch {
	case sig.RiskMentions > RiskThreshold:
		return RoleCritic, fmt.Sprintf("riskMentions %d > %d", sig.RiskMentions, RiskThreshold)
	case sig.ActionsAssigned > ActionThreshold:
		return RolePragmatist, fmt.Sprintf("actionsAssigned %d > %d", sig.ActionsAssigned, ActionThreshold)
	case sig.DecisionsMade > DecisionThreshold:
		return RoleAnalyst, fmt.Sprintf("decisionsMade %d > %d", sig.DecisionsMade, DecisionThreshold)
	case sig.QuestionsRaised > QuestionThreshold:
		return RoleAdvocate, fmt.Sprintf("questionsRaised %d > %d", sig.QuestionsRaised, QuestionThreshold)
	}
	return "", ""
}

// DefaultMinAgents is the seed's minAgentsForSoT.
const DefaultMinAgents = 2

// SkipSoT says whether a society of thought is skipped for n relevant
// sources, and the note to print when it is: below minAgents sources (0 or
// less means DefaultMinAgents) there is no one to disagree with, and the
// question is answered by plain calls without perspective roles.
func SkipSoT(n, minAgents int) (bool, string) {
	if minAgents <= 0 {
		minAgents = DefaultMinAgents
	}
	if n >= minAgents {
		return false, ""
	}
	return true, fmt.Sprintf("society of thought skipped: %d relevant %s, fewer than min_agents_for_sot (%d); answering without perspective roles",
		n, plural(n, "source", "sources"), minAgents)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// cleanRoles lowercases and trims role IDs and drops empty ones, so that no
// source is ever given an empty role.
func cleanRoles(roles []string) []string {
	out := make([]string, 0, len(roles))
	for _, r := range roles {
		if r = strings.ToLower(strings.TrimSpace(r)); r != "" {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return RolesFor(IntentFactual)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
