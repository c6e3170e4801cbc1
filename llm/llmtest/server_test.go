package llmtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestDefaultAnswer(t *testing.T) {
	s := newServer(t, Config{})
	if got := oaiCall(t, s, oaiBody("m", "", "hi"), nil).text(t); got != "ok" {
		t.Errorf("openai default = %q, want ok", got)
	}
	a := antCall(t, s, antBody("m", "", "hi"), nil).ant(t)
	if len(a.Content) != 1 || a.Content[0].Type != "text" || a.Content[0].Text != "ok" || a.StopReason != "end_turn" {
		t.Errorf("anthropic default = %+v", a)
	}
}

func TestRules(t *testing.T) {
	cfg := Config{Rules: []Rule{
		{Model: "gpt-x", Reply: "by model"},
		{System: "security reviewer", User: "diff", Reply: "by system and user"},
		{User: "once", Times: 1, Reply: "first time"},
		{User: "once", Reply: "later"},
		{User: "twice", Times: 2, Reply: "one of two"},
		{User: "dynamic", Respond: func(r *Recorded) Reply { return Reply{Text: "echo " + r.LastUser()} }},
		{User: "json", JSON: map[string]any{"a": 1}},
	}}
	tests := []struct {
		name, model, system, user, want string
	}{
		{"model", "gpt-x", "", "anything", "by model"},
		{"system and user", "m", "You are a security reviewer.", "review this diff", "by system and user"},
		{"system without user", "m", "You are a security reviewer.", "hello", "ok"},
		{"times first", "m", "", "once", "first time"},
		{"times exhausted", "m", "", "once", "later"},
		{"times 2a", "m", "", "twice", "one of two"},
		{"times 2b", "m", "", "twice", "one of two"},
		{"times 2 exhausted", "m", "", "twice", "ok"},
		{"respond", "m", "", "dynamic!", "echo dynamic!"},
		{"json", "m", "", "json please", `{"a":1}`},
		{"no match", "m", "", "nothing", "ok"},
	}
	for _, provider := range []string{OpenAI, Anthropic} {
		s := newServer(t, cfg) // times count per server
		for _, tt := range tests {
			t.Run(provider+"/"+tt.name, func(t *testing.T) {
				var got string
				if provider == OpenAI {
					got = oaiCall(t, s, oaiBody(tt.model, tt.system, tt.user), nil).text(t)
				} else {
					a := antCall(t, s, antBody(tt.model, tt.system, tt.user), nil).ant(t)
					got = a.Content[0].Text
				}
				if got != tt.want {
					t.Errorf("got %q, want %q", got, tt.want)
				}
			})
		}
		// SetConfig starts the counts afresh.
		s.SetConfig(cfg)
		if got := oaiCall(t, s, oaiBody("m", "", "once"), nil).text(t); got != "first time" {
			t.Errorf("after SetConfig: %q", got)
		}
	}
}

