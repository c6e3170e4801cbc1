package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
)

// Policy says what an untrusted project file may do with one setting.
type Policy int

// The policies. Every key of the configuration has one (Policies), and a
// key that has none is refused, so a setting added later is never left
// open by accident.
const (
	// Unknown: no policy is written down; the setting is refused.
	Unknown Policy = iota
	// Shape: the setting shapes what is looked at or how the result looks,
	// and costs no more; a project may set it freely.
	Shape
	// Model: a model or alias. A project may choose among the models of
	// the configured providers, but not one that runs a program.
	Model
	// UserOnly: the setting could run a program, send a key elsewhere,
	// choose which secret is sent or move the cache; only the user sets it.
	UserOnly
	// CountDown: a positive count no higher than the user's (0 there is
	// no limit).
	CountDown
	// CountUp: a count no lower than the user's (a threshold below which a
	// costlier path is taken).
	CountUp
	// LimitDown: a positive limit no higher than the user's (0 there is no
	// limit), or the same one.
	LimitDown
	// RetriesDown: 0 or more, no more than the user's.
	RetriesDown
	// FractionDown: a number no higher than the user's (a similarity or
	// distance whose higher values cost more calls).
	FractionDown
	// DurationDown: a positive duration no longer than the user's.
	DurationDown
	// OffOnly: a switch the project may turn off, never on, because on
	// costs calls (or, for cache.disabled, pays again for answers held).
	OffOnly
	// InsideProject: a path that must stay inside the project.
	InsideProject
	// Price: a price no lower than the one sot would count.
	Price
)

var policyNames = map[Policy]string{
	Unknown: "unknown (refused)", Shape: "free: shapes the run", Model: "a model that runs no program",
	UserOnly: "user only", CountDown: "fewer only", CountUp: "more only", LimitDown: "tighter only",
	RetriesDown: "fewer only", FractionDown: "lower only", DurationDown: "shorter only", OffOnly: "off only",
	InsideProject: "inside the project only", Price: "no lower price",
}

func (p Policy) String() string { return policyNames[p] }

// policies gives each key pattern of the configuration its policy. A "*"
// matches one map key (a provider, an alias, a model).
var policies = map[string]rule{
	"default_model":        {Model, ""},
	"aliases.*":            {Model, ""},
	"providers.*.type":     {UserOnly, whyProgram},
	"providers.*.program":  {UserOnly, whyProgram},
	"providers.*.env":      {UserOnly, whySecret},
	"providers.*.base_url": {UserOnly, whyEndpoint},
	"providers.*.api_key":  {UserOnly, whySecret},
	"providers.*.api_key_env": {
		UserOnly, whySecret},
	"providers.*.concurrency": {CountDown, whyLimit},
	"providers.*.rpm":         {LimitDown, whyLimit},
	"providers.*.timeout":     {DurationDown, whyTime},
	"prices.*.input":          {Price, whyPrice},
	"prices.*.cached_input":   {Price, whyPrice},
	"prices.*.cache_write":    {Price, whyPrice},
	"prices.*.output":         {Price, whyPrice},
	"concurrency":             {CountDown, whyLimit},
	"retries":                 {RetriesDown, whyLimit},
	"timeout":                 {DurationDown, whyTime},
	"budget.max_calls":        {LimitDown, whyLimit},
	"budget.max_tokens":       {LimitDown, whyLimit},
	"budget.max_cost":         {LimitDown, whyLimit},
	"cache.disabled":          {OffOnly, whyNoCache},
	"cache.dir":               {UserOnly, whyCache},
	"executor.*":              {UserOnly, whyExecutor},
	"executor.tls.*":          {UserOnly, whyExecutor},

	"ask.corpus":                          {InsideProject, whyCorpus},
	"ask.max_sources":                     {CountDown, whyCalls},
	"ask.enable_sot":                      {OffOnly, whyCalls},
	"ask.conflict_detection":              {Shape, ""}, // local, no call
	"ask.debate_phase":                    {OffOnly, whyCalls},
	"ask.diversity_selection":             {Shape, ""}, // which sources, not how many
	"ask.role_strategy":                   {Shape, ""},
	"ask.min_agents_for_sot":              {CountUp, whyCalls},
	"ask.include_perspective_in_response": {Shape, ""},
	"ask.conflict_threshold":              {Shape, ""}, // local, no call
	"ask.groups":                          {Shape, ""}, // a group is one call for many sources
	"ask.custom_groups":                   {Shape, ""},
	// A lower threshold reads more questions by group, which is fewer
	// calls; a higher one is the per-source reading, which max_sources
	// bounds.
	"ask.min_agents_for_group_decomposition": {Shape, ""},

	"debate.temperatures.turn":          {Shape, ""},
	"debate.temperatures.turn_summary":  {Shape, ""},
	"debate.temperatures.phase_summary": {Shape, ""},
	"debate.temperatures.generation":    {Shape, ""},
	"debate.temperatures.question":      {Shape, ""},
	"debate.temperatures.synthesis":     {Shape, ""},
	"debate.temperatures.merge":         {Shape, ""},
	// Questions less alike than this are debated apart: a higher value
	// merges fewer, so more branches run.
	"debate.duplicate_similarity": {FractionDown, whyCalls},
	// A higher distance sends more generated observers back.
	"debate.min_observer_distance": {FractionDown, whyCalls},
	"debate.regenerations":         {CountDown, whyCalls},
	"debate.graph_budget":          {LimitDown, whySent},
	// Every turn is quoted in every later prompt of its debate.
	"debate.turn_words": {CountDown, whyLonger},

	// Each look is a call, and its results are sent.
	"review.tools":       {OffOnly, whyCalls},
	"review.tool_rounds": {CountDown, whyCalls},
	"review.tool_tokens": {CountDown, whySent},
	// Whose findings were accepted is the user's history: a project may
	// turn the weighing off, never on.
	"review.learn_from_resolutions": {OffOnly, whyCalls},
}

