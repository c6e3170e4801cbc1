package llmtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"
)

// FaultKind names a failure the server can inject.
type FaultKind string

// Fault kinds.
const (
	// FaultNone injects nothing; use it as a placeholder in Faults.Sequence.
	FaultNone FaultKind = "none"
	// Fault429 answers 429 with a Retry-After header.
	Fault429 FaultKind = "429"
	// Fault500 answers 500.
	Fault500 FaultKind = "500"
	// Fault503 answers 503.
	Fault503 FaultKind = "503"
	// Fault401 answers 401 with the provider's authentication error.
	Fault401 FaultKind = "401"
	// Fault400 answers 400 with the provider's invalid-request error, as
	// an endpoint does for a request it cannot serve (tools offered to a
	// model that has no tool calling, say).
	Fault400 FaultKind = "400"
	// FaultHang never answers: it waits until the client goes away, the server
	// closes, or ten minutes pass (then it answers 504).
	FaultHang FaultKind = "hang"
	// FaultTruncate sends 200 and half of the body, then drops the connection.
	FaultTruncate FaultKind = "truncate"
	// FaultInvalidJSON sends 200 with a body that is not JSON (for a stream,
	// an event whose data is not JSON).
	FaultInvalidJSON FaultKind = "invalid_json"
	// FaultSchemaViolation sends a well-formed answer whose structured part
	// does not satisfy the requested schema.
	FaultSchemaViolation FaultKind = "schema_violation"
)

// knownFaults is every FaultKind the server understands ("" counts as none).
var knownFaults = map[FaultKind]bool{
	"": true, Fault429: true, Fault500: true, Fault503: true, Fault401: true, Fault400: true,
	FaultHang: true, FaultTruncate: true, FaultInvalidJSON: true, FaultSchemaViolation: true,
}

// Config is everything the server does. The zero value answers every request
// at once: structured requests with an instance of their schema, others with "ok".
//
// # Tool calls
//
// A request may offer tools (OpenAI's function tools; Anthropic's tools
// besides the one a structured answer is given through, see
// answerToolMarker). The server never calls one of its own accord: a rule
// with tool_calls answers with calls to tools instead of text, in the
// provider's wire format (OpenAI: tool_calls and finish_reason
// "tool_calls"; Anthropic: tool_use blocks and stop_reason "tool_use"),
// with the rule's reply, if any, as the text before them. Such a rule
// matches only a request that offers tools and whose last message is not
// a tool result, so a script of two rules plays a tool loop of two rounds:
//
//	rules:
//	  - tool_calls: [{name: read_file, arguments: {path: README.md}}]
//	  - json: {verdict: pass}
//
// Round 1 (no tool results yet) gets the call to read_file; round 2, which
// carries its result, falls through to the structured answer. A rule's
// round, when set, matches only that round of a loop (round N carries the
// results of N-1 assistant turns of tool calls), for scripts of more
// rounds. The tools a request offered and the tool results it carried are
// recorded (Recorded.Tools, Recorded.ToolResults, Message.ToolCalls).
type Config struct {
	// Latency delays every answer, counted from the request's arrival;
	// LatencyJitter adds a random 0..jitter.
	Latency       time.Duration `yaml:"latency"`
	LatencyJitter time.Duration `yaml:"latency_jitter"`
	// FirstToken is when a streamed answer starts, counted from the
	// request's arrival like Latency: the events up to the first piece of
	// the answer are sent then, the rest when Latency is over. 0 means a
	// tenth of the latency, about what providers show for a long prompt
	// and an answer of a few hundred tokens; it is never later than the
	// latency. An answer that does not stream starts when it is sent.
	FirstToken time.Duration `yaml:"first_token"`
	// Seed seeds the random numbers behind jitter and fault rates.
	Seed uint64 `yaml:"seed"`
	// Rules script answers; the first rule that matches a request wins.
	Rules []Rule `yaml:"rules"`
	// Faults injects failures. They are drawn before the rules are consulted,
	// so a request that fails does not use up a rule's Times.
	Faults Faults `yaml:"faults"`
	// Quota limits the request rate.
	Quota Quota `yaml:"quota"`
	// Models lists the known models; when it is not empty any other model is
	// answered with 404.
	Models []string `yaml:"models"`
	// APIKey, when set, must be presented by every request (OpenAI:
	// "Authorization: Bearer K"; Anthropic: "x-api-key: K", or the bearer
	// token that the official Go SDK's option.WithAPIKey sends).
	APIKey string `yaml:"api_key"`
	// PrefixCache simulates the providers' prompt caches. As at the
	// providers, a request writes its prompt's prefixes to the cache when
	// its answer starts (see FirstToken), and reads a prefix only when it
	// arrives after that: requests sent together all miss.
	PrefixCache bool `yaml:"prefix_cache"`
	// CacheWarmup is how much longer after its writer's answer starts a
	// cached prefix becomes readable; 0 means as the answer starts.
	CacheWarmup time.Duration `yaml:"cache_warmup"`
	// RecordLimit keeps only the most recent requests for Requests; 0 keeps
	// all of them (long-running servers should set it).
	RecordLimit int `yaml:"record_limit"`
	// ExtraKey adds a key no schema has ("model_note") to every object of every
	// structured answer, as models without enforced output do.
	ExtraKey bool `yaml:"extra_key"`
	// WrapJSON sends every structured answer inside prose and a fenced
	// ```json block, as chatty models do: OpenAI's as the message's text,
	// Anthropic's as a text block instead of the forced tool call.
	WrapJSON bool `yaml:"wrap_json"`
}

