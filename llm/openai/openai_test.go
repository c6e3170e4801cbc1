package openai

import (
	"bytes"
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

const testKey = "sk-test-openai-0123456789"

func server(t *testing.T, cfg llmtest.Config) *llmtest.Server {
	t.Helper()
	s := llmtest.NewServer(cfg)
	t.Cleanup(s.Close)
	return s
}

func provider(t *testing.T, s *llmtest.Server, mod func(*Config)) *Provider {
	t.Helper()
	cfg := Config{BaseURL: s.OpenAIBaseURL(), APIKey: testKey}
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
	return &llm.Request{Model: "openai:gpt-test", Messages: []llm.Message{{Role: llm.RoleUser, Content: user}}}
}

func TestRequestShape(t *testing.T) {
	s := server(t, llmtest.Config{Rules: []llmtest.Rule{{Reply: "the answer"}}})
	p := provider(t, s, nil)
	req := &llm.Request{
		Model:  "openai:gpt-test",
		System: "You are terse.",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "first"},
			{Role: llm.RoleAssistant, Content: "reply"},
			{Role: llm.RoleUser, Content: "second"},
		},
		Temperature: llm.Float(0.3),
		MaxTokens:   123,
	}
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	rec := s.Requests()[0]
	if rec.Path != "/v1/chat/completions" || rec.Model != "gpt-test" || rec.System != "You are terse." ||
		len(rec.Messages) != 3 || rec.Messages[1].Role != "assistant" || rec.Messages[2].Text != "second" ||
		rec.Temperature == nil || *rec.Temperature != 0.3 || rec.MaxTokens != 123 || !rec.Stream || !rec.IncludeUsage {
		t.Errorf("request = %+v", rec)
	}
	// A non-OpenAI host gets max_tokens, which compatible servers understand.
	if !strings.Contains(string(rec.Body), `"max_tokens":123`) {
		t.Errorf("body = %s", rec.Body)
	}
	if resp.Text != "the answer" || resp.FinishReason != llm.FinishStop || resp.Model != req.Model ||
		!strings.HasPrefix(resp.RequestID, "req_llmtest_") || resp.Latency <= 0 || resp.Calls != 1 || resp.JSON != nil {
		t.Errorf("response = %+v", resp)
	}
	if resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens != 3 || resp.Usage.CachedInputTokens != 0 {
		t.Errorf("usage = %+v", resp.Usage)
	}

	// A bare model name is accepted; no temperature or limit is sent when unset.
	if _, err := p.Complete(context.Background(), &llm.Request{Model: "gpt-bare", Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}); err != nil {
		t.Fatal(err)
	}
	rec = s.Requests()[1]
	if rec.Model != "gpt-bare" || rec.Temperature != nil || rec.MaxTokens != 0 || rec.System != "" {
		t.Errorf("bare request = %+v", rec)
	}
}