func TestStructuredDefault(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"verdict":{"type":"string","enum":["pass","fail"]},"score":{"type":"integer","minimum":1,"maximum":5}},"required":["verdict","score"],"additionalProperties":false}`)
	s := newServer(t, Config{})

	body := oaiBody("m", "sys", "hi")
	body["response_format"] = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "v", "schema": schema, "strict": true}}
	got := oaiCall(t, s, body, nil).text(t)
	mustValidate(t, schema, []byte(got))

	ab := antBody("m", "sys", "hi")
	ab["tools"] = []map[string]any{{"name": "answer", "input_schema": schema}}
	ab["tool_choice"] = map[string]any{"type": "tool", "name": "answer"}
	a := antCall(t, s, ab, nil).ant(t)
	if a.StopReason != "tool_use" || len(a.Content) != 1 || a.Content[0].Type != "tool_use" || a.Content[0].Name != "answer" {
		t.Fatalf("anthropic answer = %+v", a)
	}
	mustValidate(t, schema, a.Content[0].Input)

	recs := s.Requests()
	if !recs[0].Strict || recs[0].SchemaName != "v" || string(recs[0].Schema) != string(schema) {
		t.Errorf("openai record schema = %s %q strict=%v", recs[0].Schema, recs[0].SchemaName, recs[0].Strict)
	}
	if recs[1].SchemaName != "answer" || string(recs[1].Schema) != string(schema) {
		t.Errorf("anthropic record schema = %s %q", recs[1].Schema, recs[1].SchemaName)
	}
}

func TestStreamOpenAI(t *testing.T) {
	s := newServer(t, Config{Rules: []Rule{{Reply: "The quick brown fox jumps over the lazy dog."}}})
	for _, includeUsage := range []bool{false, true} {
		body := oaiBody("m", "", "hi")
		body["stream"] = true
		if includeUsage {
			body["stream_options"] = map[string]any{"include_usage": true}
		}
		r := oaiCall(t, s, body, nil)
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("status %d, content type %q", r.status, r.header.Get("Content-Type"))
		}
		events := parseSSE(t, r.body)
		if events[len(events)-1].data != "[DONE]" {
			t.Fatalf("last event = %q, want [DONE]", events[len(events)-1].data)
		}
		var text strings.Builder
		var finish string
		var usage *oaiUsage
		pieces := 0
		for _, e := range events[:len(events)-1] {
			var c struct {
				Object  string `json:"object"`
				Choices []struct {
					Delta struct {
						Content *string `json:"content"`
					} `json:"delta"`
					FinishReason *string `json:"finish_reason"`
				} `json:"choices"`
				Usage *oaiUsage `json:"usage"`
			}
			if err := json.Unmarshal([]byte(e.data), &c); err != nil {
				t.Fatal(err)
			}
			if c.Object != "chat.completion.chunk" {
				t.Errorf("object = %q", c.Object)
			}
			if c.Usage != nil {
				if len(c.Choices) != 0 {
					t.Errorf("usage chunk has choices: %s", e.data)
				}
				usage = c.Usage
			}
			for _, ch := range c.Choices {
				if ch.Delta.Content != nil && *ch.Delta.Content != "" {
					text.WriteString(*ch.Delta.Content)
					pieces++
				}
				if ch.FinishReason != nil {
					finish = *ch.FinishReason
				}
			}
		}
		if text.String() != "The quick brown fox jumps over the lazy dog." || pieces < 2 || finish != "stop" {
			t.Errorf("text %q in %d pieces, finish %q", text.String(), pieces, finish)
		}
		if includeUsage != (usage != nil) {
			t.Errorf("include_usage=%v but usage chunk present=%v", includeUsage, usage != nil)
		}
		if usage != nil && (usage.CompletionTokens != tokens(len(text.String())) || usage.TotalTokens != usage.PromptTokens+usage.CompletionTokens) {
			t.Errorf("usage = %+v", usage)
		}
	}
	recs := s.Requests()
	if !recs[0].Stream || recs[0].IncludeUsage || !recs[1].IncludeUsage {
		t.Errorf("recorded stream flags: %v %v / %v %v", recs[0].Stream, recs[0].IncludeUsage, recs[1].Stream, recs[1].IncludeUsage)
	}
}

func TestStreamAnthropic(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)
	s := newServer(t, Config{Rules: []Rule{{User: "text", Reply: "Hello there, general."}}})
	tests := []struct {
		name, user   string
		tool         bool
		wantStop     string
		wantDeltaTyp string
		want         string
	}{
		{"text", "text", false, "end_turn", "text_delta", "Hello there, general."},
		{"tool", "structured", true, "tool_use", "input_json_delta", `{"ok":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := antBody("m", "sys", tt.user)
			body["stream"] = true
			if tt.tool {
				body["tools"] = []map[string]any{{"name": "emit", "input_schema": schema}}
				body["tool_choice"] = map[string]any{"type": "tool", "name": "emit"}
			}
			r := antCall(t, s, body, nil)
			events := parseSSE(t, r.body)
			var names []string
			var got, stop string
			for _, e := range events {
				if e.name != "ping" {
					names = append(names, e.name)
				}
				var ev struct {
					Delta struct {
						Type        string `json:"type"`
						Text        string `json:"text"`
						PartialJSON string `json:"partial_json"`
						StopReason  string `json:"stop_reason"`
					} `json:"delta"`
				}
				if err := json.Unmarshal([]byte(e.data), &ev); err != nil {
					t.Fatalf("%s: %v", e.data, err)
				}
				switch e.name {
				case "content_block_delta":
					if ev.Delta.Type != tt.wantDeltaTyp {
						t.Errorf("delta type %q", ev.Delta.Type)
					}
					got += ev.Delta.Text + ev.Delta.PartialJSON
				case "message_delta":
					stop = ev.Delta.StopReason
				}
			}
			if names[0] != "message_start" || names[1] != "content_block_start" || names[len(names)-1] != "message_stop" ||
				names[len(names)-2] != "message_delta" || names[len(names)-3] != "content_block_stop" {
				t.Errorf("event order %v", names)
			}
			if got != tt.want || stop != tt.wantStop {
				t.Errorf("got %q stop %q, want %q %q", got, stop, tt.want, tt.wantStop)
			}
		})
	}
}

func TestMaxTokensCutsAnswer(t *testing.T) {
	s := newServer(t, Config{Rules: []Rule{{Reply: strings.Repeat("word ", 100)}}})
	body := oaiBody("m", "", "hi")
	body["max_completion_tokens"] = 10
	o := oaiCall(t, s, body, nil).oai(t)
	if o.Choices[0].FinishReason != "length" || len(o.Choices[0].Message.Content) != 40 || o.Usage.CompletionTokens != 10 {
		t.Errorf("finish %q, %d bytes, usage %+v", o.Choices[0].FinishReason, len(o.Choices[0].Message.Content), o.Usage)
	}
	ab := antBody("m", "", "hi")
	ab["max_tokens"] = 10
	a := antCall(t, s, ab, nil).ant(t)
	if a.StopReason != "max_tokens" || a.Usage.OutputTokens != 10 {
		t.Errorf("anthropic stop %q usage %+v", a.StopReason, a.Usage)
	}
}

