package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

const testKey = "sk-ant-test-0123456789abcdef"

func server(t *testing.T, cfg llmtest.Config) *llmtest.Server {
	t.Helper()
	s := llmtest.NewServer(cfg)
	t.Cleanup(s.Close)
	return s
}

func provider(t *testing.T, s *llmtest.Server, mod func(*Config)) *Provider {
	t.Helper()
	cfg := Config{BaseURL: s.AnthropicBaseURL(), APIKey: testKey}
	if mod != nil {
		mod(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ask(user string) *llm.Request {
	return &llm.Request{Model: "anthropic:claude-test", Messages: []llm.Message{{Role: llm.RoleUser, Content: user}}}
}

func fault(k llmtest.FaultKind) llmtest.Config {
	return llmtest.Config{Faults: llmtest.Faults{Sequence: []llmtest.FaultKind{k}}}
}

// sentBody is the part of a recorded request body the tests look at.
type sentBody struct {
	System []struct {
		Type         string          `json:"type"`
		Text         string          `json:"text"`
		CacheControl json.RawMessage `json:"cache_control"`
	} `json:"system"`
	Tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	ToolChoice struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tool_choice"`
}

func sent(t *testing.T, rec llmtest.Recorded) sentBody {
	t.Helper()
	var b sentBody
	if err := json.Unmarshal(rec.Body, &b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRequestShape(t *testing.T) {
	s := server(t, llmtest.Config{Rules: []llmtest.Rule{{Reply: "the answer"}}})
	p := provider(t, s, nil)
	req := &llm.Request{
		Model:  "anthropic:claude-test",
		System: "You are terse.",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "first"},
			{Role: llm.RoleAssistant, Content: "reply"},
			{Role: llm.RoleUser, Content: "second"},
		},
		Temperature: llm.Float(0.3),
		MaxTokens:   321,
	}
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	rec := s.Requests()[0]
	if rec.Path != "/v1/messages" || rec.Model != "claude-test" || rec.System != "You are terse." ||
		len(rec.Messages) != 3 || rec.Messages[1].Role != "assistant" || rec.Messages[2].Text != "second" ||
		rec.MaxTokens != 321 || rec.Stream || rec.Header.Get("anthropic-version") == "" {
		t.Errorf("request = %+v", rec)
	}
	// The API version the SDK speaks has no temperature.
	if rec.Temperature != nil {
		t.Errorf("temperature sent: %v", *rec.Temperature)
	}
	if b := sent(t, rec); len(b.System) != 1 || b.System[0].CacheControl != nil {
		t.Errorf("system blocks = %+v", b.System)
	}
	if resp.Text != "the answer" || resp.FinishReason != llm.FinishStop || resp.Model != req.Model ||
		!strings.HasPrefix(resp.RequestID, "req_llmtest_") || resp.Latency <= 0 || resp.Calls != 1 || resp.JSON != nil {
		t.Errorf("response = %+v", resp)
	}
	if resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens != 3 {
		t.Errorf("usage = %+v", resp.Usage)
	}

	// Defaults: max_tokens 4096, a bare model name.
	if _, err := p.Complete(context.Background(), &llm.Request{Model: "claude-bare", Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}); err != nil {
		t.Fatal(err)
	}
	rec = s.Requests()[1]
	if rec.Model != "claude-bare" || rec.MaxTokens != DefaultMaxTokens || rec.System != "" {
		t.Errorf("default request = %+v", rec)
	}
}

func TestBadRequests(t *testing.T) {
	s := server(t, llmtest.Config{})
	p := provider(t, s, nil)
	for _, req := range []*llm.Request{
		{Model: "anthropic:x", System: "only a system prompt"},
		{Model: "anthropic:x", Messages: []llm.Message{{Role: "system", Content: "x"}}},
		{Model: "anthropic:x", Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, Schema: &llm.Schema{Name: "s", JSON: json.RawMessage(`{bad`)}},
	} {
		if _, err := p.Complete(context.Background(), req); !errors.Is(err, llm.ErrBadRequest) {
			t.Errorf("%+v: err = %v", req, err)
		}
	}
	if len(s.Requests()) != 0 {
		t.Errorf("bad requests reached the server")
	}
}

func TestAuthHeader(t *testing.T) {
	s := server(t, llmtest.Config{APIKey: testKey})
	if _, err := provider(t, s, nil).Complete(context.Background(), ask("hi")); err != nil {
		t.Fatal(err)
	}
	h := s.Requests()[0].Header
	if h.Get("X-Api-Key") != testKey || h.Get("Authorization") != "" {
		t.Errorf("x-api-key %q, authorization %q", h.Get("X-Api-Key"), h.Get("Authorization"))
	}

	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-the-environment")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	open := server(t, llmtest.Config{})
	p := provider(t, open, func(c *Config) { c.APIKey = "" })
	if _, err := p.Complete(context.Background(), ask("hi")); err != nil {
		t.Fatal(err)
	}
	h = open.Requests()[0].Header
	if h.Get("X-Api-Key") != "" || h.Get("Authorization") != "" {
		t.Errorf("a key from the environment was sent")
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	const wrong = "sk-ant-wrong-key-abcdef123456"
	s := server(t, llmtest.Config{APIKey: testKey})
	_, err := provider(t, s, func(c *Config) { c.APIKey = wrong }).Complete(context.Background(), ask("hi"))
	var e *llm.Error
	if !errors.As(err, &e) || !errors.Is(err, llm.ErrAuth) || e.Status != 401 {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(e.Message, "rejected") || !strings.Contains(e.Message, "ANTHROPIC_API_KEY") {
		t.Errorf("message = %q", e.Message)
	}
	checkNoKey(t, err, wrong)

	good := provider(t, s, nil)
	for _, f := range []llmtest.FaultKind{llmtest.Fault401, llmtest.Fault429, llmtest.Fault500, llmtest.Fault503,
		llmtest.FaultInvalidJSON, llmtest.FaultTruncate} {
		for _, streaming := range []bool{false, true} {
			s.SetConfig(llmtest.Config{APIKey: testKey, Faults: llmtest.Faults{Sequence: []llmtest.FaultKind{f}}})
			req := ask("hi")
			if streaming {
				req.OnDelta = func(string) {}
			}
			_, err := good.Complete(context.Background(), req)
			if err == nil {
				t.Fatalf("%s: no error", f)
			}
			checkNoKey(t, err, testKey)
		}
	}
}

func checkNoKey(t *testing.T, err error, key string) {
	t.Helper()
	for _, s := range []string{err.Error(), fmt.Sprintf("%v", err), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
		if strings.Contains(s, key) {
			t.Errorf("error shows the key: %s", s)
		}
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		kind error
		want string
	}{
		{"default URL", Config{APIKey: testKey, RequireKey: true}, nil, ""},
		{"missing key", Config{RequireKey: true}, llm.ErrMissingKey, "set ANTHROPIC_API_KEY"},
		{"no scheme", Config{BaseURL: "api.anthropic.com"}, llm.ErrConfig, "ANTHROPIC_BASE_URL"},
		{"ftp", Config{BaseURL: "ftp://example.com"}, llm.ErrConfig, "must start with http:// or https://"},
		{"no host", Config{BaseURL: "https://"}, llm.ErrConfig, "has no host"},
		{"does not parse", Config{BaseURL: "http://[::1"}, llm.ErrConfig, "does not parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.cfg)
			if tt.kind == nil {
				if err != nil || p == nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			var e *llm.Error
			if !errors.As(err, &e) || !errors.Is(err, tt.kind) || !strings.Contains(e.Message, tt.want) || e.Provider != "anthropic" {
				t.Fatalf("err = %v, want %v containing %q", err, tt.kind, tt.want)
			}
		})
	}
}

func TestCustomBaseURL(t *testing.T) {
	a := server(t, llmtest.Config{Rules: []llmtest.Rule{{Reply: "from a"}}})
	b := server(t, llmtest.Config{Rules: []llmtest.Rule{{Reply: "from b"}}})
	resp, err := provider(t, b, nil).Complete(context.Background(), ask("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "from b" || len(a.Requests()) != 0 || len(b.Requests()) != 1 {
		t.Errorf("text %q, a got %d, b got %d", resp.Text, len(a.Requests()), len(b.Requests()))
	}
}

func TestSystemBlocks(t *testing.T) {
	tests := []struct {
		name     string
		system   string
		shared   int
		want     []string
		wantMark []bool
	}{
		{"no prefix", "rules and persona", 0, []string{"rules and persona"}, []bool{false}},
		{"split", "rules|persona", 6, []string{"rules|", "persona"}, []bool{true, false}},
		{"all shared", "rules", 5, []string{"rules"}, []bool{true}},
		{"beyond the end", "rules", 99, []string{"rules"}, []bool{true}},
		{"inside a rune", "règles", 2, []string{"r", "ègles"}, []bool{true, false}},
	}
	s := server(t, llmtest.Config{})
	p := provider(t, s, nil)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := ask("hi")
			req.System, req.SharedPrefix = tt.system, tt.shared
			if _, err := p.Complete(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			rec := s.Requests()[i]
			b := sent(t, rec)
			if len(b.System) != len(tt.want) {
				t.Fatalf("blocks = %+v", b.System)
			}
			marks := 0
			for j, blk := range b.System {
				marked := string(blk.CacheControl) == `{"type":"ephemeral"}`
				if blk.Text != tt.want[j] || marked != tt.wantMark[j] {
					t.Errorf("block %d = %q %s", j, blk.Text, blk.CacheControl)
				}
				if marked {
					marks++
				}
			}
			if rec.System != tt.system {
				t.Errorf("the blocks add up to %q", rec.System)
			}
			if rec.CacheControlBlocks != marks {
				t.Errorf("server counted %d marked blocks", rec.CacheControlBlocks)
			}
		})
	}
}

func TestCachedTokens(t *testing.T) {
	s := server(t, llmtest.Config{PrefixCache: true})
	p := provider(t, s, nil)
	shared := strings.Repeat("The shared review rules and the material under review. ", 160) // ~8.8 KB
	var usages []llm.Usage
	for _, persona := range []string{"You are the security reviewer.", "You are the performance reviewer."} {
		req := ask("review")
		req.System = shared + persona
		req.SharedPrefix = len(shared)
		resp, err := p.Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		usages = append(usages, resp.Usage)
	}
	first, second := usages[0], usages[1]
	if first.CacheWriteTokens < 1024 || first.CachedInputTokens != 0 {
		t.Errorf("first call: %+v", first)
	}
	if second.CachedInputTokens != first.CacheWriteTokens || second.CacheWriteTokens != 0 {
		t.Errorf("second call: %+v (first %+v)", second, first)
	}
	// InputTokens counts every input token, cached or not.
	if second.InputTokens <= second.CachedInputTokens || first.InputTokens <= first.CacheWriteTokens {
		t.Errorf("input tokens exclude the cache: %+v %+v", first, second)
	}
}

const objSchema = `{"type":"object","properties":{"verdict":{"type":"string","enum":["pass","fail"]},"score":{"type":"integer","minimum":1}},"required":["verdict","score"],"additionalProperties":false}`

func TestStructuredOutput(t *testing.T) {
	tests := []struct {
		name, schema string
		rule         llmtest.Rule
		streaming    bool
		wantTool     string
		wantSchema   string
		wantText     string
		wantJSON     string
		wantFinish   string
	}{
		{name: "object", schema: objSchema, wantTool: "verdict_v1", wantSchema: objSchema,
			wantText: `{"score":1,"verdict":"pass"}`, wantJSON: `{"score":1,"verdict":"pass"}`, wantFinish: llm.FinishTool},
		{name: "object, streamed", schema: objSchema, streaming: true, wantTool: "verdict_v1", wantSchema: objSchema,
			wantText: `{"score":1,"verdict":"pass"}`, wantJSON: `{"score":1,"verdict":"pass"}`, wantFinish: llm.FinishTool},
		{name: "array, wrapped", schema: `{"type":"array","items":{"type":"string"},"minItems":2}`, wantTool: "verdict_v1",
			wantSchema: `{"properties":{"value":{"items":{"type":"string"},"minItems":2,"type":"array"}},"required":["value"],"type":"object"}`,
			wantText:   `["example","example 1"]`, wantJSON: `["example","example 1"]`, wantFinish: llm.FinishTool},
		{name: "model answered in text", schema: objSchema, rule: llmtest.Rule{Reply: "Here: ```json\n{\"verdict\":\"fail\",\"score\":2}\n```"},
			wantTool: "verdict_v1", wantSchema: objSchema, wantText: "Here: ```json\n{\"verdict\":\"fail\",\"score\":2}\n```",
			wantJSON: `{"verdict":"fail","score":2}`, wantFinish: llm.FinishStop},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := server(t, llmtest.Config{Rules: []llmtest.Rule{tt.rule}})
			req := ask("judge")
			req.Schema = &llm.Schema{Name: "verdict v1", JSON: json.RawMessage(tt.schema)}
			var deltas []string
			if tt.streaming {
				req.OnDelta = func(d string) { deltas = append(deltas, d) }
			}
			resp, err := provider(t, s, nil).Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			rec := s.Requests()[0]
			b := sent(t, rec)
			if rec.SchemaName != tt.wantTool || b.ToolChoice.Type != "tool" || b.ToolChoice.Name != tt.wantTool ||
				len(b.Tools) != 1 || string(b.Tools[0].InputSchema) != tt.wantSchema {
				t.Errorf("tool %q choice %+v schema %s", rec.SchemaName, b.ToolChoice, rec.Schema)
			}
			if resp.Text != tt.wantText || string(resp.JSON) != tt.wantJSON || resp.FinishReason != tt.wantFinish {
				t.Errorf("text %q json %s finish %q", resp.Text, resp.JSON, resp.FinishReason)
			}
			if tt.streaming && (len(deltas) < 2 || strings.Join(deltas, "") != tt.wantText || !rec.Stream) {
				t.Errorf("deltas %q", deltas)
			}
		})
	}
}

func TestStreamingAndUsage(t *testing.T) {
	answer := "Streaming answers arrive in pieces, and the pieces add up."
	s := server(t, llmtest.Config{Rules: []llmtest.Rule{{Reply: answer}}})
	var pieces []string
	req := ask("hi")
	req.OnDelta = func(d string) { pieces = append(pieces, d) }
	resp, err := provider(t, s, nil).Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Requests()[0].Stream || len(pieces) < 2 || strings.Join(pieces, "") != answer || resp.Text != answer {
		t.Errorf("pieces %q, text %q", pieces, resp.Text)
	}
	if resp.Usage.OutputTokens != (len(answer)+3)/4 || resp.Usage.InputTokens == 0 || resp.FinishReason != llm.FinishStop ||
		!strings.HasPrefix(resp.RequestID, "req_llmtest_") {
		t.Errorf("response = %+v", resp)
	}
	// A large output limit streams even without OnDelta.
	req = ask("hi")
	req.MaxTokens = 64000
	if _, err := provider(t, s, nil).Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if !s.Requests()[1].Stream {
		t.Errorf("large max_tokens did not stream")
	}
}

func TestFinishAndEmpty(t *testing.T) {
	s := server(t, llmtest.Config{Rules: []llmtest.Rule{
		{User: "long", Reply: strings.Repeat("many words ", 50)},
		{User: "blank", Reply: "   "},
	}})
	p := provider(t, s, nil)
	req := ask("long")
	req.MaxTokens = 5
	resp, err := p.Complete(context.Background(), req)
	if err != nil || resp.FinishReason != llm.FinishLength {
		t.Errorf("resp %+v err %v", resp, err)
	}
	if _, err := p.Complete(context.Background(), ask("blank")); !errors.Is(err, llm.ErrBadResponse) {
		t.Errorf("blank answer: %v", err)
	}
}

func TestErrorMapping(t *testing.T) {
	tests := []struct {
		name       string
		cfg        llmtest.Config
		model      string
		client     *http.Client
		ctxTimeout time.Duration
		kind       error // nil: the caller's context error
		ctxErr     error
		status     int
		retryAfter time.Duration
		msg        string
		requestID  bool
	}{
		{name: "401", cfg: fault(llmtest.Fault401), kind: llm.ErrAuth, status: 401, msg: "ANTHROPIC_API_KEY", requestID: true},
		{name: "404 unknown model", cfg: llmtest.Config{Models: []string{"claude-known"}}, model: "anthropic:claude-nope",
			kind: llm.ErrUnknownModel, status: 404, msg: "model: claude-nope", requestID: true},
		{name: "429", cfg: llmtest.Config{Faults: llmtest.Faults{Sequence: []llmtest.FaultKind{llmtest.Fault429}, RetryAfter: 7}},
			kind: llm.ErrRateLimited, status: 429, retryAfter: 7 * time.Second, msg: "rate limit", requestID: true},
		{name: "quota", cfg: llmtest.Config{Quota: llmtest.Quota{Requests: 1, Window: time.Hour}},
			kind: llm.ErrRateLimited, status: 429, retryAfter: time.Hour, requestID: true},
		{name: "500", cfg: fault(llmtest.Fault500), kind: llm.ErrUnavailable, status: 500, msg: "Internal server error", requestID: true},
		{name: "503", cfg: fault(llmtest.Fault503), kind: llm.ErrUnavailable, status: 503, msg: "Overloaded", requestID: true},
		{name: "invalid JSON", cfg: fault(llmtest.FaultInvalidJSON), kind: llm.ErrBadResponse, msg: "could not read the answer"},
		{name: "truncated", cfg: fault(llmtest.FaultTruncate), kind: llm.ErrBadResponse},
		{name: "hang, caller deadline", cfg: fault(llmtest.FaultHang), ctxTimeout: 100 * time.Millisecond, ctxErr: context.DeadlineExceeded},
		{name: "hang, client timeout", cfg: fault(llmtest.FaultHang), client: &http.Client{Timeout: 100 * time.Millisecond},
			kind: llm.ErrTimeout},
	}
	for _, tt := range tests {
		for _, streaming := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.name, streaming), func(t *testing.T) {
				s := server(t, tt.cfg)
				p := provider(t, s, func(c *Config) { c.HTTPClient = tt.client; c.Name = "claude-test-provider" })
				req := ask("hi")
				if tt.model != "" {
					req.Model = tt.model
				}
				if streaming {
					req.OnDelta = func(string) {}
				}
				ctx := context.Background()
				if tt.ctxTimeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.ctxTimeout)
					defer cancel()
				}
				if tt.name == "quota" {
					if _, err := p.Complete(ctx, req); err != nil {
						t.Fatal(err)
					}
				}
				start := time.Now()
				_, err := p.Complete(ctx, req)
				if time.Since(start) > 5*time.Second {
					t.Errorf("took %v", time.Since(start))
				}
				if tt.kind == nil {
					var e *llm.Error
					if !errors.Is(err, tt.ctxErr) || errors.As(err, &e) {
						t.Fatalf("err = %#v, want the context's %v", err, tt.ctxErr)
					}
					return
				}
				var e *llm.Error
				if !errors.As(err, &e) || !errors.Is(err, tt.kind) {
					t.Fatalf("err = %v, want %v", err, tt.kind)
				}
				if e.Provider != "claude-test-provider" || e.Model != req.Model || e.Status != tt.status ||
					!strings.Contains(e.Message, tt.msg) || (tt.requestID && e.RequestID == "") {
					t.Errorf("error = %+v", e)
				}
				if tt.retryAfter > 0 && (e.RetryAfter > tt.retryAfter || e.RetryAfter < tt.retryAfter-time.Second) {
					t.Errorf("RetryAfter = %v, want about %v", e.RetryAfter, tt.retryAfter)
				}
			})
		}
	}
}

