package llmtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

type resp struct {
	status int
	header http.Header
	body   []byte
	err    error // transport or body read error
}

// post sends a JSON request and reads the whole answer.
func post(t testing.TB, ctx context.Context, url string, header map[string]string, body any) resp {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return resp{err: err}
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, header: res.Header, body: data, err: err}
}

func oaiCall(t testing.TB, s *Server, body map[string]any, header map[string]string) resp {
	t.Helper()
	return post(t, context.Background(), s.OpenAIBaseURL()+"/chat/completions", header, body)
}

func antCall(t testing.TB, s *Server, body map[string]any, header map[string]string) resp {
	t.Helper()
	if header == nil {
		header = map[string]string{}
	}
	header["anthropic-version"] = "2023-06-01"
	return post(t, context.Background(), s.AnthropicBaseURL()+"/v1/messages", header, body)
}

func oaiBody(model, system, user string) map[string]any {
	msgs := []map[string]any{}
	if system != "" {
		msgs = append(msgs, map[string]any{"role": "system", "content": system})
	}
	msgs = append(msgs, map[string]any{"role": "user", "content": user})
	return map[string]any{"model": model, "messages": msgs}
}

func antBody(model, system, user string) map[string]any {
	b := map[string]any{
		"model":      model,
		"max_tokens": 1024,
		"messages":   []map[string]any{{"role": "user", "content": user}},
	}
	if system != "" {
		b["system"] = system
	}
	return b
}

type oaiResult struct {
	Choices []struct {
		Message struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    string `json:"code"`
	} `json:"error"`
}

func (r resp) oai(t testing.TB) oaiResult {
	t.Helper()
	if r.err != nil {
		t.Fatalf("request failed: %v", r.err)
	}
	var out oaiResult
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatalf("answer is not JSON: %v\n%s", err, r.body)
	}
	return out
}

func (r resp) text(t testing.TB) string {
	t.Helper()
	o := r.oai(t)
	if len(o.Choices) != 1 {
		t.Fatalf("want one choice, got %s", r.body)
	}
	return o.Choices[0].Message.Content
}

type antResult struct {
	Type    string `json:"type"`
	Content []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content"`
	StopReason string `json:"stop_reason"`
	Usage      struct {
		InputTokens              int `json:"input_tokens"`
		OutputTokens             int `json:"output_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	} `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func (r resp) ant(t testing.TB) antResult {
	t.Helper()
	if r.err != nil {
		t.Fatalf("request failed: %v", r.err)
	}
	var out antResult
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatalf("answer is not JSON: %v\n%s", err, r.body)
	}
	return out
}

type sseEvent struct {
	name string
	data string
}

func parseSSE(t testing.TB, body []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data += strings.TrimPrefix(line, "data: ")
		}
	}
	return out
}

func newServer(t testing.TB, cfg Config) *Server {
	t.Helper()
	s := NewServer(cfg)
	t.Cleanup(s.Close)
	return s
}

func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