func TestFaults(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	tests := []struct {
		fault      FaultKind
		wantStatus int
		check      func(t *testing.T, provider string, r resp)
	}{
		{Fault429, 429, func(t *testing.T, provider string, r resp) {
			if r.header.Get("Retry-After") != "7" || r.header.Get("Retry-After-Ms") != "" {
				t.Errorf("Retry-After = %q, retry-after-ms = %q, want 7 and none", r.header.Get("Retry-After"), r.header.Get("Retry-After-Ms"))
			}
			wantErrType(t, provider, r, "requests", "rate_limit_error")
		}},
		{Fault500, 500, func(t *testing.T, provider string, r resp) { wantErrType(t, provider, r, "server_error", "api_error") }},
		{Fault503, 503, func(t *testing.T, provider string, r resp) {
			wantErrType(t, provider, r, "server_error", "overloaded_error")
		}},
		{Fault401, 401, func(t *testing.T, provider string, r resp) {
			wantErrType(t, provider, r, "invalid_request_error", "authentication_error")
		}},
		{FaultInvalidJSON, 200, func(t *testing.T, provider string, r resp) {
			if json.Valid(r.body) {
				t.Errorf("body is valid JSON: %s", r.body)
			}
		}},
		{FaultTruncate, 200, func(t *testing.T, provider string, r resp) {
			if r.err == nil {
				t.Errorf("reading a truncated body succeeded: %s", r.body)
			}
		}},
		{FaultSchemaViolation, 200, func(t *testing.T, provider string, r resp) {
			var answer []byte
			if provider == OpenAI {
				answer = []byte(r.text(t))
			} else {
				a := r.ant(t)
				answer = a.Content[0].Input
			}
			if validate(t, schema, answer) == nil {
				t.Errorf("answer %s validates", answer)
			}
		}},
	}
	for _, tt := range tests {
		for _, provider := range []string{OpenAI, Anthropic} {
			t.Run(string(tt.fault)+"/"+provider, func(t *testing.T) {
				s := newServer(t, Config{Faults: Faults{Sequence: []FaultKind{tt.fault}, RetryAfter: 7}})
				var r resp
				if provider == OpenAI {
					body := oaiBody("m", "", "hi")
					body["response_format"] = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "n", "schema": schema}}
					r = oaiCall(t, s, body, nil)
				} else {
					body := antBody("m", "", "hi")
					body["tools"] = []map[string]any{{"name": "emit", "input_schema": schema}}
					body["tool_choice"] = map[string]any{"type": "tool", "name": "emit"}
					r = antCall(t, s, body, nil)
				}
				if r.status != tt.wantStatus {
					t.Fatalf("status %d, want %d (%v)", r.status, tt.wantStatus, r.err)
				}
				wantHeader := "x-request-id"
				if provider == Anthropic {
					wantHeader = "request-id"
				}
				if r.header.Get(wantHeader) == "" {
					t.Errorf("no %s header", wantHeader)
				}
				tt.check(t, provider, r)
				rec := s.Requests()[0]
				if rec.Fault != tt.fault || rec.Status != tt.wantStatus {
					t.Errorf("recorded fault %q status %d", rec.Fault, rec.Status)
				}
				// The sequence is spent: the next request succeeds.
				if provider == OpenAI {
					if r := oaiCall(t, s, oaiBody("m", "", "hi"), nil); r.status != 200 {
						t.Errorf("second request status %d", r.status)
					}
				}
			})
		}
	}
}

func wantErrType(t *testing.T, provider string, r resp, openaiType, anthropicType string) {
	t.Helper()
	if provider == OpenAI {
		o := r.oai(t)
		if o.Error == nil || o.Error.Type != openaiType || o.Error.Message == "" {
			t.Errorf("openai error = %s", r.body)
		}
		return
	}
	a := r.ant(t)
	if a.Type != "error" || a.Error == nil || a.Error.Type != anthropicType || a.Error.Message == "" {
		t.Errorf("anthropic error = %s", r.body)
	}
}

func TestFaultStreams(t *testing.T) {
	for _, provider := range []string{OpenAI, Anthropic} {
		for _, fault := range []FaultKind{FaultTruncate, FaultInvalidJSON} {
			t.Run(provider+"/"+string(fault), func(t *testing.T) {
				s := newServer(t, Config{Faults: Faults{Sequence: []FaultKind{fault}}, Rules: []Rule{{Reply: strings.Repeat("abc ", 50)}}})
				var r resp
				if provider == OpenAI {
					b := oaiBody("m", "", "hi")
					b["stream"] = true
					r = oaiCall(t, s, b, nil)
				} else {
					b := antBody("m", "", "hi")
					b["stream"] = true
					r = antCall(t, s, b, nil)
				}
				if fault == FaultTruncate && r.err == nil {
					t.Errorf("truncated stream read without error")
				}
				if fault == FaultInvalidJSON {
					for _, e := range parseSSE(t, r.body) {
						if json.Valid([]byte(e.data)) {
							t.Errorf("event data is JSON: %s", e.data)
						}
					}
				}
			})
		}
	}
}

