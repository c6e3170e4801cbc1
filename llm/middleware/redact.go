package middleware

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/sotlabs/sot/internal/secrets"
	"github.com/sotlabs/sot/llm"
)

// Redact masks the secrets in every answer (the keys sot loaded, and
// tokens, keys and passwords of the formats package internal/secrets
// knows) before the answer goes on, so that whatever sits above it (the
// response cache, the run journal, every report rendered from the answer)
// only ever holds the masked text. A structured answer is masked inside
// its strings and stays valid JSON.
//
// The arguments of tool calls are masked as structured answers are, so
// that a call replayed from the journal is the call that ran.
//
// Text streamed to req.OnDelta is masked too. It is passed on a line at a
// time (or, for a long line, up to the end of a sentence), since a secret
// may arrive split across pieces and some are only recognised with the
// words before them on their line.
func Redact(next llm.Provider) llm.Provider {
	return llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		var stream *streamMask
		if req.OnDelta != nil {
			stream = &streamMask{out: req.OnDelta}
			masked := *req
			masked.OnDelta = stream.write
			req = &masked
		}
		resp, err := next.Complete(ctx, req)
		if stream != nil {
			stream.flush()
		}
		if err != nil {
			return nil, err
		}
		maskResponse(resp)
		return resp, nil
	})
}

// maskResponse masks the secrets in resp's text, structured answer and
// tool calls' arguments.
func maskResponse(resp *llm.Response) {
	for i := range resp.ToolCalls {
		c := &resp.ToolCalls[i]
		if masked, ok := maskJSON(c.Arguments); ok {
			c.Arguments = masked
		} else {
			c.Arguments = llm.ToolArguments(secrets.Mask(string(c.Arguments)))
		}
	}
	if raw := bytes.TrimSpace(resp.JSON); len(raw) > 0 {
		masked, ok := maskJSON(raw)
		if !ok {
			masked = []byte(secrets.Mask(string(resp.JSON)))
		}
		// Structured output usually comes back as the text too.
		if strings.TrimSpace(resp.Text) == string(raw) {
			resp.Text = string(masked)
		} else {
			resp.Text = secrets.Mask(resp.Text)
		}
		resp.JSON = masked
		return
	}
	if t := strings.TrimSpace(resp.Text); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		if masked, ok := maskJSON([]byte(t)); ok {
			if string(masked) != t {
				resp.Text = string(masked)
			}
			return
		}
	}
	resp.Text = secrets.Mask(resp.Text)
}

// maskJSON masks every string (keys included) of the JSON document raw.
// It returns raw itself when nothing was masked, so that an answer without
// secrets keeps its exact bytes, and false when raw is not JSON.
func maskJSON(raw []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, false
	}
	v, changed := maskValue(v)
	if !changed {
		return raw, true
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, false
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), true
}

// maskValue masks the strings of a decoded JSON value and reports whether
// any changed.
func maskValue(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		m := secrets.Mask(x)
		return m, m != x
	case []any:
		changed := false
		for i, e := range x {
			var c bool
			x[i], c = maskValue(e)
			changed = changed || c
		}
		return x, changed
	case map[string]any:
		changed := false
		out := make(map[string]any, len(x))
		for k, e := range x {
			mk := secrets.Mask(k)
			me, c := maskValue(e)
			out[mk] = me
			changed = changed || c || mk != k
		}
		return out, changed
	}
	return v, false
}

// streamLine is the length beyond which an unfinished line is passed on up
// to its last sentence end.
const streamLine = 512

// streamMask masks streamed text before passing it on: it holds text back
// until a line is complete (or a long line reaches the end of a sentence)
// and masks what it passes on.
type streamMask struct {
	mu      sync.Mutex
	out     func(string)
	pending string
}

func (s *streamMask) write(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if text == "" {
		// The start of an answer of tool calls (see llm.Request.OnDelta):
		// passed on at once, when no text is held back.
		if s.pending == "" {
			s.out("")
		}
		return
	}
	s.pending += text
	cut := strings.LastIndexByte(s.pending, '\n') + 1
	if cut == 0 && len(s.pending) > streamLine {
		for _, end := range []string{". ", "! ", "? "} {
			cut = max(cut, strings.LastIndex(s.pending, end)+len(end))
		}
		if cut <= 2 {
			cut = 0
		}
	}
	if cut > 0 {
		s.out(secrets.Mask(s.pending[:cut]))
		s.pending = s.pending[cut:]
	}
}

// flush passes on what is held back.
func (s *streamMask) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending != "" {
		s.out(secrets.Mask(s.pending))
		s.pending = ""
	}
}
