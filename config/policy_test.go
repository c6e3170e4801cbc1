package config

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
)

// The user's file used by TestEveryKeyHasAPolicy: every limit is set, so a
// looser project value can be told from a tighter one.
const policyUser = `concurrency: 4
retries: 3
timeout: 2s
budget: {max_calls: 10, max_tokens: 1000, max_cost: 2}
providers:
  openai: {concurrency: 2, rpm: 60, timeout: 2s}
ask: {max_sources: 5, debate_phase: false, enable_sot: false, min_agents_for_sot: 3}
debate: {graph_budget: 1000, regenerations: 2, duplicate_similarity: 0.5, min_observer_distance: 0.6, turn_words: 5}
review: {tools: false, tool_rounds: 5, tool_tokens: 5}
`

// shapeSamples are values a project may set for the keys that only shape
// a run; each must pass Validate.
var shapeSamples = map[string]any{
	"ask.conflict_detection":                 false,
	"ask.diversity_selection":                false,
	"ask.role_strategy":                      "adaptive",
	"ask.include_perspective_in_response":    false,
	"ask.conflict_threshold":                 0.4,
	"ask.groups":                             "temporal",
	"ask.custom_groups":                      []any{map[string]any{"name": "ops", "tags": []any{"ops"}}},
	"ask.min_agents_for_group_decomposition": 3,
	"debate.temperatures.turn":               0.5,
	"debate.temperatures.turn_summary":       0.5,
	"debate.temperatures.phase_summary":      0.5,
	"debate.temperatures.generation":         0.5,
	"debate.temperatures.question":           0.5,
	"debate.temperatures.synthesis":          0.5,
	"debate.temperatures.merge":              0.5,
}

// userOnlySamples are values only the user may set.
var userOnlySamples = map[string]any{
	"executor.kind":            "temporal",
	"executor.drive":           "client",
	"executor.address":         "temporal.evil.example:7233",
	"executor.namespace":       "theirs",
	"executor.task_queue":      "their-workers",
	"executor.blobs":           "/tmp/shared",
	"executor.heartbeat":       "1s",
	"executor.max_in_flight":   1500,
	"executor.api_key_env":     "OPENAI_API_KEY",
	"executor.tls.enabled":     false,
	"executor.tls.cert":        "/etc/ssl/x.pem",
	"executor.tls.key":         "/etc/ssl/x.key",
	"executor.tls.ca":          "/etc/ssl/ca.pem",
	"executor.tls.server_name": "evil.example",
	"providers.*.type":         "command",
	"providers.*.program":      "./.sot/x.sh",
	"providers.*.env":          []any{"AWS_SECRET_ACCESS_KEY"},
	"providers.*.base_url":     "http://evil.example",
	"providers.*.api_key":      "sk-project-key-123456",
	"providers.*.api_key_env":  "AWS_SECRET_ACCESS_KEY",
	"cache.dir":                "/tmp/elsewhere",
}

// samples gives, for a key pattern and its policy, a value the project
// may not set (loose) and one it may (tight; nil when there is none).
func samples(t *testing.T, pat string, p Policy) (loose, tight any) {
	switch p {
	case Shape:
		v, ok := shapeSamples[pat]
		if !ok {
			t.Fatalf("%s shapes the run, but shapeSamples has no value for it", pat)
		}
		return nil, v
	case UserOnly:
		v, ok := userOnlySamples[pat]
		if !ok {
			t.Fatalf("%s is for the user only, but userOnlySamples has no value for it", pat)
		}
		return v, nil
	case Model:
		return "command:sh -c evil", "openai:gpt-4.1"
	case Price:
		return 0.0001, 1000.0
	case CountDown:
		return 9, 1
	case CountUp:
		return 1, 50
	case LimitDown:
		return 0, 1 // no limit, against the user's
	case RetriesDown:
		return 1000, 1
	case FractionDown:
		return 0.95, 0.1
	case DurationDown:
		return "1000h", "1s"
	case OffOnly:
		return true, false
	case InsideProject:
		return "../../home/user/.ssh", "notes"
	}
	t.Fatalf("%s has no policy (%v): add it to policies in config/policy.go", pat, p)
	return nil, nil
}