// rule is a policy and the reason given when a value breaks it.
type rule struct {
	Policy
	why string
}

// More reasons a project setting is ignored.
const (
	whyTime  = "would let a call run longer than your limit"
	whyCalls = "would make more calls than your settings allow"
	// whyExecutor: where calls run decides where the material and the
	// answers go, and which machine's keys pay.
	whyExecutor = "would choose where your runs' material, answers and calls are sent"
	whySent     = "would send more of the material than your limit"
	// A longer turn is paid for in its answer and again in every later
	// prompt that quotes it.
	whyLonger = "would make the debaters' turns longer than your setting"
)

// DefaultGraphBudget is what debate.graph_budget: 0 stands for, the
// tokens of an argument graph a debater gets (debate/graph's
// DefaultContextBudget).
const DefaultGraphBudget = 12000

// PolicyOf returns the policy of a dotted key ("providers.openai.timeout"),
// Unknown when the configuration has no such key.
func PolicyOf(key string) Policy { return policyOf(splitKey(key)).Policy }

func splitKey(key string) []string {
	parts := strings.Split(key, ".")
	// A model name under prices may hold dots.
	if len(parts) > 3 && parts[0] == "prices" {
		parts = []string{"prices", strings.Join(parts[1:len(parts)-1], "."), parts[len(parts)-1]}
	}
	return parts
}

func policyOf(parts []string) rule {
	for pat, r := range policies {
		if matchKey(strings.Split(pat, "."), parts) {
			return r
		}
	}
	return rule{Unknown, "is not a setting sot knows the limits of"}
}

func matchKey(pat, parts []string) bool {
	if len(pat) != len(parts) {
		return false
	}
	for i := range pat {
		if pat[i] != "*" && pat[i] != parts[i] {
			return false
		}
	}
	return true
}

// allows returns "" when an untrusted project may give the key (split in
// parts) the value v, and otherwise the reason it may not. Model and
// Price are judged later, with the whole file in view.
func (r rule) allows(v any, parts []string, base *Config, top string) string {
	switch r.Policy {
	case Shape, Model, Price:
		return ""
	case UserOnly, Unknown:
		return r.why
	case InsideProject:
		if p, ok := v.(string); ok && insideProject(top, p) {
			return ""
		}
		return r.why
	case OffOnly:
		if b, ok := v.(bool); ok && (!b || baseBool(base, parts)) {
			return ""
		}
		return r.why
	case CountDown:
		if tighterCount(v, int(baseNumber(base, parts))) {
			return ""
		}
		return r.why
	case CountUp:
		if n, ok := number(v); ok && n >= baseNumber(base, parts) {
			return ""
		}
		return r.why
	case LimitDown:
		if tighterBudget(v, baseNumber(base, parts)) {
			return ""
		}
		return r.why
	case RetriesDown:
		if n, ok := number(v); ok && n >= 0 && n <= baseNumber(base, parts) && n == float64(int(n)) {
			return ""
		}
		return r.why
	case FractionDown:
		if n, ok := number(v); ok && n >= 0 && n <= baseNumber(base, parts) {
			return ""
		}
		return r.why
	case DurationDown:
		d, ok := durationOf(v)
		cur := baseDuration(base, parts)
		if ok && (d == cur || d > 0 && (cur <= 0 || d < cur)) {
			return ""
		}
		return r.why
	}
	return r.why
}

