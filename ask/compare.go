package ask

import (
	"context"
	"fmt"
)

// Configuration is one of the seed's A/B configurations of a question.
type Configuration struct {
	Name string
	// apply changes the options and settings of a run into this
	// configuration.
	apply func(o *Options)
}

// Configurations are the seed's six A/B configurations, in its order.
var Configurations = []Configuration{
	{"Control", func(o *Options) { o.Config.Ask.EnableSoT = false; noGroups(o) }},
	{"SoT-Rotating", func(o *Options) {
		o.Config.Ask.RoleStrategy = "rotating"
		o.Config.Ask.DebatePhase = false
		noGroups(o)
	}},
	{"SoT-Primary", func(o *Options) {
		o.Config.Ask.RoleStrategy = "primary-only"
		o.Config.Ask.DebatePhase = false
		noGroups(o)
	}},
	{"SoT-Debate", func(o *Options) { o.Config.Ask.RoleStrategy = "rotating"; o.Debate = true; noGroups(o) }},
	{"SoT-Groups", func(o *Options) { o.Config.Ask.DebatePhase = false; o.Groups = groupsOr(o) }},
	{"SoT-Groups+Debate", func(o *Options) { o.Debate = true; o.Groups = groupsOr(o) }},
}

func noGroups(o *Options) { o.Groups, o.Config.Ask.Groups = "", "" }

// groupsOr is the grouping the run asked for, else by quarter.
func groupsOr(o *Options) string {
	if o.Groups != "" {
		return o.Groups
	}
	if o.Config.Ask.Groups != "" {
		return o.Config.Ask.Groups
	}
	return "temporal"
}

// Measured is what one configuration of one question cost and found.
type Measured struct {
	Question      string  `json:"question"`
	Configuration string  `json:"configuration"`
	RunID         string  `json:"run_id"`
	Calls         int     `json:"calls"`
	InputTokens   int     `json:"input_tokens"`
	CachedTokens  int     `json:"cached_input_tokens"`
	OutputTokens  int     `json:"output_tokens"`
	CostUSD       float64 `json:"cost_usd"`
	WallMS        int64   `json:"wall_ms"`
	Tensions      int     `json:"tensions"`
	Agreements    int     `json:"agreements"`
	ByGroup       bool    `json:"by_group"`
	// TokenOverhead and Latency are relative to the question's Control run
	// (0.25 is 25% more).
	TokenOverhead float64 `json:"token_overhead"`
	Latency       float64 `json:"latency"`
	Missing       int     `json:"missing,omitempty"`
	Error         string  `json:"error,omitempty"`
}

// Rates are the seed's metrics over a set of questions, for one
// configuration.
type Rates struct {
	Configuration string `json:"configuration"`
	Questions     int    `json:"questions"`
	// ConflictRate is the share of questions with at least one tension
	// (the seed's target band is 15-30%).
	ConflictRate float64 `json:"conflict_detection_rate"`
	// GroupRate is the share of questions read by group, and
	// InterGroupRate the share of those with a tension between groups
	// (the seed's targets: over 60%, and 20-40%).
	GroupRate      float64 `json:"group_decomposition_rate"`
	InterGroupRate float64 `json:"inter_group_conflict_rate"`
}

// Comparison is a set of questions under every configuration.
type Comparison struct {
	Runs  []Measured `json:"runs"`
	Rates []Rates    `json:"rates"`
}

// Compare asks each question under each of the seed's configurations on
// the same corpus, one after the other, and measures every run as its
// journal and meter record it (wall time by the hooks' clock). The runs share the response cache, so the
// calls two configurations have in common are paid once, and each keeps
// its journal, so comparing again costs nothing. newOptions returns fresh
// options (with their own copy of the configuration) for a question.
func Compare(ctx context.Context, questions []string, newOptions func(question string) *Options) (*Comparison, error) {
	c := &Comparison{}
	for _, q := range questions {
		var control *Measured
		for _, cf := range Configurations {
			o := newOptions(q)
			cf.apply(o)
			m := Measured{Question: q, Configuration: cf.Name}
			p, err := Prepare(ctx, o)
			if err == nil {
				var out *Outcome
				out, err = Execute(ctx, p, o)
				if err == nil {
					a := out.Answer
					m.RunID, m.ByGroup, m.Missing = a.RunID, a.ByGroup, len(a.Missing)
					u := a.Usage
					m.Calls, m.InputTokens, m.CachedTokens, m.OutputTokens, m.CostUSD, m.WallMS = u.Calls, u.InputTokens, u.CachedInputTokens, u.OutputTokens, u.CostUSD, u.WallMS
					if a.Debate != nil {
						m.Tensions = len(a.Debate.Tensions)
					} else if a.ConflictSummary != nil {
						m.Tensions = a.ConflictSummary.Tensions
					}
					if a.ConflictSummary != nil {
						m.Agreements = a.ConflictSummary.Agreements
					}
				}
			}
			if ctx.Err() != nil {
				return c, ctx.Err()
			}
			if err != nil {
				m.Error = err.Error()
			}
			if cf.Name == "Control" {
				mc := m
				control = &mc
			}
			if control != nil && control.Error == "" && m.Error == "" {
				if t := control.InputTokens + control.OutputTokens; t > 0 {
					m.TokenOverhead = float64(m.InputTokens+m.OutputTokens)/float64(t) - 1
				}
				if control.WallMS > 0 {
					m.Latency = float64(m.WallMS)/float64(control.WallMS) - 1
				}
			}
			c.Runs = append(c.Runs, m)
		}
	}
	for _, cf := range Configurations {
		r := Rates{Configuration: cf.Name}
		grouped, interGroup := 0, 0
		conflicts := 0
		for _, m := range c.Runs {
			if m.Configuration != cf.Name || m.Error != "" {
				continue
			}
			r.Questions++
			if m.Tensions > 0 {
				conflicts++
			}
			if m.ByGroup {
				grouped++
				if m.Tensions > 0 {
					interGroup++
				}
			}
		}
		if r.Questions > 0 {
			r.ConflictRate = float64(conflicts) / float64(r.Questions)
			r.GroupRate = float64(grouped) / float64(r.Questions)
		}
		if grouped > 0 {
			r.InterGroupRate = float64(interGroup) / float64(grouped)
		}
		c.Rates = append(c.Rates, r)
	}
	return c, nil
}

// String is the comparison as a table, one row a run.
func (m Measured) String() string {
	return fmt.Sprintf("%-18s %5d %8d %8d %7d  $%.4f %7dms %3d %3d %+6.0f%% %+6.0f%%",
		m.Configuration, m.Calls, m.InputTokens, m.CachedTokens, m.OutputTokens, m.CostUSD, m.WallMS, m.Tensions, m.Agreements, m.TokenOverhead*100, m.Latency*100)
}