// Rule scripts the answer to the requests it matches. Empty conditions match
// everything.
type Rule struct {
	// Model matches the model name exactly; "" matches any.
	Model string `yaml:"model"`
	// System matches a substring of the system prompt.
	System string `yaml:"system"`
	// User matches a substring of the last user message.
	User string `yaml:"user"`
	// Times limits the rule to its first N matches; 0 is unlimited.
	Times int `yaml:"times"`
	// Round, when set, matches only requests in that round of a tool loop:
	// round 1 has no assistant turn with tool calls, round N has N-1 (see
	// Config, Tool calls).
	Round int `yaml:"round"`

	// Reply is the answer text (with ToolCalls, the text before the calls).
	Reply string `yaml:"reply"`
	// ToolCalls, when set, are the answer: calls to the request's tools. The
	// rule then matches only requests that offer tools and, without Round,
	// whose last message is not a tool result (see Config, Tool calls).
	ToolCalls []ToolCall `yaml:"tool_calls"`
	// JSON is the structured answer (any value that marshals to JSON).
	JSON any `yaml:"json"`
	// Fault makes the matched request fail.
	Fault FaultKind `yaml:"fault"`
	// Latency replaces the configured latency and jitter for matched requests.
	Latency time.Duration `yaml:"latency"`

	// Respond, when set, computes the answer instead of Reply, JSON and Fault
	// (Latency still applies when the Reply sets none). It receives a copy of
	// the request's record and may be called concurrently.
	Respond func(*Recorded) Reply `yaml:"-"`
}

// Reply is a computed answer. A Reply with neither Text, JSON nor ToolCalls
// gets the default answer. ToolCalls, when set, are the answer (Text the
// text before them); a reply with tool calls to a request that offers no
// tools is answered with a 500 that says so.
type Reply struct {
	Text      string
	JSON      any // a Go value, or json.RawMessage
	ToolCalls []ToolCall
	Fault     FaultKind
	Latency   time.Duration
}

// ToolCall is a scripted call to a tool. The server gives it an id
// (call_llmtest_N_I for OpenAI, toolu_llmtest_N_I for Anthropic: request
// N, call I). The tool need not be one the request offered, as a model
// may call a tool that does not exist.
type ToolCall struct {
	// Name is the tool's name (letters, digits, _ and -).
	Name string `yaml:"name"`
	// Arguments is the tool's input: any value that marshals to a JSON
	// object (a mapping in YAML, json.RawMessage in Go); nil is {}.
	Arguments any `yaml:"arguments"`
}

