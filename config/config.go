// Package config loads sot's configuration and remembers where every value
// came from. Precedence, highest first: flags, environment (SOT_* and the
// providers' own variables), the project's .sot/config.yaml, the user's
// $XDG_CONFIG_HOME/sot/config.yaml, then built-in defaults.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/sotlabs/sot/llm"
)

// Config is the merged configuration.
type Config struct {
	// DefaultModel is the session default, "provider:model" or an alias.
	DefaultModel string `yaml:"default_model" json:"default_model"`
	// Aliases name models: "fast: openai:gpt-4.1-mini".
	Aliases map[string]string `yaml:"aliases" json:"aliases"`
	// Providers configures backends by name. The built-in names are openai,
	// anthropic, ollama and command; other names need a type.
	Providers map[string]Provider `yaml:"providers" json:"providers"`
	// Prices override or extend the built-in price table (USD per million tokens).
	Prices llm.PriceTable `yaml:"prices" json:"prices"`
	// Concurrency is the default number of calls in flight per provider.
	Concurrency int `yaml:"concurrency" json:"concurrency"`
	// Retries is how many times a failed call is tried again: 0 means one
	// attempt and no retry.
	Retries int `yaml:"retries" json:"retries"`
	// Timeout bounds each attempt of a call.
	Timeout Duration `yaml:"timeout" json:"timeout"`
	Budget  Budget   `yaml:"budget" json:"budget"`
	Cache   Cache    `yaml:"cache" json:"cache"`
	// Ask configures sot ask.
	Ask Ask `yaml:"ask" json:"ask"`
	// Debate configures sot debate: temperatures by kind of call and the
	// thresholds of its observers and branch questions.
	Debate Debate `yaml:"debate" json:"debate"`
	// Review configures sot review: how far specialists may look.
	Review Review `yaml:"review" json:"review"`
	// Executor says where runs make their model calls: in this process,
	// or on Temporal workers. Only the user may set it.
	Executor Executor `yaml:"executor" json:"executor"`
}

// Executors a run may use.
const (
	ExecutorLocal    = "local"
	ExecutorTemporal = "temporal"
	DriveWorker      = "worker"
	DriveClient      = "client"
)

// Executor says where runs make their model calls (see docs/scale-out.md).
type Executor struct {
	// Kind is "local" (the default: this process) or "temporal".
	Kind string `yaml:"kind" json:"kind,omitempty"`
	// Drive says where a run's protocol runs under the temporal executor:
	// "worker" (the default) drives the whole run on a worker, so that it
	// outlives the machine that started it, from a copy of the project
	// sent through the blob store; "client" runs the protocol in the
	// starting command, and only the model calls, masked, go to workers.
	Drive string `yaml:"drive" json:"drive,omitempty"`
	// Address is the Temporal frontend, host:port (default
	// 127.0.0.1:7233, a dev server).
	Address string `yaml:"address" json:"address,omitempty"`
	// Namespace defaults to "default".
	Namespace string `yaml:"namespace" json:"namespace,omitempty"`
	// TaskQueue is the queue workers take sot's work from (default "sot").
	TaskQueue string `yaml:"task_queue" json:"task_queue,omitempty"`
	// Blobs is where requests and answers are kept for the workers: a
	// directory every worker and client of a queue shares (default:
	// sot/blobs in the user cache directory, for workers on this machine),
	// or an S3-compatible bucket, s3://BUCKET[/PREFIX][?endpoint=...].
	Blobs string `yaml:"blobs" json:"blobs,omitempty"`
	// Heartbeat is how long a worker making a call may go unheard before
	// the call is given to another worker (default 30s).
	Heartbeat Duration `yaml:"heartbeat" json:"heartbeat,omitempty"`
	// MaxInFlight is how many calls a run keeps open on its workflow at
	// once (default 10, the Temporal server's default limit of Updates
	// in flight on one workflow, history.maxInFlightUpdates; raise both
	// together).
	MaxInFlight int `yaml:"max_in_flight" json:"max_in_flight,omitempty"`
	// APIKeyEnv names the variable holding a Temporal Cloud API key.
	APIKeyEnv string `yaml:"api_key_env" json:"api_key_env,omitempty"`
	// TLS connects over TLS, with a client certificate when Cert and Key
	// are set (Temporal Cloud's mTLS). An API key implies TLS.
	TLS ExecutorTLS `yaml:"tls" json:"tls,omitempty"`
}