func TestHang(t *testing.T) {
	s := newServer(t, Config{Faults: Faults{Sequence: []FaultKind{FaultHang}}})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	r := post(t, ctx, s.OpenAIBaseURL()+"/chat/completions", nil, oaiBody("m", "", "hi"))
	if !errors.Is(r.err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", r.err)
	}
	if time.Since(start) < 100*time.Millisecond {
		t.Errorf("returned before the client's deadline")
	}
	// The handler notices the client left.
	waitFor(t, func() bool { return s.Requests()[0].Status == 499 })
}

func TestHangReleasedByClose(t *testing.T) {
	s := NewServer(Config{Faults: Faults{Sequence: []FaultKind{FaultHang}}})
	done := make(chan resp, 1)
	go func() {
		done <- post(t, context.Background(), s.OpenAIBaseURL()+"/chat/completions", nil, oaiBody("m", "", "hi"))
	}()
	waitFor(t, func() bool { return len(s.Requests()) == 1 })
	s.Close()
	select {
	case r := <-done:
		if r.err == nil && r.status == 200 {
			t.Errorf("hung request answered 200")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not release the hanging request")
	}
}

func TestFaultRate(t *testing.T) {
	run := func(seed uint64) []int {
		s := newServer(t, Config{Seed: seed, Faults: Faults{Rate: 0.5, Kinds: []FaultKind{Fault500, Fault503}}})
		var statuses []int
		for i := 0; i < 40; i++ {
			statuses = append(statuses, oaiCall(t, s, oaiBody("m", "", "hi"), nil).status)
		}
		return statuses
	}
	a, b := run(42), run(42)
	count := map[int]int{}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different faults: %v vs %v", a, b)
		}
		count[a[i]]++
	}
	if count[200] == 0 || count[500] == 0 || count[503] == 0 || count[200]+count[500]+count[503] != 40 {
		t.Errorf("statuses = %v", count)
	}
	// Rate 1 always fails.
	s := newServer(t, Config{Faults: Faults{Rate: 1}})
	if r := oaiCall(t, s, oaiBody("m", "", "hi"), nil); r.status != 500 {
		t.Errorf("rate 1 status %d", r.status)
	}
}

func TestFaultSequenceWithNone(t *testing.T) {
	s := newServer(t, Config{Faults: Faults{Sequence: []FaultKind{Fault503, FaultNone, "429"}}})
	var got []int
	for i := 0; i < 4; i++ {
		got = append(got, oaiCall(t, s, oaiBody("m", "", "hi"), nil).status)
	}
	want := []int{503, 200, 429, 200}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("statuses %v, want %v", got, want)
		}
	}
}

func TestQuota(t *testing.T) {
	s := newServer(t, Config{Quota: Quota{Requests: 2, Window: 2500 * time.Millisecond}})
	for _, provider := range []string{OpenAI, Anthropic} {
		s.SetConfig(Config{Quota: Quota{Requests: 2, Window: 2500 * time.Millisecond}})
		call := func() resp {
			if provider == OpenAI {
				return oaiCall(t, s, oaiBody("m", "", "hi"), nil)
			}
			return antCall(t, s, antBody("m", "", "hi"), nil)
		}
		for i := 0; i < 2; i++ {
			if r := call(); r.status != 200 {
				t.Fatalf("%s request %d: status %d", provider, i, r.status)
			}
		}
		r := call()
		// Retry-After rounds the rest of the 2.5 s window up to whole
		// seconds: 3 at once, less if the machine was slow.
		if ra, _ := strconv.Atoi(r.header.Get("Retry-After")); r.status != 429 || ra < 1 || ra > 3 {
			t.Errorf("%s over quota: status %d Retry-After %q, want 429 and 1 to 3", provider, r.status, r.header.Get("Retry-After"))
		}
		wantErrType(t, provider, r, "requests", "rate_limit_error")
	}
	// A short window resets; retry-after-ms says exactly when.
	s.SetConfig(Config{Quota: Quota{Requests: 1, Window: time.Second}})
	oaiCall(t, s, oaiBody("m", "", "hi"), nil)
	r := oaiCall(t, s, oaiBody("m", "", "hi"), nil)
	if ms, _ := strconv.Atoi(r.header.Get("Retry-After-Ms")); r.status != 429 || r.header.Get("Retry-After") != "1" || ms < 1 || ms > 1000 {
		t.Errorf("status %d Retry-After %q retry-after-ms %q", r.status, r.header.Get("Retry-After"), r.header.Get("Retry-After-Ms"))
	}
	time.Sleep(1050 * time.Millisecond)
	if r := oaiCall(t, s, oaiBody("m", "", "hi"), nil); r.status != 200 {
		t.Errorf("after the window: status %d", r.status)
	}
}

func TestLatency(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		atLeast time.Duration
	}{
		{"config", Config{Latency: 80 * time.Millisecond}, 80 * time.Millisecond},
		{"jitter", Config{Latency: 20 * time.Millisecond, LatencyJitter: 10 * time.Millisecond}, 20 * time.Millisecond},
		{"rule override", Config{Latency: time.Hour, Rules: []Rule{{Latency: 60 * time.Millisecond}}}, 60 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.cfg)
			start := time.Now()
			if r := oaiCall(t, s, oaiBody("m", "", "hi"), nil); r.status != 200 {
				t.Fatalf("status %d", r.status)
			}
			if d := time.Since(start); d < tt.atLeast {
				t.Errorf("answered after %v, want at least %v", d, tt.atLeast)
			}
		})
	}
}