// Faults injects failures into requests that passed the authentication, model
// and quota checks.
type Faults struct {
	// Rate is the probability (0..1) that a request fails with one of Kinds.
	Rate float64 `yaml:"rate"`
	// Kinds are picked uniformly when Rate strikes; empty means 500.
	Kinds []FaultKind `yaml:"kinds"`
	// Sequence is applied, in order, to the first len(Sequence) requests;
	// "none" lets a request through.
	Sequence []FaultKind `yaml:"sequence"`
	// RetryAfter is the Retry-After of an injected 429, in seconds (default 1).
	RetryAfter int `yaml:"retry_after"`
	// RetryAfterMs, when set, is sent with an injected 429 as the
	// retry-after-ms header (which OpenAI's API sends too, and clients
	// prefer), so that tests can ask for waits shorter than a second.
	RetryAfterMs int `yaml:"retry_after_ms"`
}

// Quota allows Requests requests per Window; over it the server answers 429
// with Retry-After set to the seconds left in the window (rounded up) and
// retry-after-ms to the milliseconds left.
type Quota struct {
	Requests int           `yaml:"requests"`
	Window   time.Duration `yaml:"window"`
}

// problem is a configuration mistake at a YAML path such as "faults.kinds[1]".
type problem struct {
	path, msg string
}

func (c *Config) problems() []problem {
	var ps []problem
	add := func(path, format string, args ...any) {
		ps = append(ps, problem{path, fmt.Sprintf(format, args...)})
	}
	if c.Latency < 0 {
		add("latency", "must not be negative")
	}
	if c.LatencyJitter < 0 {
		add("latency_jitter", "must not be negative")
	}
	if c.FirstToken < 0 {
		add("first_token", "must not be negative")
	}
	if c.CacheWarmup < 0 {
		add("cache_warmup", "must not be negative")
	}
	for i, r := range c.Rules {
		if r.Times < 0 {
			add(fmt.Sprintf("rules[%d].times", i), "must not be negative")
		}
		if !knownFaults[normalizeFault(r.Fault)] {
			add(fmt.Sprintf("rules[%d].fault", i), "unknown fault %q (want one of %s)", r.Fault, faultList())
		}
		if r.Latency < 0 {
			add(fmt.Sprintf("rules[%d].latency", i), "must not be negative")
		}
		if r.JSON != nil {
			if _, err := marshalJSON(r.JSON); err != nil {
				add(fmt.Sprintf("rules[%d].json", i), "cannot be written as JSON: %v", err)
			}
		}
		if r.Round < 0 {
			add(fmt.Sprintf("rules[%d].round", i), "must not be negative")
		}
		if len(r.ToolCalls) > 0 && r.JSON != nil {
			add(fmt.Sprintf("rules[%d].tool_calls", i), "a rule answers with tool_calls or with json, not both")
		}
		for j, tc := range r.ToolCalls {
			if !toolNameOK(tc.Name) {
				add(fmt.Sprintf("rules[%d].tool_calls[%d].name", i, j), "%q is not a tool name (1 to 64 letters, digits, _ and -)", tc.Name)
			}
			if _, err := toolArguments(tc.Arguments); err != nil {
				add(fmt.Sprintf("rules[%d].tool_calls[%d].arguments", i, j), "%v", err)
			}
		}
	}
	if c.Faults.Rate < 0 || c.Faults.Rate > 1 {
		add("faults.rate", "must be between 0 and 1, got %v", c.Faults.Rate)
	}
	for i, k := range c.Faults.Kinds {
		if !knownFaults[normalizeFault(k)] {
			add(fmt.Sprintf("faults.kinds[%d]", i), "unknown fault %q (want one of %s)", k, faultList())
		}
	}
	for i, k := range c.Faults.Sequence {
		if !knownFaults[normalizeFault(k)] {
			add(fmt.Sprintf("faults.sequence[%d]", i), "unknown fault %q (want one of %s)", k, faultList())
		}
	}
	if c.Faults.RetryAfter < 0 {
		add("faults.retry_after", "must not be negative")
	}
	if c.Faults.RetryAfterMs < 0 {
		add("faults.retry_after_ms", "must not be negative")
	}
	if c.RecordLimit < 0 {
		add("record_limit", "must not be negative")
	}
	if c.Quota.Requests < 0 {
		add("quota.requests", "must not be negative")
	}
	if c.Quota.Requests > 0 && c.Quota.Window <= 0 {
		add("quota.window", "must be a positive duration when quota.requests is set")
	}
	return ps
}