func TestMaxCompletionTokensForOpenAI(t *testing.T) {
	p, err := New(Config{APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	params, err := p.params(&llm.Request{Model: "openai:gpt-4.1", MaxTokens: 50, Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(params)
	if !strings.Contains(string(b), `"max_completion_tokens":50`) || strings.Contains(string(b), `"max_tokens"`) {
		t.Errorf("params = %s", b)
	}
}

func TestBadRequests(t *testing.T) {
	s := server(t, llmtest.Config{})
	p := provider(t, s, nil)
	for _, req := range []*llm.Request{
		{Model: "openai:x"},
		{Model: "openai:x", Messages: []llm.Message{{Role: "system", Content: "x"}}},
		{Model: "openai:x", Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, Schema: &llm.Schema{Name: "s", JSON: json.RawMessage(`{bad`)}},
	} {
		_, err := p.Complete(context.Background(), req)
		if !errors.Is(err, llm.ErrBadRequest) {
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
	if got := s.Requests()[0].Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}

	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment-999")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	open := server(t, llmtest.Config{})
	p := provider(t, open, func(c *Config) { c.APIKey = "" })
	if _, err := p.Complete(context.Background(), ask("hi")); err != nil {
		t.Fatal(err)
	}
	if got := open.Requests()[0].Header.Get("Authorization"); got != "" {
		t.Errorf("a key from the environment was sent: %q", got)
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	const wrong = "sk-wrong-key-abcdef123456"
	faults := []llmtest.FaultKind{llmtest.Fault401, llmtest.Fault429, llmtest.Fault500, llmtest.Fault503,
		llmtest.FaultInvalidJSON, llmtest.FaultTruncate}
	s := server(t, llmtest.Config{APIKey: testKey})
	p := provider(t, s, func(c *Config) { c.APIKey = wrong })
	_, err := p.Complete(context.Background(), ask("hi"))
	var e *llm.Error
	if !errors.As(err, &e) || !errors.Is(err, llm.ErrAuth) || e.Status != 401 {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(e.Message, "rejected") || !strings.Contains(e.Message, "OPENAI_API_KEY") {
		t.Errorf("message = %q", e.Message)
	}
	checkNoKey(t, err, wrong)

	good := provider(t, s, nil)
	for _, f := range faults {
		s.SetConfig(llmtest.Config{APIKey: testKey, Faults: llmtest.Faults{Sequence: []llmtest.FaultKind{f}}})
		_, err := good.Complete(context.Background(), ask("hi"))
		if err == nil {
			t.Fatalf("%s: no error", f)
		}
		checkNoKey(t, err, testKey)
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
		{"no key needed", Config{BaseURL: "http://localhost:11434/v1"}, nil, ""},
		{"missing key", Config{RequireKey: true}, llm.ErrMissingKey, "set OPENAI_API_KEY"},
		{"missing key, own variable", Config{Name: "openrouter", RequireKey: true, APIKeyEnv: "OPENROUTER_API_KEY"}, llm.ErrMissingKey, "set OPENROUTER_API_KEY"},
		{"no scheme", Config{BaseURL: "localhost:8080/v1"}, llm.ErrConfig, "OPENAI_BASE_URL"},
		{"ftp", Config{BaseURL: "ftp://example.com"}, llm.ErrConfig, "must start with http:// or https://"},
		{"no host", Config{BaseURL: "http:///v1"}, llm.ErrConfig, "has no host"},
		{"does not parse", Config{BaseURL: "http://[::1"}, llm.ErrConfig, "does not parse"},
		{"relative", Config{BaseURL: "/v1"}, llm.ErrConfig, "OPENAI_BASE_URL"},
		{"ollama variable", Config{Name: "ollama", BaseURL: "ollama", BaseURLEnv: "OLLAMA_HOST"}, llm.ErrConfig, "fix OLLAMA_HOST"},
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
			if !errors.As(err, &e) || !errors.Is(err, tt.kind) || !strings.Contains(e.Message, tt.want) {
				t.Fatalf("err = %v, want %v containing %q", err, tt.kind, tt.want)
			}
			wantName := tt.cfg.Name
			if wantName == "" {
				wantName = "openai"
			}
			if e.Provider != wantName {
				t.Errorf("provider = %q", e.Provider)
			}
		})
	}
	// Credentials in a base URL are not repeated.
	_, err := New(Config{BaseURL: "ftp://user:hunter2secret@example.com"})
	if err == nil || strings.Contains(err.Error(), "hunter2secret") {
		t.Errorf("err = %v", err)
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

const strictSchema = `{"type":"object","properties":{"verdict":{"type":"string","enum":["pass","fail"]},"score":{"type":"integer"}},"required":["verdict","score"],"additionalProperties":false}`

func TestStructuredOutput(t *testing.T) {
	loose := `{"type":"object","properties":{"verdict":{"type":"string"},"note":{"type":"string"}},"required":["verdict"]}`
	tests := []struct {
		name       string
		schema     string
		rule       llmtest.Rule
		wantStrict bool
		wantText   string
		wantJSON   string
	}{
		{"strict, generated", strictSchema, llmtest.Rule{}, true, `{"score":0,"verdict":"pass"}`, `{"score":0,"verdict":"pass"}`},
		{"not strict", loose, llmtest.Rule{}, false, `{"note":"example","verdict":"example"}`, `{"note":"example","verdict":"example"}`},
		{"fenced", loose, llmtest.Rule{Reply: "```json\n{\"verdict\":\"ok\"}\n```"}, false, "```json\n{\"verdict\":\"ok\"}\n```", `{"verdict":"ok"}`},
		{"not JSON", loose, llmtest.Rule{Reply: "I cannot do that"}, false, "I cannot do that", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := server(t, llmtest.Config{Rules: []llmtest.Rule{tt.rule}})
			req := ask("judge")
			req.Schema = &llm.Schema{Name: "verdict v1", JSON: json.RawMessage(tt.schema)}
			resp, err := provider(t, s, nil).Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			rec := s.Requests()[0]
			if rec.Strict != tt.wantStrict || rec.SchemaName != "verdict_v1" || string(rec.Schema) != tt.schema {
				t.Errorf("strict %v name %q schema %s", rec.Strict, rec.SchemaName, rec.Schema)
			}
			if resp.Text != tt.wantText || string(resp.JSON) != tt.wantJSON {
				t.Errorf("text %q json %s", resp.Text, resp.JSON)
			}
		})
	}
}

func TestStrictCompatible(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   bool
	}{
		{"strict object", strictSchema, true},
		{"missing additionalProperties", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, false},
		{"additionalProperties true", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":true}`, false},
		{"optional property", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a"],"additionalProperties":false}`, false},
		{"nested loose object", `{"type":"object","properties":{"a":{"type":"object","properties":{"x":{"type":"string"}}}},"required":["a"],"additionalProperties":false}`, false},
		{"nested strict in array", `{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string"}},"required":["x"],"additionalProperties":false}}},"required":["items"],"additionalProperties":false}`, true},
		{"loose in array", `{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string"}}}}},"required":["items"],"additionalProperties":false}`, false},
		{"loose in $defs", `{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"required":["a"],"additionalProperties":false,"$defs":{"a":{"type":"object","properties":{"x":{"type":"string"}}}}}`, false},
		{"strict $defs", `{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"required":["a"],"additionalProperties":false,"$defs":{"a":{"type":"object","properties":{"x":{"type":"string"}},"required":["x"],"additionalProperties":false}}}`, true},
		{"loose in anyOf", `{"type":"object","properties":{"a":{"anyOf":[{"type":"null"},{"type":"object","properties":{"x":{"type":"string"}}}]}},"required":["a"],"additionalProperties":false}`, false},
		{"empty object", `{"type":"object","properties":{},"additionalProperties":false}`, true},
		{"root array", `{"type":"array","items":{"type":"string"}}`, false},
		{"not JSON", `{`, false},
	}
	for _, tt := range tests {
		if got := StrictCompatible(json.RawMessage(tt.schema)); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
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
	if len(pieces) < 2 || strings.Join(pieces, "") != answer || resp.Text != answer {
		t.Errorf("pieces %q, text %q", pieces, resp.Text)
	}
	if resp.Usage.OutputTokens != (len(answer)+3)/4 || resp.Usage.InputTokens == 0 {
		t.Errorf("usage = %+v", resp.Usage)
	}
}

func TestCachedTokens(t *testing.T) {
	s := server(t, llmtest.Config{PrefixCache: true})
	p := provider(t, s, nil)
	shared := strings.Repeat("The shared review rules and the material under review. ", 160) // ~8.8 KB
	var usages []llm.Usage
	for _, persona := range []string{"security", "performance"} {
		req := ask("review as " + persona)
		req.System = shared
		req.SharedPrefix = len(shared)
		resp, err := p.Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		usages = append(usages, resp.Usage)
	}
	if usages[0].CachedInputTokens != 0 {
		t.Errorf("first call cached %d", usages[0].CachedInputTokens)
	}
	if c := usages[1].CachedInputTokens; c < 1024 || c > usages[1].InputTokens || c%128 != 0 {
		t.Errorf("second call: %+v", usages[1])
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
	_, err = p.Complete(context.Background(), ask("blank"))
	if !errors.Is(err, llm.ErrBadResponse) || !strings.Contains(err.Error(), "empty") {
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
		{name: "401", cfg: fault(llmtest.Fault401), kind: llm.ErrAuth, status: 401, msg: "OPENAI_API_KEY", requestID: true},
		{name: "404 unknown model", cfg: llmtest.Config{Models: []string{"gpt-known"}}, model: "openai:gpt-nope",
			kind: llm.ErrUnknownModel, status: 404, msg: "The model `gpt-nope` does not exist", requestID: true},
		{name: "429", cfg: llmtest.Config{Faults: llmtest.Faults{Sequence: []llmtest.FaultKind{llmtest.Fault429}, RetryAfter: 7}},
			kind: llm.ErrRateLimited, status: 429, retryAfter: 7 * time.Second, msg: "Rate limit", requestID: true},
		{name: "quota", cfg: llmtest.Config{Quota: llmtest.Quota{Requests: 1, Window: time.Hour}},
			kind: llm.ErrRateLimited, status: 429, retryAfter: time.Hour, requestID: true},
		{name: "500", cfg: fault(llmtest.Fault500), kind: llm.ErrUnavailable, status: 500, msg: "server had an error", requestID: true},
		{name: "503", cfg: fault(llmtest.Fault503), kind: llm.ErrUnavailable, status: 503, msg: "overloaded", requestID: true},
		{name: "invalid JSON", cfg: fault(llmtest.FaultInvalidJSON), kind: llm.ErrBadResponse, msg: "could not read the answer"},
		{name: "truncated", cfg: fault(llmtest.FaultTruncate), kind: llm.ErrBadResponse},
		{name: "hang, caller deadline", cfg: fault(llmtest.FaultHang), ctxTimeout: 100 * time.Millisecond, ctxErr: context.DeadlineExceeded},
		{name: "hang, client timeout", cfg: fault(llmtest.FaultHang), client: &http.Client{Timeout: 100 * time.Millisecond},
			kind: llm.ErrTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := server(t, tt.cfg)
			p := provider(t, s, func(c *Config) { c.HTTPClient = tt.client; c.Name = "openai-test" })
			req := ask("hi")
			if tt.model != "" {
				req.Model = tt.model
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
			if e.Provider != "openai-test" || e.Model != req.Model || e.Status != tt.status ||
				!strings.Contains(e.Message, tt.msg) || (tt.requestID && e.RequestID == "") {
				t.Errorf("error = %+v", e)
			}
			if tt.retryAfter > 0 && (e.RetryAfter > tt.retryAfter || e.RetryAfter < tt.retryAfter-time.Second) {
				t.Errorf("RetryAfter = %v, want about %v", e.RetryAfter, tt.retryAfter)
			}
		})
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
	// The provider does not validate; the schema middleware does.
	s := server(t, fault(llmtest.FaultSchemaViolation))
	req := ask("x")
	req.Schema = &llm.Schema{Name: "v", JSON: json.RawMessage(strictSchema)}
	resp, err := provider(t, s, nil).Complete(context.Background(), req)
	if err != nil || string(resp.JSON) != `{}` {
		t.Errorf("resp %+v err %v", resp, err)
	}
}

func fault(k llmtest.FaultKind) llmtest.Config {
	return llmtest.Config{Faults: llmtest.Faults{Sequence: []llmtest.FaultKind{k}}}
}

// BenchmarkComplete pushes calls through the provider and the fake server at
// zero latency, 32 at a time.
func BenchmarkComplete(b *testing.B) {
	s := llmtest.NewServer(llmtest.Config{RecordLimit: 100})
	defer s.Close()
	p, err := New(Config{BaseURL: s.OpenAIBaseURL(), APIKey: testKey})
	if err != nil {
		b.Fatal(err)
	}
	req := ask("hi")
	req.System = strings.Repeat("shared material ", 500)
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

// A long text is encoded apart from the SDK's encoder (llm.HeldTexts):
// the body that goes out decodes to the same value as the body the SDK
// makes of the request by itself.
func TestLongTextsGoOutWhole(t *testing.T) {
	s := server(t, llmtest.Config{Rules: []llmtest.Rule{{Reply: "the answer"}}})
	p := provider(t, s, nil)
	req := &llm.Request{
		Model:  "openai:gpt-test",
		System: "system " + trickyText,
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "user " + trickyText},
			{Role: llm.RoleAssistant, Content: "assistant " + trickyText, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"path":"a.go"}`)}}},
			{Role: llm.RoleTool, ToolCallID: "c1", Content: "tool " + trickyText},
			{Role: llm.RoleUser, Content: "short"},
		},
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
	if bytes.Contains(rs[1].Body, []byte("sotheld")) {
		t.Error("a stand-in went out in the body")
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
