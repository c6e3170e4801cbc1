package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/llm"
)

type fixture struct {
	user, project, explicit string
	env                     map[string]string
	flags                   [][3]string
	// trusted trusts the project file as written (as "sot trust" does).
	trusted bool
}

func (f fixture) load(t *testing.T) (*Config, Sources, error) {
	t.Helper()
	root := t.TempDir()
	userDir := filepath.Join(root, "xdg", "sot")
	work := filepath.Join(root, "repo")
	os.MkdirAll(filepath.Join(work, ".git"), 0o755)
	write := func(path, body string) {
		if body == "" {
			return
		}
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(userDir, "config.yaml"), f.user)
	write(filepath.Join(work, ".sot", "config.yaml"), f.project)
	l := &Loader{WorkDir: work, UserDir: userDir, Getenv: func(k string) string { return f.env[k] },
		Trust: &TrustStore{Path: filepath.Join(root, "state", "trusted.json")}}
	if f.trusted {
		if _, err := l.Trust.Add(filepath.Join(work, ".sot", "config.yaml"), work); err != nil {
			t.Fatal(err)
		}
	}
	if f.explicit != "" {
		l.File = filepath.Join(root, "extra.yaml")
		if f.explicit != "(missing)" {
			write(l.File, f.explicit)
		}
	}
	for _, fl := range f.flags {
		l.Set(fl[0], fl[1], fl[2])
	}
	return l.Load()
}