// TestEveryKeyHasAPolicy walks every key of the configuration, read off
// the Config type, so a key added later is covered without a new case: it
// must have a policy, an untrusted project may not loosen it, and a
// trusted project may.
func TestEveryKeyHasAPolicy(t *testing.T) {
	keys := Keys()
	if len(keys) < 40 {
		t.Fatalf("Keys() found %d keys: %v", len(keys), keys)
	}
	for _, pat := range keys {
		p := PolicyOf(pat)
		t.Run(pat, func(t *testing.T) {
			loose, tight := samples(t, pat, p)
			key := strings.NewReplacer("providers.*", "providers.openai", "aliases.*", "aliases.mine", "prices.*", "prices.gpt-4.1").Replace(pat)
			for _, c := range []struct {
				name    string
				v       any
				trusted bool
				applied bool
			}{
				{"looser, untrusted", loose, false, false},
				{"looser, trusted", loose, true, true},
				{"tighter, untrusted", tight, false, true},
			} {
				if c.v == nil {
					continue
				}
				if c.trusted && (p == Model || pat == "providers.*.type" || pat == "providers.*.base_url") {
					continue // a trusted value must also be a working one; other tests cover these
				}
				if p == Price && c.applied {
					// A price replaces the model's whole price: one field
					// alone is judged against a model sot has no price for.
					key = strings.Replace(key, "gpt-4.1", "my-model", 1)
				}
				l, work := loader(t, policyUser, yamlOf(t, key, c.v))
				if c.trusted {
					if _, err := l.Trust.Add(work+"/.sot/config.yaml", work); err != nil {
						t.Fatal(err)
					}
				}
				_, src, err := l.Load()
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				ignored := false
				for _, it := range l.Ignored() {
					if strings.HasPrefix(key, it.Key) {
						ignored = true
						if it.Reason == "" || it.Line == 0 {
							t.Errorf("%s: ignored without reason or line: %+v", c.name, it)
						}
					}
				}
				fromProject := strings.HasPrefix(src.Of(key), "project config")
				if c.applied && (ignored || !fromProject) {
					t.Errorf("%s: %s = %v was not applied (ignored %v, source %q)", c.name, key, c.v, l.Ignored(), src.Of(key))
				}
				if !c.applied && (!ignored || fromProject) {
					t.Errorf("%s: %s = %v took effect (source %q); policy %v", c.name, key, c.v, src.Of(key), p)
				}
			}
		})
	}
}

// yamlOf writes one dotted key and its value as a YAML document.
func yamlOf(t *testing.T, key string, v any) string {
	t.Helper()
	parts := splitKey(key)
	var doc any = v
	for i := len(parts) - 1; i >= 0; i-- {
		doc = map[string]any{parts[i]: doc}
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The three settings the second security round loosened: each is held to
// the user's value now.
func TestProjectCannotLoosenTimeGraphOrDebate(t *testing.T) {
	l, _ := loader(t, "timeout: 2s\nask: {debate_phase: false}\n", "timeout: 1000h\nask: {debate_phase: true}\ndebate: {graph_budget: 1000000}\n")
	cfg, _, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	if time.Duration(cfg.Timeout) != 2*time.Second || cfg.Ask.DebatePhase || cfg.Debate.GraphBudget != 0 {
		t.Errorf("timeout %v, debate_phase %v, graph_budget %d: the project loosened the user's settings", cfg.Timeout, cfg.Ask.DebatePhase, cfg.Debate.GraphBudget)
	}
	var keys []string
	for _, it := range l.Ignored() {
		keys = append(keys, it.Key)
	}
	if got := strings.Join(keys, ","); got != "timeout,ask.debate_phase,debate.graph_budget" {
		t.Errorf("ignored %s", got)
	}
}

// docs/security.md names the policy of every key, under the policy's own
// heading, so the page cannot fall behind the code.
func TestSecurityPageListsEveryKey(t *testing.T) {
	doc, err := os.ReadFile("../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	heading := map[Policy]string{
		UserOnly: "- user only:", Model: "- a model that runs no program:", CountDown: "- fewer only:", RetriesDown: "- fewer only:",
		LimitDown: "- tighter only:", DurationDown: "- shorter only:", FractionDown: "- lower only:",
		CountUp: "more only:", OffOnly: "- off only:", Price: "- no lower price:",
		InsideProject: "- inside the project only:", Shape: "- free, because they only shape the run:",
	}
	text := string(doc)
	for _, k := range Keys() {
		p := PolicyOf(k)
		h, ok := heading[p]
		if !ok {
			t.Errorf("%s: policy %v has no heading on the page", k, p)
			continue
		}
		i := strings.Index(text, h)
		if i < 0 {
			t.Errorf("docs/security.md has no %q", h)
			continue
		}
		// The key is named before the next item of the list.
		rest := text[i+len(h):]
		if j := strings.Index(rest, "\n- "); j >= 0 {
			rest = rest[:j]
		}
		if j := strings.Index(rest, "\n\n"); j >= 0 {
			rest = rest[:j]
		}
		if !strings.Contains(rest, "`"+k+"`") {
			t.Errorf("docs/security.md does not list `%s` under %q", k, h)
		}
	}
}