// longText is n bytes of varied text.
func longText(seed string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(seed)
		b.WriteString(" line ")
		b.WriteString(strings.Repeat("x", i%13))
		b.WriteString("\n")
	}
	return b.String()[:n]
}

func TestPrefixCacheOpenAI(t *testing.T) {
	shared := longText("shared", 8000) // 2000 tokens
	s := newServer(t, Config{PrefixCache: true})
	call := func(system, user string) oaiResult {
		return oaiCall(t, s, oaiBody("m", system, user), nil).oai(t)
	}
	first := call(shared, "persona A")
	if first.Usage.PromptTokensDetails.CachedTokens != 0 {
		t.Errorf("first call cached %d", first.Usage.PromptTokensDetails.CachedTokens)
	}
	second := call(shared, "persona B")
	cached := second.Usage.PromptTokensDetails.CachedTokens
	// "system:\n" + 8000 bytes + "\n\n" = 8010 bytes shared: 15 whole blocks of 512 bytes.
	if cached != 15*128 {
		t.Errorf("second call cached %d, want %d", cached, 15*128)
	}
	if cached > second.Usage.PromptTokens {
		t.Errorf("cached %d > prompt %d", cached, second.Usage.PromptTokens)
	}
	// Under 1024 tokens nothing is cached.
	small := longText("small", 3000)
	call(small, "a")
	if c := call(small, "b").Usage.PromptTokensDetails.CachedTokens; c != 0 {
		t.Errorf("short prefix cached %d", c)
	}
	// Another model has its own cache.
	if c := oaiCall(t, s, oaiBody("other", shared, "persona C"), nil).oai(t).Usage.PromptTokensDetails.CachedTokens; c != 0 {
		t.Errorf("other model cached %d", c)
	}
	// Without prefix_cache nothing is cached.
	s.SetConfig(Config{})
	if c := call(shared, "persona D").Usage.PromptTokensDetails.CachedTokens; c != 0 {
		t.Errorf("cache disabled but cached %d", c)
	}
}

func antCached(system string, cacheSystem bool, user string) map[string]any {
	b := antBody("claude", "", user)
	block := map[string]any{"type": "text", "text": system}
	if cacheSystem {
		block["cache_control"] = map[string]any{"type": "ephemeral"}
	}
	b["system"] = []map[string]any{block, {"type": "text", "text": "persona " + user}}
	return b
}

func TestPrefixCacheAnthropic(t *testing.T) {
	shared := longText("shared", 8000)
	prefixTokens := tokens(len("system:\n" + shared + "\n\n"))
	s := newServer(t, Config{PrefixCache: true})

	first := antCall(t, s, antCached(shared, true, "A"), nil).ant(t)
	total := first.Usage.InputTokens + first.Usage.CacheCreationInputTokens + first.Usage.CacheReadInputTokens
	if first.Usage.CacheCreationInputTokens != prefixTokens || first.Usage.CacheReadInputTokens != 0 {
		t.Errorf("first: %+v, want creation %d", first.Usage, prefixTokens)
	}
	second := antCall(t, s, antCached(shared, true, "B"), nil).ant(t)
	if second.Usage.CacheReadInputTokens != prefixTokens || second.Usage.CacheCreationInputTokens != 0 {
		t.Errorf("second: %+v, want read %d", second.Usage, prefixTokens)
	}
	if total2 := second.Usage.InputTokens + second.Usage.CacheReadInputTokens; total2 != total {
		t.Errorf("totals differ: %d vs %d", total, total2)
	}
	if rec := s.Requests()[1]; rec.CacheControlBlocks != 1 {
		t.Errorf("cache control blocks = %d", rec.CacheControlBlocks)
	}
	// Without a breakpoint nothing is cached or written.
	third := antCall(t, s, antCached(shared, false, "C"), nil).ant(t)
	if third.Usage.CacheReadInputTokens != 0 || third.Usage.CacheCreationInputTokens != 0 {
		t.Errorf("no breakpoint: %+v", third.Usage)
	}
	// A breakpoint under 1024 tokens is ignored.
	small := longText("small", 2000)
	antCall(t, s, antCached(small, true, "D"), nil)
	if u := antCall(t, s, antCached(small, true, "E"), nil).ant(t).Usage; u.CacheReadInputTokens != 0 || u.CacheCreationInputTokens != 0 {
		t.Errorf("short prefix: %+v", u)
	}
}