func TestPrecedence(t *testing.T) {
	tests := []struct {
		name       string
		f          fixture
		key        string
		get        func(*Config) any
		want       any
		wantSource string
	}{
		{"default", fixture{}, "concurrency", func(c *Config) any { return c.Concurrency }, 20, "default"},
		{"user beats default", fixture{user: "concurrency: 3\n"}, "concurrency", func(c *Config) any { return c.Concurrency }, 3, "user config"},
		{"project beats user when it tightens", fixture{user: "concurrency: 5\n", project: "concurrency: 3\n"}, "concurrency", func(c *Config) any { return c.Concurrency }, 3, "project config"},
		{"untrusted project cannot loosen", fixture{user: "concurrency: 3\n", project: "concurrency: 5\n"}, "concurrency", func(c *Config) any { return c.Concurrency }, 3, "user config"},
		{"trusted project beats user", fixture{user: "concurrency: 3\n", project: "concurrency: 5\n", trusted: true}, "concurrency", func(c *Config) any { return c.Concurrency }, 5, "project config"},
		{"--config beats project", fixture{project: "concurrency: 5\n", explicit: "concurrency: 6\n"}, "concurrency", func(c *Config) any { return c.Concurrency }, 6, "--config"},
		{"env beats project", fixture{project: "concurrency: 5\n", env: map[string]string{"SOT_CONCURRENCY": "7"}}, "concurrency", func(c *Config) any { return c.Concurrency }, 7, "env SOT_CONCURRENCY"},
		{"flag beats env", fixture{env: map[string]string{"SOT_MODEL": "openai:gpt-4.1"}, flags: [][3]string{{"default_model", "anthropic:claude-sonnet-4-5", "--model"}}}, "default_model", func(c *Config) any { return c.DefaultModel }, "anthropic:claude-sonnet-4-5", "flag --model"},
		{"SOT_MODEL is the default model", fixture{project: "default_model: openai:gpt-4.1-mini\n", env: map[string]string{"SOT_MODEL": "openai:gpt-4.1"}}, "default_model", func(c *Config) any { return c.DefaultModel }, "openai:gpt-4.1", "env SOT_MODEL"},
		{"provider env var sets base URL", fixture{project: "providers:\n  openai:\n    base_url: http://a.example/v1\n", env: map[string]string{"OPENAI_BASE_URL": "http://b.example/v1"}}, "providers.openai.base_url", func(c *Config) any { return c.Providers["openai"].BaseURL }, "http://b.example/v1", "env OPENAI_BASE_URL"},
		{"OLLAMA_HOST without scheme", fixture{env: map[string]string{"OLLAMA_HOST": "10.0.0.2:11434"}}, "providers.ollama.base_url", func(c *Config) any { return c.Providers["ollama"].BaseURL }, "http://10.0.0.2:11434", "env OLLAMA_HOST"},
		{"project keeps unrelated user keys", fixture{user: "retries: 2\n", project: "concurrency: 5\n"}, "retries", func(c *Config) any { return c.Retries }, 2, "user config"},
		{"nested provider key merges", fixture{user: "providers:\n  openai:\n    concurrency: 2\n"}, "providers.openai.api_key_env", func(c *Config) any { return c.Providers["openai"].APIKeyEnv }, "OPENAI_API_KEY", "default"},
		{"durations", fixture{project: "timeout: 45s\n"}, "timeout", func(c *Config) any { return time.Duration(c.Timeout) }, 45 * time.Second, "project config"},
		{"price keys with dots", fixture{project: "prices:\n  openai:gpt-4.1:\n    input: 3\n    output: 9\n"}, "prices.openai:gpt-4.1.input", func(c *Config) any { return c.Prices["openai:gpt-4.1"].Input }, 3.0, "project config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, src, err := tt.f.load(t)
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.get(cfg); got != tt.want {
				t.Errorf("value = %v, want %v", got, tt.want)
			}
			if got := src.Of(tt.key); !strings.HasPrefix(got, tt.wantSource) {
				t.Errorf("source = %q, want %q", got, tt.wantSource)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		f    fixture
		want string
	}{
		{"malformed YAML names file, line and column", fixture{project: "concurrency: 4\nproviders:\n  openai: [\n"}, "config.yaml:3:"},
		{"wrong type", fixture{user: "concurrency: lots\n"}, "config.yaml:1:14"},
		{"unknown key", fixture{project: "concurency: 4\n"}, "config.yaml:1:1"},
		{"base URL that is not a URL", fixture{env: map[string]string{"OPENAI_BASE_URL": "localhost:8080"}}, "providers.openai.base_url (from env OPENAI_BASE_URL): \"localhost:8080\" is not a URL"},
		{"negative budget", fixture{flags: [][3]string{{"budget.max_cost", "-1", "--max-cost"}}}, "budget.max_cost (from flag --max-cost): must be a number of dollars, 0 (no limit) or more, not -1"},
		{"NaN budget", fixture{flags: [][3]string{{"budget.max_cost", "NaN", "--max-cost"}}}, "--max-cost \"NaN\": not a number of dollars"},
		{"infinite budget", fixture{env: map[string]string{"SOT_MAX_COST": "+Inf"}}, "SOT_MAX_COST=\"+Inf\": not a number of dollars"},
		{"infinite budget in a file", fixture{user: "budget: {max_cost: .inf}\n"}, "budget.max_cost (from user config"},
		{"negative timeout", fixture{user: "timeout: -1s\n"}, "timeout (from user config"},
		{"negative timeout from env", fixture{env: map[string]string{"SOT_TIMEOUT": "-1s"}}, "timeout (from env SOT_TIMEOUT): must be a positive duration"},
		{"negative provider timeout", fixture{user: "providers:\n  openai:\n    timeout: -5s\n"}, "providers.openai.timeout"},
		{"env not a number", fixture{env: map[string]string{"SOT_MAX_CALLS": "many"}}, "SOT_MAX_CALLS=\"many\": not a whole number"},
		{"unknown provider in default model", fixture{env: map[string]string{"SOT_MODEL": "gemini:pro"}}, "unknown provider \"gemini\""},
		{"unknown provider type", fixture{user: "providers:\n  mine:\n    type: grpc\n"}, "providers.mine.type"},
		{"missing --config file", fixture{explicit: "(missing)"}, "extra.yaml: no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := tt.f.load(t)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestResolveModel(t *testing.T) {
	cfg, _, err := fixture{user: "default_model: smart\naliases:\n  smart: anthropic:claude-sonnet-4-5\n  fast: openai:gpt-4.1-mini\nproviders:\n  openrouter:\n    type: openai\n    base_url: https://openrouter.ai/api/v1\n"}.load(t)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, want, err string }{
		{"", "anthropic:claude-sonnet-4-5", ""},
		{"fast", "openai:gpt-4.1-mini", ""},
		{"openrouter:meta/llama-3", "openrouter:meta/llama-3", ""},
		{"ollama:qwen2.5:7b", "ollama:qwen2.5:7b", ""},
		{"vertex:gemini", "", "unknown provider"},
		// A bare name: an alias first, then the provider its family is
		// known by; anything else names the alias that would fix it.
		{"gpt-4.1", "openai:gpt-4.1", ""},
		{"gpt-5.2", "openai:gpt-5.2", ""},
		{"claude-opus-4.6", "anthropic:claude-opus-4.6", ""},
		{"o3", "openai:o3", ""},
		{"o4-mini", "openai:o4-mini", ""},
		{"o1-preview", "openai:o1-preview", ""},
		{"gemini-3-pro", "", `add to your config: aliases: {gemini-3-pro: <provider>:gemini-3-pro}`},
		{"o3x", "", "write it as provider:model"},
		{"claude", "", "names no provider"},
	}
	for _, tt := range tests {
		ref, err := cfg.ResolveModel(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ResolveModel(%q) err = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || ref.String() != tt.want {
			t.Errorf("ResolveModel(%q) = %v, %v; want %s", tt.in, ref, err, tt.want)
		}
	}
	if _, err := cfg.ResolveModel("vertex:gemini"); !errors.Is(err, llm.ErrUnknownProvider) {
		t.Errorf("unknown provider should wrap llm.ErrUnknownProvider: %v", err)
	}
	var ume *UnknownModelError
	if _, err := cfg.ResolveModel("gemini-3-pro"); !errors.As(err, &ume) || ume.Name != "gemini-3-pro" || !errors.Is(err, llm.ErrUnknownProvider) {
		t.Errorf("an unplaceable bare name should be an *UnknownModelError wrapping llm.ErrUnknownProvider: %v", err)
	}
}

// TestResolveBareModelAliasFirst: an alias wins over the family prefix,
// and an alias may itself point at a bare name of a known family.
func TestResolveBareModelAliasFirst(t *testing.T) {
	cfg := Defaults()
	cfg.Aliases = map[string]string{"gpt-5.2": "anthropic:claude-sonnet-4-5", "gemini-3-pro": "ollama:gemini-3-pro", "best": "claude-opus-4.6"}
	tests := []struct{ in, want string }{
		{"gpt-5.2", "anthropic:claude-sonnet-4-5"},
		{"gemini-3-pro", "ollama:gemini-3-pro"},
		{"best", "anthropic:claude-opus-4.6"},
		{"gpt-4.1-mini", "openai:gpt-4.1-mini"},
	}
	for _, tt := range tests {
		ref, err := cfg.ResolveModel(tt.in)
		if err != nil || ref.String() != tt.want {
			t.Errorf("ResolveModel(%q) = %v, %v; want %s", tt.in, ref, err, tt.want)
		}
	}
}

func TestValuesRedactSecrets(t *testing.T) {
	cfg, src, err := fixture{project: "providers:\n  openai:\n    api_key: sk-live-abcdef123456\n", trusted: true}.load(t)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := Values(cfg, src)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, v := range vals {
		if strings.Contains(v.Key+" "+toString(v.Value), "sk-live") {
			t.Fatalf("secret shown: %+v", v)
		}
		if v.Key == "providers.openai.api_key" {
			found = true
			if v.Value != "[REDACTED]" || !strings.HasPrefix(v.Source, "project config") {
				t.Errorf("api_key shown as %+v", v)
			}
		}
	}
	if !found {
		t.Error("the configured api_key is not listed at all")
	}
}

func toString(v any) string {
	s, _ := v.(string)
	return s
}

func TestIsSecret(t *testing.T) {
	tests := []struct {
		key  string
		want bool
	}{
		{"providers.openai.api_key", true},
		{"providers.x.auth_token", true},
		{"providers.x.token", true},
		{"providers.x.client_secret", true},
		{"providers.x.password", true},
		{"budget.max_tokens", false}, // a count, not a credential
		{"providers.openai.api_key_env", false},
		{"providers.ollama.base_url", false},
	}
	for _, tt := range tests {
		if got := isSecret(tt.key); got != tt.want {
			t.Errorf("isSecret(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}

// An alias may name a bare model that its family places (claude-...).
func TestAliasToBareModel(t *testing.T) {
	cfg, _, err := fixture{user: "aliases:\n  best: claude-opus-4.6\n"}.load(t)
	if err != nil {
		t.Fatal(err)
	}
	if ref, err := cfg.ResolveModel("best"); err != nil || ref.String() != "anthropic:claude-opus-4.6" {
		t.Fatalf("best = %v, %v", ref, err)
	}
	if _, _, err := (fixture{user: "aliases:\n  odd: grok-4\n"}).load(t); err == nil || !strings.Contains(err.Error(), "aliases.odd") {
		t.Fatalf("an alias to a name sot cannot place loaded: %v", err)
	}
}

// The ask settings default to northstar's (with its app's conflict
// threshold), and a value sot cannot use is refused with its key and
// source.
func TestAskSettings(t *testing.T) {
	d := Defaults()
	if d.Ask.MaxSources != 10 || !d.Ask.EnableSoT || d.Ask.RoleStrategy != "rotating" || d.Ask.MinAgentsForSoT != 2 || d.Ask.ConflictThreshold != 0.6 ||
		d.Ask.MinAgentsForGroupDecomposition != 6 {
		t.Errorf("defaults %+v", d.Ask)
	}
	tests := []struct {
		name string
		edit func(*Ask)
		want string
	}{
		{"strategy", func(a *Ask) { a.RoleStrategy = "random" }, "ask.role_strategy"},
		{"no sources", func(a *Ask) { a.MaxSources = 0 }, "ask.max_sources"},
		{"no agents", func(a *Ask) { a.MinAgentsForSoT = 0 }, "ask.min_agents_for_sot"},
		{"threshold", func(a *Ask) { a.ConflictThreshold = 1.5 }, "ask.conflict_threshold"},
		{"groups", func(a *Ask) { a.Groups = "temporal,source" }, "ask.groups"},
		{"no groups", func(a *Ask) { a.Groups = " , " }, "ask.groups"},
		{"group min", func(a *Ask) { a.MinAgentsForGroupDecomposition = 1 }, "ask.min_agents_for_group_decomposition"},
		{"unnamed group", func(a *Ask) { a.CustomGroups = []CustomGroup{{Tags: []string{"x"}}} }, "ask.custom_groups[0]: a custom group needs a name"},
		{"ruleless group", func(a *Ask) { a.CustomGroups = []CustomGroup{{Name: "Risks"}} }, "has no rule"},
		{"bad date", func(a *Ask) { a.CustomGroups = []CustomGroup{{Name: "Q1", From: "2026-13-01"}} }, "YYYY-MM-DD"},
		{"reversed dates", func(a *Ask) { a.CustomGroups = []CustomGroup{{Name: "Q1", From: "2026-03-01", To: "2026-01-01"}} }, "after to"},
		{"escaping glob", func(a *Ask) { a.CustomGroups = []CustomGroup{{Name: "Up", Paths: []string{"../other/**"}}} }, "inside it"},
		{"bad glob", func(a *Ask) { a.CustomGroups = []CustomGroup{{Name: "Odd", Paths: []string{"notes/[a"}}} }, "not a valid glob"},
		{"two of a name", func(a *Ask) {
			a.CustomGroups = []CustomGroup{{Name: "Risks", Tags: []string{"a"}}, {Name: "risks", Tags: []string{"b"}}}
		}, "a second group"},
		{"a grouping's name", func(a *Ask) { a.CustomGroups = []CustomGroup{{Name: "Thematic", Tags: []string{"a"}}} }, "grouping of its own"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Defaults()
			tt.edit(&c.Ask)
			if err := c.Validate(Sources{}); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate = %v, want an error about %s", err, tt.want)
			}
		})
	}
}

func TestParseCustomGroup(t *testing.T) {
	tests := []struct {
		in   string
		want CustomGroup
		err  string
	}{
		{"Launch risks=tags:security, risk;from:2026-01-01", CustomGroup{Name: "Launch risks", Tags: []string{"security", "risk"}, From: "2026-01-01"}, ""},
		{"Notes=path:notes/**/*.md;type:transcript;to:2026-06-30", CustomGroup{Name: "Notes", Paths: []string{"notes/**/*.md"}, Types: []string{"transcript"}, To: "2026-06-30"}, ""},
		{"Risks", CustomGroup{}, "write NAME=KEY:VALUE"},
		{"Risks=colour:red", CustomGroup{}, `unknown key "colour"`},
		{"Risks=security", CustomGroup{}, "has no KEY:VALUE"},
		{"=tags:a", CustomGroup{}, "needs a name"},
		{"A,B=tags:a", CustomGroup{}, "comma"},
	}
	for _, tt := range tests {
		got, err := ParseCustomGroup(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseCustomGroup(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseCustomGroup(%q) = %+v, %v, want %+v", tt.in, got, err, tt.want)
		}
	}
}

// Custom groups load from YAML as a list.
func TestCustomGroupsFromYAML(t *testing.T) {
	cfg, _, err := fixture{user: "ask:\n  groups: Launch risks,Next steps\n  custom_groups:\n    - name: Launch risks\n      tags: [security]\n    - name: Next steps\n      description: what was assigned\n      paths: [\"notes/**\"]\n      from: 2026-01-01\n"}.load(t)
	if err != nil {
		t.Fatal(err)
	}
	want := []CustomGroup{{Name: "Launch risks", Tags: []string{"security"}}, {Name: "Next steps", Description: "what was assigned", Paths: []string{"notes/**"}, From: "2026-01-01"}}
	if !reflect.DeepEqual(cfg.Ask.CustomGroups, want) || cfg.Ask.Groups != "Launch risks,Next steps" {
		t.Errorf("ask = %+v", cfg.Ask)
	}
}

// An untrusted project may define and choose custom groups: they shape how
// its sources are grouped, never what runs or what is spent.
func TestUntrustedProjectCustomGroups(t *testing.T) {
	cfg, _, err := fixture{project: "ask:\n  groups: Risks\n  custom_groups:\n    - name: Risks\n      tags: [risk]\n"}.load(t)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Ask.CustomGroups) != 1 || cfg.Ask.CustomGroups[0].Name != "Risks" || cfg.Ask.Groups != "Risks" {
		t.Errorf("ask = %+v", cfg.Ask)
	}
}

// The debate settings default to the seed's temperatures; a value out of
// range is refused with its key; an untrusted project may lower the
// observer regenerations (fewer calls) but not raise them.
func TestDebateSettings(t *testing.T) {
	d := Defaults()
	if d.Debate.Temperatures.Turn != 0.7 || d.Debate.Temperatures.Generation != 0.85 || d.Debate.Regenerations != 2 {
		t.Errorf("defaults %+v", d.Debate)
	}
	c := Defaults()
	c.Debate.Temperatures.Merge = 3
	if err := c.Validate(Sources{}); err == nil || !strings.Contains(err.Error(), "debate.temperatures.merge") {
		t.Errorf("Validate = %v", err)
	}
	c = Defaults()
	c.Debate.GraphBudget = -1
	if err := c.Validate(Sources{}); err == nil || !strings.Contains(err.Error(), "debate.graph_budget") {
		t.Errorf("Validate = %v", err)
	}
	cfg, _, err := fixture{project: "debate:\n  regenerations: 9\n  graph_budget: 4000\n  temperatures:\n    turn: 0.9\n"}.load(t)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Debate.Regenerations != 2 || cfg.Debate.Temperatures.Turn != 0.9 || cfg.Debate.GraphBudget != 4000 {
		t.Errorf("untrusted project: %+v", cfg.Debate)
	}
	cfg, _, err = fixture{project: "debate:\n  regenerations: 1\n"}.load(t)
	if err != nil || cfg.Debate.Regenerations != 1 {
		t.Errorf("a lower regenerations: %+v, %v", cfg.Debate, err)
	}
}

// A debater's turn is about debate.turn_words words: 60 by default (the
// seed's two or three sentences), 0 the default too, outside its range
// refused with its key. A project may shorten turns, not lengthen them,
// even when the user's file writes 0 for the default.
func TestDebateTurnWords(t *testing.T) {
	if d := Defaults(); d.Debate.TurnWords != DefaultTurnWords || DefaultTurnWords != 60 {
		t.Errorf("default turn_words %d", d.Debate.TurnWords)
	}
	if w := (Debate{}).WithDefaults().TurnWords; w != DefaultTurnWords {
		t.Errorf("0 stands for %d", w)
	}
	for _, bad := range []int{-5, MaxTurnWords + 1} {
		c := Defaults()
		c.Debate.TurnWords = bad
		if err := c.Validate(Sources{}); err == nil || !strings.Contains(err.Error(), "debate.turn_words") {
			t.Errorf("turn_words %d: Validate = %v", bad, err)
		}
	}
	for _, user := range []string{"", "debate: {turn_words: 0}\n"} {
		l, _ := loader(t, user, "debate: {turn_words: 300}\n")
		cfg, _, err := l.Load()
		if err != nil || cfg.Debate.WithDefaults().TurnWords != DefaultTurnWords {
			t.Errorf("user %q: a project lengthened turns to %d (%v)", user, cfg.Debate.TurnWords, err)
		}
		l, _ = loader(t, user, "debate: {turn_words: 30}\n")
		if cfg, _, err = l.Load(); err != nil || cfg.Debate.TurnWords != 30 {
			t.Errorf("user %q: a project could not shorten turns: %d (%v)", user, cfg.Debate.TurnWords, err)
		}
	}
}

// An executor sot does not know, a width past Temporal's limit of pending
// activities, or a negative heartbeat is refused with its key; the
// defaults run locally.
func TestExecutorSettings(t *testing.T) {
	if d := Defaults(); d.Executor.Kind != "" {
		t.Errorf("default executor %q, want local (empty)", d.Executor.Kind)
	}
	for _, tt := range []struct {
		name string
		edit func(*Executor)
		want string
	}{
		{"kind", func(e *Executor) { e.Kind = "kubernetes" }, `executor.kind (from default): "kubernetes": use local`},
		{"width", func(e *Executor) { e.MaxInFlight = 5000 }, "executor.max_in_flight"},
		{"heartbeat", func(e *Executor) { e.Heartbeat = Duration(-time.Second) }, "executor.heartbeat"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := Defaults()
			tt.edit(&c.Executor)
			if err := c.Validate(Sources{}); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate = %v, want an error about %s", err, tt.want)
			}
		})
	}
	c := Defaults()
	c.Executor = Executor{Kind: ExecutorTemporal, MaxInFlight: 64}
	if err := c.Validate(Sources{}); err != nil {
		t.Errorf("a temporal executor 64 wide: %v", err)
	}
}