func faultList() string {
	return "429, 500, 503, 401, hang, truncate, invalid_json, schema_violation, none"
}

// Validate reports the first mistake in c, naming the field.
func (c Config) Validate() error {
	if ps := c.problems(); len(ps) > 0 {
		return fmt.Errorf("%s: %s", ps[0].path, ps[0].msg)
	}
	return nil
}

// LoadConfig reads a YAML configuration file. Its errors name the file, line
// and column of the mistake.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	return parseConfig(path, data)
}

func parseConfig(path string, data []byte) (Config, error) {
	var cfg Config
	if err := yaml.UnmarshalWithOptions(data, &cfg, yaml.DisallowUnknownField()); err != nil {
		var ye yaml.Error
		if errors.As(err, &ye) && ye.GetToken() != nil {
			pos := ye.GetToken().Position
			msg := ye.GetMessage()
			if strings.Contains(msg, "time.Duration") {
				msg += ` (write a duration such as "300ms" or "2s")`
			}
			return Config{}, fmt.Errorf("%s:%d:%d: %s", path, pos.Line, pos.Column, msg)
		}
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	ps := cfg.problems()
	if len(ps) == 0 {
		return cfg, nil
	}
	p := ps[0]
	line, col := locate(data, p.path)
	if line > 0 {
		return Config{}, fmt.Errorf("%s:%d:%d: %s: %s", path, line, col, p.path, p.msg)
	}
	return Config{}, fmt.Errorf("%s: %s: %s", path, p.path, p.msg)
}

// locate finds the line and column of the node at a dotted path, or of its
// nearest parent that is written in the file; 0, 0 when there is none.
func locate(data []byte, path string) (int, int) {
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return 0, 0
	}
	for path != "" {
		yp, err := yaml.PathString("$." + path)
		if err == nil {
			node, err := yp.FilterFile(file)
			if err == nil && node != nil && node.GetToken() != nil {
				pos := node.GetToken().Position
				return pos.Line, pos.Column
			}
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0, 0
}

// marshalJSON writes a reply value as JSON. json.RawMessage and []byte that
// hold JSON are used as they are; maps decoded from YAML with non-string keys
// are converted.
func marshalJSON(v any) ([]byte, error) {
	switch x := v.(type) {
	case json.RawMessage:
		if !json.Valid(x) {
			return nil, errors.New("json.RawMessage is not valid JSON")
		}
		return x, nil
	case []byte:
		if json.Valid(x) {
			return x, nil
		}
	}
	b, err := json.Marshal(v)
	if err == nil {
		return b, nil
	}
	return json.Marshal(normalizeYAML(v))
}

// toolArguments writes a scripted call's arguments as a JSON object; nil
// is {}.
func toolArguments(v any) ([]byte, error) {
	if v == nil {
		return []byte(`{}`), nil
	}
	b, err := marshalJSON(v)
	if err != nil {
		return nil, fmt.Errorf("cannot be written as JSON: %v", err)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(b, &obj) != nil || obj == nil {
		return nil, fmt.Errorf("must be a JSON object, not %s", clip(b))
	}
	return b, nil
}

// toolNameOK reports whether name is a tool name both APIs accept.
func toolNameOK(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r == '-' || '0' <= r && r <= '9' || 'a' <= r|0x20 && r|0x20 <= 'z') {
			return false
		}
	}
	return true
}

// clip shortens a JSON text for a message.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// normalizeYAML returns a copy of v in which map[any]any (possible in YAML)
// became map[string]any.
func normalizeYAML(v any) any {
	switch x := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = normalizeYAML(e)
		}
		return m
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = normalizeYAML(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = normalizeYAML(e)
		}
		return s
	}
	return v
}

// normalizeFault lower-cases k and maps "none" to "": both mean no fault.
func normalizeFault(k FaultKind) FaultKind {
	k = FaultKind(strings.ToLower(strings.TrimSpace(string(k))))
	if k == FaultNone {
		return ""
	}
	return k
}