// TestPrefixCacheAnthropicLookback: a breakpoint reads a prefix an earlier
// request marked at one of the 20 block boundaries before it, as the
// breakpoint at the end of a tool loop's conversation moves on each round.
func TestPrefixCacheAnthropicLookback(t *testing.T) {
	s := newServer(t, Config{PrefixCache: true})
	// A conversation of n turns, each a block of its own, marked at its end.
	turns := func(n int) map[string]any {
		var msgs []map[string]any
		for i := range n {
			role := []string{"user", "assistant"}[i%2]
			text := longText("turn "+strconv.Itoa(i), 400)
			block := map[string]any{"type": "text", "text": text}
			if i == n-1 {
				block["cache_control"] = map[string]any{"type": "ephemeral"}
			}
			msgs = append(msgs, map[string]any{"role": role, "content": []map[string]any{block}})
		}
		b := antBody("m", "", "")
		b["messages"] = msgs
		return b
	}
	first := antCall(t, s, turns(11), nil).ant(t).Usage
	if first.CacheCreationInputTokens < cacheMinTokens || first.CacheReadInputTokens != 0 {
		t.Fatalf("first: %+v", first)
	}
	// Ten turns on, the first request's breakpoint is within reach.
	second := antCall(t, s, turns(21), nil).ant(t).Usage
	if second.CacheReadInputTokens != first.CacheCreationInputTokens || second.CacheCreationInputTokens == 0 {
		t.Errorf("second: %+v, want to read %d", second, first.CacheCreationInputTokens)
	}
	// Thirty turns on from the first (twenty-four from the second), it is not.
	third := antCall(t, s, turns(45), nil).ant(t).Usage
	if third.CacheReadInputTokens != 0 {
		t.Errorf("third: %+v, want no read beyond the lookback", third)
	}
}

// A prefix is readable only once its writer's answer has started: a
// request that arrives before that (sent together with it) misses and
// writes the prefix too, and one that arrives after it reads it, though
// the writer's answer has not ended.
func TestPrefixCacheWrittenWhenTheAnswerStarts(t *testing.T) {
	shared := longText("start", 8000)
	s := newServer(t, Config{PrefixCache: true, Latency: 400 * time.Millisecond, FirstToken: 200 * time.Millisecond})
	// The writer streams; read up to its first piece of text.
	body := oaiBody("m", shared, "writer")
	body["stream"] = true
	body["stream_options"] = map[string]any{"include_usage": true}
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, s.OpenAIBaseURL()+"/chat/completions", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	together := make(chan int, 1)
	go func() {
		together <- oaiCall(t, s, oaiBody("m", shared, "together"), nil).oai(t).Usage.PromptTokensDetails.CachedTokens
	}()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	rd := bufio.NewReader(res.Body)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended before any text: %v", err)
		}
		if strings.Contains(line, `"content":"`) && !strings.Contains(line, `"content":""`) {
			break
		}
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("the first text arrived after %s, before the first token time", d)
	}
	after := oaiCall(t, s, oaiBody("m", shared, "after"), nil).oai(t).Usage.PromptTokensDetails.CachedTokens
	rest, _ := io.ReadAll(rd)
	if d := time.Since(start); d < 400*time.Millisecond || !strings.Contains(string(rest), "[DONE]") {
		t.Errorf("the stream ended after %s (want the latency, 400ms) with %q", d, rest)
	}
	if c := <-together; c != 0 {
		t.Errorf("a request sent together with the writer read %d cached tokens", c)
	}
	if after == 0 {
		t.Errorf("a request sent after the writer's answer started read nothing from the cache")
	}
}

func TestPrefixCacheWarmup(t *testing.T) {
	shared := longText("warm", 8000)
	s := newServer(t, Config{PrefixCache: true, CacheWarmup: 500 * time.Millisecond})
	// Sent one after the other, but within the warm-up, the second request
	// of each style cannot read the prefix yet and writes it too.
	antCall(t, s, antCached(shared, true, "A"), nil)
	if u := antCall(t, s, antCached(shared, true, "B"), nil).ant(t).Usage; u.CacheReadInputTokens != 0 || u.CacheCreationInputTokens == 0 {
		t.Errorf("anthropic during warm-up: %+v", u)
	}
	oaiCall(t, s, oaiBody("m", shared, "a"), nil)
	if c := oaiCall(t, s, oaiBody("m", shared, "b"), nil).oai(t).Usage.PromptTokensDetails.CachedTokens; c != 0 {
		t.Errorf("openai during warm-up cached %d", c)
	}
	time.Sleep(600 * time.Millisecond)
	if u := antCall(t, s, antCached(shared, true, "C"), nil).ant(t).Usage; u.CacheReadInputTokens == 0 {
		t.Errorf("anthropic after warm-up: %+v", u)
	}
	if c := oaiCall(t, s, oaiBody("m", shared, "c"), nil).oai(t).Usage.PromptTokensDetails.CachedTokens; c == 0 {
		t.Errorf("openai after warm-up cached nothing")
	}
}

func TestMaxConcurrent(t *testing.T) {
	// Long enough that five calls started together overlap on a busy machine.
	s := newServer(t, Config{Latency: 400 * time.Millisecond})
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			oaiCall(t, s, oaiBody("m", "", "hi"), nil)
		}()
	}
	wg.Wait()
	if got := s.MaxConcurrent(); got != 5 {
		t.Errorf("MaxConcurrent = %d, want 5", got)
	}
	if n := len(s.Requests()); n != 5 {
		t.Errorf("recorded %d requests", n)
	}
}