// ExecutorTLS are the TLS settings of the connection to Temporal.
type ExecutorTLS struct {
	Enabled    bool   `yaml:"enabled" json:"enabled,omitempty"`
	Cert       string `yaml:"cert" json:"cert,omitempty"`
	Key        string `yaml:"key" json:"key,omitempty"`
	CA         string `yaml:"ca" json:"ca,omitempty"`
	ServerName string `yaml:"server_name" json:"server_name,omitempty"`
}

// Ask configures sot ask: the corpus it reads and the steps of its society
// of thought (northstar's settings, under their snake_case names).
type Ask struct {
	// Corpus is the default corpus: files and directories, relative to the
	// project's top (default .sot/corpus).
	Corpus string `yaml:"corpus" json:"corpus"`
	// MaxSources caps the sources read for one question.
	MaxSources int `yaml:"max_sources" json:"max_sources"`
	// EnableSoT off is the control run: one plain call per source and a
	// plain reduce, with no roles, conflicts or debate.
	EnableSoT bool `yaml:"enable_sot" json:"enable_sot"`
	// ConflictDetection runs the lexical conflict detector over the answers.
	ConflictDetection bool `yaml:"conflict_detection" json:"conflict_detection"`
	// DebatePhase lets analytical and comparative questions (or --debate)
	// have the debate step of map-debate-reduce.
	DebatePhase bool `yaml:"debate_phase" json:"debate_phase"`
	// DiversitySelection picks sources for relevance and variety at once.
	DiversitySelection bool `yaml:"diversity_selection" json:"diversity_selection"`
	// RoleStrategy is uniform, rotating, adaptive or primary-only.
	RoleStrategy string `yaml:"role_strategy" json:"role_strategy"`
	// MinAgentsForSoT is the fewest relevant sources a society needs; below
	// it the question is answered plainly, with a note.
	MinAgentsForSoT int `yaml:"min_agents_for_sot" json:"min_agents_for_sot"`
	// IncludePerspectiveInResponse labels each contribution of the answer
	// with its perspective.
	IncludePerspectiveInResponse bool `yaml:"include_perspective_in_response" json:"include_perspective_in_response"`
	// ConflictThreshold is the lexical detector's similarity threshold.
	ConflictThreshold float64 `yaml:"conflict_threshold" json:"conflict_threshold"`
	// Groups reads the sources by group: temporal (by quarter), source
	// (by source type), thematic (by topic tags, or by the themes sot
	// sources group --thematic named), or a comma-separated list of
	// CustomGroups names; empty reads them one by one.
	Groups string `yaml:"groups" json:"groups"`
	// CustomGroups are groups defined by a name and a match rule.
	CustomGroups []CustomGroup `yaml:"custom_groups" json:"custom_groups"`
	// MinAgentsForGroupDecomposition is the fewest chosen sources for
	// which a question is read by group (the seed's default is 6).
	MinAgentsForGroupDecomposition int `yaml:"min_agents_for_group_decomposition" json:"min_agents_for_group_decomposition"`
}

// Provider configures one backend.
type Provider struct {
	// Type is openai, anthropic, ollama or command; built-in names imply it.
	Type    string `yaml:"type" json:"type"`
	BaseURL string `yaml:"base_url" json:"base_url"`
	// APIKeyEnv names the environment variable that holds the key.
	APIKeyEnv string `yaml:"api_key_env" json:"api_key_env"`
	// APIKey is discouraged (prefer APIKeyEnv); it is never printed.
	APIKey      string   `yaml:"api_key" json:"api_key"`
	Concurrency int      `yaml:"concurrency" json:"concurrency"`
	RPM         int      `yaml:"rpm" json:"rpm"`
	Timeout     Duration `yaml:"timeout" json:"timeout"`
	// Program is the command backend's program (default "llm").
	Program string `yaml:"program" json:"program"`
	// Env names the environment variables a command backend's program
	// gets besides the minimal set (PATH, HOME, the locale and the llm
	// CLI's own LLM_* variables): a key the program needs, say
	// OPENAI_API_KEY. Only the user may set it.
	Env []string `yaml:"env" json:"env,omitempty"`
}