// baseNumber is the number base sets for a key, with the values a zero
// stands for filled in: a provider's concurrency is the global one, and
// debate.graph_budget's is DefaultGraphBudget.
func baseNumber(base *Config, parts []string) float64 {
	key := strings.Join(parts, ".")
	switch {
	case len(parts) == 3 && parts[0] == "providers" && parts[2] == "concurrency":
		if n := base.Providers[parts[1]].Concurrency; n > 0 {
			return float64(n)
		}
		return float64(base.Concurrency)
	case key == "debate.graph_budget":
		if base.Debate.GraphBudget > 0 {
			return float64(base.Debate.GraphBudget)
		}
		return DefaultGraphBudget
	case key == "debate.turn_words":
		return float64(base.Debate.WithDefaults().TurnWords)
	case key == "debate.duplicate_similarity", key == "debate.min_observer_distance", key == "debate.regenerations":
		// Zero takes the default.
		d := base.Debate.WithDefaults()
		switch parts[1] {
		case "duplicate_similarity":
			return d.DuplicateSimilarity
		case "min_observer_distance":
			return d.MinObserverDistance
		}
		return float64(d.Regenerations)
	}
	n, _ := number(baseValue(base, parts))
	return n
}

func baseBool(base *Config, parts []string) bool {
	b, _ := baseValue(base, parts).(bool)
	return b
}

// baseDuration is the timeout base sets: a provider without one of its own
// has the global one.
func baseDuration(base *Config, parts []string) time.Duration {
	if len(parts) == 3 && parts[0] == "providers" {
		if d := base.Providers[parts[1]].Timeout; d > 0 {
			return time.Duration(d)
		}
		return time.Duration(base.Timeout)
	}
	return time.Duration(base.Timeout)
}

func durationOf(v any) (time.Duration, bool) {
	b, err := json.Marshal(v)
	if err != nil {
		return 0, false
	}
	var d Duration
	if d.UnmarshalJSON(b) != nil {
		return 0, false
	}
	return time.Duration(d), true
}

// baseValue is the value of a key in base, as the flattened JSON form
// holds it, or nil.
func baseValue(base *Config, parts []string) any {
	m, err := toMap(base)
	if err != nil {
		return nil
	}
	var cur any = m
	for _, p := range parts {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[p]
	}
	return cur
}

// Keys lists the key patterns of the configuration, read off the Config
// type: a "*" stands for a map key. Each is a setting a file may make.
func Keys() []string {
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				continue
			}
			key := name
			if prefix != "" {
				key = prefix + "." + name
			}
			leaf(f.Type, key, &out, walk)
		}
	}
	walk(reflect.TypeOf(Config{}), "")
	sort.Strings(out)
	return out
}

func leaf(t reflect.Type, key string, out *[]string, walk func(reflect.Type, string)) {
	switch {
	case t == reflect.TypeOf(Duration(0)):
		*out = append(*out, key)
	case t.Kind() == reflect.Struct:
		walk(t, key)
	case t.Kind() == reflect.Map:
		leaf(t.Elem(), key+".*", out, walk)
	case t.Kind() == reflect.Pointer:
		leaf(t.Elem(), key, out, walk)
	default:
		*out = append(*out, key)
	}
}

// PolicyTable is every key of the configuration with its policy, for
// documentation (docs/security.md) and for "sot config --policies".
func PolicyTable() []string {
	var rows []string
	for _, k := range Keys() {
		rows = append(rows, fmt.Sprintf("%s\t%s", k, PolicyOf(k)))
	}
	return rows
}