func TestAuth(t *testing.T) {
	const key = "sk-test-secret-123456"
	s := newServer(t, Config{APIKey: key})
	tests := []struct {
		name     string
		provider string
		header   map[string]string
		want     int
	}{
		{"openai bearer", OpenAI, map[string]string{"Authorization": "Bearer " + key}, 200},
		{"openai missing", OpenAI, nil, 401},
		{"openai wrong", OpenAI, map[string]string{"Authorization": "Bearer nope"}, 401},
		{"anthropic x-api-key", Anthropic, map[string]string{"x-api-key": key}, 200},
		{"anthropic bearer", Anthropic, map[string]string{"Authorization": "Bearer " + key}, 200},
		{"anthropic missing", Anthropic, nil, 401},
		{"anthropic wrong", Anthropic, map[string]string{"x-api-key": "nope"}, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r resp
			if tt.provider == OpenAI {
				r = oaiCall(t, s, oaiBody("m", "", "hi"), tt.header)
			} else {
				r = antCall(t, s, antBody("m", "", "hi"), tt.header)
			}
			if r.status != tt.want {
				t.Fatalf("status %d, want %d", r.status, tt.want)
			}
			if r.status == 401 {
				wantErrType(t, tt.provider, r, "invalid_request_error", "authentication_error")
				if strings.Contains(string(r.body), key) {
					t.Errorf("error body echoes the key")
				}
			}
		})
	}
}

func TestUnknownModel(t *testing.T) {
	s := newServer(t, Config{Models: []string{"gpt-known", "claude-known"}})
	r := oaiCall(t, s, oaiBody("gpt-nope", "", "hi"), nil)
	o := r.oai(t)
	if r.status != 404 || o.Error == nil || o.Error.Code != "model_not_found" || o.Error.Message != "The model `gpt-nope` does not exist" {
		t.Errorf("openai: %d %s", r.status, r.body)
	}
	r = antCall(t, s, antBody("claude-nope", "", "hi"), nil)
	a := r.ant(t)
	if r.status != 404 || a.Error == nil || a.Error.Type != "not_found_error" || a.Error.Message != "model: claude-nope" {
		t.Errorf("anthropic: %d %s", r.status, r.body)
	}
	if r := oaiCall(t, s, oaiBody("gpt-known", "", "hi"), nil); r.status != 200 {
		t.Errorf("known model: %d", r.status)
	}
	// The model list.
	res, err := http.Get(s.OpenAIBaseURL() + "/models")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil || len(list.Data) != 2 || list.Data[0].ID != "gpt-known" {
		t.Errorf("models: %+v %v", list, err)
	}
}

func TestBadRequests(t *testing.T) {
	s := newServer(t, Config{})
	tests := []struct {
		name     string
		provider string
		body     map[string]any
		want     string
	}{
		{"openai no model", OpenAI, map[string]any{"messages": []any{map[string]any{"role": "user", "content": "x"}}}, "model"},
		{"openai no messages", OpenAI, map[string]any{"model": "m"}, "messages"},
		{"openai bad content", OpenAI, map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": 5}}}, "content"},
		{"anthropic no max_tokens", Anthropic, map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "x"}}}, "max_tokens"},
		{"anthropic unknown tool", Anthropic, map[string]any{"model": "m", "max_tokens": 5, "messages": []any{map[string]any{"role": "user", "content": "x"}}, "tool_choice": map[string]any{"type": "tool", "name": "nope"}}, "tool_choice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r resp
			if tt.provider == OpenAI {
				r = oaiCall(t, s, tt.body, nil)
			} else {
				r = antCall(t, s, tt.body, nil)
			}
			if r.status != 400 || !strings.Contains(string(r.body), tt.want) {
				t.Errorf("status %d body %s", r.status, r.body)
			}
		})
	}
}