// Budget caps a run; zero means no cap.
type Budget struct {
	MaxCalls  int     `yaml:"max_calls" json:"max_calls"`
	MaxTokens int     `yaml:"max_tokens" json:"max_tokens"`
	MaxCost   float64 `yaml:"max_cost" json:"max_cost"`
}

// Cache configures the response cache.
type Cache struct {
	Disabled bool   `yaml:"disabled" json:"disabled"`
	Dir      string `yaml:"dir" json:"dir"`
}

// Duration is a time.Duration written as "90s" or "2m".
type Duration time.Duration

// UnmarshalJSON accepts a duration string or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n float64
		if err2 := json.Unmarshal(b, &n); err2 != nil {
			return fmt.Errorf("want a duration such as \"90s\", got %s", b)
		}
		*d = Duration(n * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration such as \"90s\", got %q", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalText lets YAML decode durations from strings.
func (d *Duration) UnmarshalText(b []byte) error {
	return d.UnmarshalJSON([]byte(strconvQuote(string(b))))
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// BuiltinProviders are the backend types sot knows.
var BuiltinProviders = []string{llm.ProviderAnthropic, llm.ProviderCommand, llm.ProviderOllama, llm.ProviderOpenAI}

// Defaults returns the built-in configuration.
func Defaults() Config {
	return Config{
		// A default review (nine specialists under up to two lenses each)
		// has 18 calls in flight at once.
		Concurrency: 20,
		Retries:     4,
		Timeout:     Duration(3 * time.Minute),
		Providers: map[string]Provider{
			llm.ProviderOpenAI:    {Type: llm.ProviderOpenAI, APIKeyEnv: "OPENAI_API_KEY"},
			llm.ProviderAnthropic: {Type: llm.ProviderAnthropic, APIKeyEnv: "ANTHROPIC_API_KEY"},
			llm.ProviderOllama:    {Type: llm.ProviderOllama, BaseURL: "http://127.0.0.1:11434"},
			llm.ProviderCommand:   {Type: llm.ProviderCommand, Program: "llm", Timeout: Duration(5 * time.Minute)},
		},
		// northstar's defaults, but its app's conflict threshold (0.6, where
		// the detector's own default is 0.75).
		Ask: Ask{MaxSources: 10, EnableSoT: true, ConflictDetection: true, DebatePhase: true, DiversitySelection: true,
			RoleStrategy: "rotating", MinAgentsForSoT: 2, IncludePerspectiveInResponse: true, ConflictThreshold: 0.6,
			MinAgentsForGroupDecomposition: 6},
		Debate: DefaultDebate(),
		Review: DefaultReview(),
	}
}

// ProviderType returns the backend type of a configured provider name.
func (c *Config) ProviderType(name string) string {
	if p, ok := c.Providers[name]; ok && p.Type != "" {
		return p.Type
	}
	return name
}

// ResolveModel expands an alias and checks that the reference names a
// configured provider. An empty name means the default model. A bare model
// name (no "provider:") that is no alias takes the provider its name is
// known by: claude-* is Anthropic's; gpt-*, chatgpt-*, o1, o3 and o4 (and
// their -suffixed variants) are OpenAI's. Any other bare name is an
// *UnknownModelError, which says which alias would fix it.
func (c *Config) ResolveModel(name string) (llm.ModelRef, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		name = c.DefaultModel
	}
	if name == "" {
		return llm.ModelRef{}, fmt.Errorf("%w: set SOT_MODEL=provider:model (for example openai:gpt-4.1), pass --model, or set default_model in .sot/config.yaml", ErrNoModel)
	}
	seen := map[string]bool{}
	for {
		target, ok := c.Aliases[name]
		if !ok || seen[name] {
			break
		}
		seen[name] = true
		name = strings.TrimSpace(target)
	}
	if !strings.Contains(name, ":") {
		provider := providerByName(name)
		if provider == "" {
			e := &UnknownModelError{Name: name}
			if p := strings.ToLower(name); c.isProvider(p) {
				// "openai": a provider, and no model.
				e.Provider, e.Example = p, llm.ExampleModel(c.ProviderType(p))
			}
			return llm.ModelRef{}, e
		}
		name = provider + ":" + name
	}
	ref, err := llm.ParseModel(name)
	if err != nil {
		return ref, err
	}
	if _, ok := c.Providers[ref.Provider]; !ok {
		return ref, fmt.Errorf("%w %q in model %q: use one of %s, or configure it under providers: with a type", llm.ErrUnknownProvider, ref.Provider, name, strings.Join(c.ProviderNames(), ", "))
	}
	return ref, nil
}

// isProvider reports whether name is a configured or built-in provider.
func (c *Config) isProvider(name string) bool {
	if _, ok := c.Providers[name]; ok {
		return true
	}
	for _, b := range BuiltinProviders {
		if name == b {
			return true
		}
	}
	return false
}

// providerByName returns the provider a bare model name is known by, from
// the well-known prefixes of model families (claude- for Anthropic; gpt-,
// chatgpt-, o1, o3 and o4 for OpenAI), or "" when the name does not say.
func providerByName(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	switch {
	case m == "":
		return ""
	case strings.HasPrefix(m, "claude-"):
		return llm.ProviderAnthropic
	case strings.HasPrefix(m, "gpt-"), strings.HasPrefix(m, "chatgpt-"):
		return llm.ProviderOpenAI
	}
	for _, family := range []string{"o1", "o3", "o4"} {
		if m == family || strings.HasPrefix(m, family+"-") {
			return llm.ProviderOpenAI
		}
	}
	return ""
}

// ErrNoModel: no model was named and none is configured.
var ErrNoModel = errors.New("no model configured")

// UnknownModelError is a bare model name that is no alias and whose
// provider cannot be told from the name. It wraps llm.ErrUnknownProvider.
// Callers that know where the name came from (a file and line, a flag) put
// that before the message.
type UnknownModelError struct {
	// Name is the model as written (after aliases were followed).
	Name string
	// Provider is set when Name is itself the name of a provider
	// ("openai"): a provider, and no model. Example is then a model of
	// its type, or "".
	Provider, Example string
}

func (e *UnknownModelError) Error() string {
	if e.Provider != "" {
		msg := fmt.Sprintf("model %q names the provider %s but no model: write it as %s:MODEL", e.Name, e.Provider, e.Provider)
		if e.Example != "" {
			msg += fmt.Sprintf(", for example %s:%s", e.Provider, e.Example)
		}
		return msg
	}
	return fmt.Sprintf("model %q names no provider, and its name is not one sot can place: write it as provider:model (for example openai:%[1]s), or add to your config: aliases: {%[1]s: <provider>:%[1]s}", e.Name)
}

// Unwrap lets errors.Is(err, llm.ErrUnknownProvider) hold.
func (e *UnknownModelError) Unwrap() error { return llm.ErrUnknownProvider }

// ProviderNames lists configured providers, sorted.
func (c *Config) ProviderNames() []string {
	var names []string
	for n := range c.Providers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Validate reports the first problem in the merged configuration, naming the
// key and where its value came from.
func (c *Config) Validate(src Sources) error {
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("%s (from %s): %s", key, src.Of(key), fmt.Sprintf(format, args...))
	}
	if c.Concurrency < 0 {
		return bad("concurrency", "must be 0 or more, not %d", c.Concurrency)
	}
	if c.Retries < 0 {
		return bad("retries", "must be 0 or more, not %d", c.Retries)
	}
	if c.Budget.MaxCalls < 0 {
		return bad("budget.max_calls", "must be 0 (no limit) or more, not %d", c.Budget.MaxCalls)
	}
	if c.Budget.MaxTokens < 0 {
		return bad("budget.max_tokens", "must be 0 (no limit) or more, not %d", c.Budget.MaxTokens)
	}
	if c.Budget.MaxCost < 0 || math.IsNaN(c.Budget.MaxCost) || math.IsInf(c.Budget.MaxCost, 0) {
		return bad("budget.max_cost", "must be a number of dollars, 0 (no limit) or more, not %g", c.Budget.MaxCost)
	}
	switch c.Executor.Kind {
	case "", ExecutorLocal, ExecutorTemporal:
	default:
		return bad("executor.kind", "%q: use local (this process) or temporal (sot worker processes)", c.Executor.Kind)
	}
	switch c.Executor.Drive {
	case "", DriveWorker, DriveClient:
	default:
		return bad("executor.drive", "%q: use worker (the run goes on without the machine that started it) or client (the protocol runs in the starting command)", c.Executor.Drive)
	}
	if c.Executor.MaxInFlight < 0 || c.Executor.MaxInFlight > 2000 {
		return bad("executor.max_in_flight", "must be 0 (the default, 10) to 2000, not %d", c.Executor.MaxInFlight)
	}
	if c.Executor.Heartbeat < 0 {
		return bad("executor.heartbeat", "must not be negative")
	}
	switch c.Ask.RoleStrategy {
	case "uniform", "rotating", "adaptive", "primary-only":
	default:
		return bad("ask.role_strategy", "%q: use uniform, rotating, adaptive or primary-only", c.Ask.RoleStrategy)
	}
	if c.Ask.MaxSources < 1 {
		return bad("ask.max_sources", "must be 1 or more, not %d", c.Ask.MaxSources)
	}
	if c.Ask.MinAgentsForSoT < 1 {
		return bad("ask.min_agents_for_sot", "must be 1 or more, not %d", c.Ask.MinAgentsForSoT)
	}
	if err := checkGroups(c.Ask); err != nil {
		key := "ask.groups"
		if strings.HasPrefix(err.Error(), "ask.custom_groups") {
			key = "ask.custom_groups"
		}
		return fmt.Errorf("%w (from %s)", err, src.Of(key))
	}
	if err := c.Review.Validate(); err != nil {
		key, _, _ := strings.Cut(err.Error(), ":")
		return fmt.Errorf("%w (from %s)", err, src.Of(key))
	}
	if err := c.Debate.Validate(); err != nil {
		key, _, _ := strings.Cut(err.Error(), ":")
		return fmt.Errorf("%w (from %s)", err, src.Of(key))
	}
	if c.Ask.MinAgentsForGroupDecomposition < 2 {
		return bad("ask.min_agents_for_group_decomposition", "must be 2 or more, not %d", c.Ask.MinAgentsForGroupDecomposition)
	}
	if t := c.Ask.ConflictThreshold; !(t >= 0 && t <= 1) {
		return bad("ask.conflict_threshold", "must be between 0 and 1, not %g", t)
	}
	if c.Timeout < 0 {
		return bad("timeout", "must be a positive duration such as \"90s\" (or 0 for the default), not %s", time.Duration(c.Timeout))
	}
	for _, name := range c.ProviderNames() {
		p := c.Providers[name]
		key := "providers." + name
		switch c.ProviderType(name) {
		case llm.ProviderOpenAI, llm.ProviderAnthropic, llm.ProviderOllama, llm.ProviderCommand:
		default:
			return bad(key+".type", "unknown provider type %q; use one of %s", p.Type, strings.Join(BuiltinProviders, ", "))
		}
		if p.BaseURL != "" {
			if err := CheckURL(p.BaseURL); err != nil {
				return bad(key+".base_url", "%v", err)
			}
		}
		if p.Concurrency < 0 || p.RPM < 0 {
			return bad(key, "concurrency and rpm must be 0 or more")
		}
		if p.Timeout < 0 {
			return bad(key+".timeout", "must be a positive duration such as \"90s\" (or 0 for the default), not %s", time.Duration(p.Timeout))
		}
	}
	for alias, target := range c.Aliases {
		if _, err := llm.ParseModel(target); err != nil {
			// A bare name is fine when its family places it (claude-...).
			if _, rerr := c.ResolveModel(target); rerr != nil {
				return bad("aliases."+alias, "%v", err)
			}
		}
	}
	if c.DefaultModel != "" {
		if _, err := c.ResolveModel(c.DefaultModel); err != nil {
			return bad("default_model", "%v", err)
		}
	}
	return nil
}

// CheckURL accepts an absolute http or https URL with a host.
func CheckURL(s string) error {
	if _, err := llm.ParseBaseURL(s); err != nil {
		return fmt.Errorf("%q is not a URL: want an absolute http:// or https:// URL such as http://127.0.0.1:11434", s)
	}
	return nil
}