func TestConnectionRefused(t *testing.T) {
	s := llmtest.NewServer(llmtest.Config{})
	p := provider(t, s, nil)
	s.Close()
	_, err := p.Complete(context.Background(), ask("hi"))
	if !errors.Is(err, llm.ErrUnavailable) || !llm.Retryable(err) {
		t.Errorf("err = %v", err)
	}
}

func TestCallerCancel(t *testing.T) {
	s := server(t, llmtest.Config{Latency: time.Minute})
	p := provider(t, s, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := p.Complete(ctx, ask("hi"))
	var e *llm.Error
	if !errors.Is(err, context.Canceled) || errors.As(err, &e) {
		t.Errorf("err = %v", err)
	}
}

func TestSchemaViolationPassesThrough(t *testing.T) {
	s := server(t, fault(llmtest.FaultSchemaViolation))
	req := ask("x")
	req.Schema = &llm.Schema{Name: "v", JSON: json.RawMessage(objSchema)}
	resp, err := provider(t, s, nil).Complete(context.Background(), req)
	if err != nil || string(resp.JSON) != `{}` {
		t.Errorf("resp %+v err %v", resp, err)
	}
}

// BenchmarkComplete pushes calls through the provider and the fake server at
// zero latency, 32 at a time.
func BenchmarkComplete(b *testing.B) {
	s := llmtest.NewServer(llmtest.Config{RecordLimit: 100, PrefixCache: true})
	defer s.Close()
	p, err := New(Config{BaseURL: s.AnthropicBaseURL(), APIKey: testKey})
	if err != nil {
		b.Fatal(err)
	}
	req := ask("hi")
	req.System = strings.Repeat("shared material ", 500) + "persona"
	req.SharedPrefix = len(req.System) - len("persona")
	b.SetParallelism(32)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := p.Complete(context.Background(), req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// trickyText is a long text with everything a JSON encoder must escape or
// replace: quotes, backslashes, control bytes, HTML, line separators,
// non-ASCII text and a byte that is not UTF-8.
var trickyText = strings.Repeat("a \"quoted\" C:\\path\ttab\r\n<b>&amp;</b> \u2028\u2029 ünï 🎉 \x01\x1f \xff end\n", 200)

// Long texts are encoded apart from the SDK's encoder (llm.HeldTexts): the
// body that goes out, streamed or not, decodes to the same value as the
// body the SDK makes of the request by itself, cache marks included.
func TestLongTextsGoOutWhole(t *testing.T) {
	for _, streamed := range []bool{false, true} {
		t.Run(fmt.Sprintf("streamed=%v", streamed), func(t *testing.T) {
			s := server(t, llmtest.Config{Rules: []llmtest.Rule{{Reply: "the answer"}}})
			p := provider(t, s, nil)
			system := "system " + trickyText + "the rest " + trickyText
			req := &llm.Request{
				Model:        "anthropic:claude-test",
				System:       system,
				SharedPrefix: len(system) / 2,
				Messages: []llm.Message{
					{Role: llm.RoleUser, Content: "user " + trickyText},
					{Role: llm.RoleAssistant, Content: "assistant " + trickyText, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"path":"a.go"}`)}}},
					{Role: llm.RoleTool, ToolCallID: "c1", Content: "tool " + trickyText},
					{Role: llm.RoleUser, Content: "short"},
				},
			}
			if streamed {
				req.OnDelta = func(string) {}
			}
			if _, err := p.complete(context.Background(), req, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Complete(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			rs := s.Requests()
			if len(rs) != 2 {
				t.Fatalf("%d requests, want 2", len(rs))
			}
			var plain, held any
			if err := json.Unmarshal(rs[0].Body, &plain); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(rs[1].Body, &held); err != nil {
				t.Fatalf("the body with the long texts put back is not JSON: %v", err)
			}
			if diff := cmp.Diff(plain, held); diff != "" {
				t.Errorf("the body with the long texts put back differs from the SDK's own (-SDK +held):\n%s", diff)
			}
			if strings.Contains(string(rs[1].Body), "sotheld") {
				t.Error("a stand-in went out in the body")
			}
		})
	}
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A Provider given no BaseURL sends to DefaultBaseURL, the root the SDK
// chooses, which llm/stack connects to ahead of a run's first call.
func TestDefaultBaseURLIsTheSDKs(t *testing.T) {
	var sent string
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = r.URL.String()
		return nil, errors.New("not sent")
	})}
	p, err := New(Config{APIKey: "sk-test-0123456789", HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = p.Complete(t.Context(), &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if !strings.HasPrefix(sent, DefaultBaseURL+"/") {
		t.Fatalf("the request went to %q; DefaultBaseURL is %q", sent, DefaultBaseURL)
	}
}