func TestRecorded(t *testing.T) {
	s := newServer(t, Config{})
	oai := map[string]any{
		"model": "gpt-4.1",
		"messages": []any{
			map[string]any{"role": "system", "content": "be brief"},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "part one"}, map[string]any{"type": "text", "text": "part two"}}},
			map[string]any{"role": "assistant", "content": "earlier answer"},
			map[string]any{"role": "user", "content": "last"},
		},
		"temperature":           0.25,
		"max_completion_tokens": 300,
	}
	oaiCall(t, s, oai, map[string]string{"X-Custom": "yes"})
	ant := map[string]any{
		"model":       "claude-x",
		"max_tokens":  200,
		"temperature": 0.5,
		"system": []any{
			map[string]any{"type": "text", "text": "rules", "cache_control": map[string]any{"type": "ephemeral"}},
			map[string]any{"type": "text", "text": "persona"},
		},
		"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "question"}}}},
	}
	antCall(t, s, ant, nil)

	recs := s.Requests()
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	o := recs[0]
	if o.Provider != OpenAI || o.Path != "/v1/chat/completions" || o.Model != "gpt-4.1" || o.System != "be brief" ||
		len(o.Messages) != 3 || o.Messages[0].Text != "part one\npart two" || o.Messages[1].Role != "assistant" ||
		o.LastUser() != "last" || o.Temperature == nil || *o.Temperature != 0.25 || o.MaxTokens != 300 ||
		o.Header.Get("X-Custom") != "yes" || o.Status != 200 || len(o.Body) == 0 || o.Time.IsZero() {
		t.Errorf("openai record = %+v", o)
	}
	a := recs[1]
	if a.Provider != Anthropic || a.Model != "claude-x" || a.System != "rulespersona" || a.CacheControlBlocks != 1 ||
		a.MaxTokens != 200 || *a.Temperature != 0.5 || a.LastUser() != "question" || a.Header.Get("anthropic-version") == "" {
		t.Errorf("anthropic record = %+v", a)
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", `
latency: 300ms
latency_jitter: 50ms
first_token: 20ms
seed: 7
models: [gpt-4.1, claude-sonnet-4-5]
api_key: test-key
prefix_cache: true
cache_warmup: 2s
quota:
  requests: 10
  window: 1m
faults:
  rate: 0.1
  kinds: [429, 503, hang]
  sequence: [500, none]
  retry_after: 3
  retry_after_ms: 250
rules:
  - model: gpt-4.1
    user: hello
    times: 2
    reply: hi there
  - system: reviewer
    json:
      findings:
        - title: x
          severity: high
  - user: boom
    fault: truncate
    latency: 1s
`)
	cfg, err := LoadConfig(good)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Latency != 300*time.Millisecond || cfg.LatencyJitter != 50*time.Millisecond || cfg.FirstToken != 20*time.Millisecond ||
		cfg.Faults.RetryAfterMs != 250 || cfg.Seed != 7 || len(cfg.Models) != 2 ||
		cfg.APIKey != "test-key" || !cfg.PrefixCache || cfg.CacheWarmup != 2*time.Second || cfg.Quota.Requests != 10 ||
		cfg.Quota.Window != time.Minute || cfg.Faults.Rate != 0.1 || len(cfg.Faults.Kinds) != 3 || cfg.Faults.Kinds[0] != Fault429 ||
		cfg.Faults.Sequence[1] != FaultNone || cfg.Faults.RetryAfter != 3 || len(cfg.Rules) != 3 || cfg.Rules[0].Times != 2 ||
		cfg.Rules[2].Fault != FaultTruncate || cfg.Rules[2].Latency != time.Second {
		t.Errorf("config = %+v", cfg)
	}
	// The loaded config serves.
	s := newServer(t, cfg)
	s.SetConfig(Config{Rules: cfg.Rules})
	r := oaiCall(t, s, oaiBody("m", "you are a reviewer", "x"), nil)
	if got := r.text(t); got != `{"findings":[{"severity":"high","title":"x"}]}` {
		t.Errorf("yaml json reply = %s", got)
	}

	tests := []struct {
		name, content, want string
	}{
		{"syntax", "rules:\n  - reply: [\n", "bad.yaml:2:"},
		{"unknown field", "latency: 1s\nlatncy_jitter: 2s\n", "bad.yaml:2:1:"},
		{"bad duration", "latency: 300\n", "bad.yaml:1:10:"},
		{"unknown fault", "faults:\n  kinds: [429, explode]\n", "bad.yaml:2:16: faults.kinds[1]: unknown fault \"explode\""},
		{"bad rate", "faults:\n  rate: 2\n", "bad.yaml:2:9: faults.rate"},
		{"rule fault", "rules:\n  - reply: x\n  - fault: nope\n", "bad.yaml:3:12: rules[1].fault"},
		{"quota without window", "quota:\n  requests: 3\n", "quota.window"},
		{"negative first token", "first_token: -1s\n", "bad.yaml:1:14: first_token: must not be negative"},
		{"negative retry_after_ms", "faults:\n  retry_after_ms: -5\n", "faults.retry_after_ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadConfig(write("bad.yaml", tt.content))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if _, err := LoadConfig(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestInvalidConfigPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewServer accepted an invalid config")
		}
	}()
	NewServer(Config{Faults: Faults{Kinds: []FaultKind{"explode"}}})
}

func TestUnknownPath(t *testing.T) {
	s := newServer(t, Config{})
	res, err := http.Get(s.URL() + "/nope")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 404 || !json.Valid(body) {
		t.Errorf("status %d body %s", res.StatusCode, body)
	}
}

func BenchmarkOpenAI(b *testing.B) {
	s := NewServer(Config{})
	defer s.Close()
	body := oaiBody("m", longText("bench", 4000), "hi")
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if r := oaiCall(b, s, body, nil); r.status != 200 {
				b.Fatalf("status %d", r.status)
			}
		}
	})
}

func TestRecordLimit(t *testing.T) {
	s := newServer(t, Config{RecordLimit: 3})
	for i := 0; i < 10; i++ {
		oaiCall(t, s, oaiBody("m", "", "n"+string(rune('0'+i))), nil)
	}
	recs := s.Requests()
	if len(recs) != 3 || recs[2].LastUser() != "n9" || recs[0].LastUser() != "n7" {
		t.Errorf("kept %d records, last %q", len(recs), recs[len(recs)-1].LastUser())
	}
	if s.Count() != 10 {
		t.Errorf("Count = %d", s.Count())
	}
}
