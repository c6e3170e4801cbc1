// Package llmtest is a fake model server: it speaks the OpenAI Chat
// Completions and Anthropic Messages wire formats over real HTTP on loopback,
// so that tests and benchmarks of every layer of sot can run without the
// network.
//
// Answers come from scripted rules (text, JSON, or calls to the tools a
// request offers, round by round of a tool loop), or are generated from
// the request's JSON Schema. Latency (with the time to a streamed answer's
// first token), faults (429 with Retry-After, 5xx, hangs, truncated or
// malformed bodies, schema violations), quotas, authentication, unknown
// models and the providers' prefix caches, which serve a prefix only once
// an answer to a request holding it has started, are simulated. Every
// request is recorded for inspection, with the tools it offered and the
// tool results it carried; tool conversations the APIs refuse (a tool
// result answering no call, a call left unanswered) are refused with a
// 400, as there.
package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Provider names used in Recorded.Provider.
const (
	OpenAI    = "openai"
	Anthropic = "anthropic"
)

// hangCap bounds FaultHang.
const hangCap = 10 * time.Minute

// maxBody bounds a request body.
const maxBody = 64 << 20

// Message is one recorded conversation turn. Tool results are turns of
// role "tool" in both wire formats: an Anthropic user turn of tool_result
// blocks is recorded as one such turn per block (and a user turn for any
// text after them).
type Message struct {
	Role string
	Text string
	// ToolCalls are the calls an assistant turn made.
	ToolCalls []RecordedCall
	// ToolCallID names the call a "tool" turn answers.
	ToolCallID string
}

// RecordedCall is a tool call an assistant turn of a request carried.
type RecordedCall struct {
	ID        string
	Name      string
	Arguments json.RawMessage // as sent (OpenAI sends a string of JSON; it is kept as its text)
}

// Recorded is one request the server received.
type Recorded struct {
	Time     time.Time // arrival
	Method   string
	Path     string
	Provider string // "openai" or "anthropic"; "" for other paths
	Model    string
	// System is the system prompt: OpenAI system messages joined with "\n",
	// Anthropic system blocks concatenated.
	System string
	// Messages are the turns after the system prompt, text parts joined with "\n".
	Messages []Message
	// Tools names the tools the request offered for the model to call, in
	// order (Anthropic's tool for a structured answer is not among them:
	// it is Schema and SchemaName). Empty when it offered none.
	Tools []string
	// ToolResults is how many tool results the request carried.
	ToolResults int
	// Schema is the requested JSON Schema: OpenAI's response_format schema or
	// the input_schema of the tool Anthropic was forced to call.
	Schema     json.RawMessage
	SchemaName string // the json_schema name or the forced tool's name
	Strict     bool   // OpenAI json_schema.strict
	// Temperature and MaxTokens as sent (MaxTokens 0 when absent).
	Temperature *float64
	MaxTokens   int
	Stream      bool
	// IncludeUsage is OpenAI's stream_options.include_usage.
	IncludeUsage bool
	// CacheControlBlocks counts Anthropic blocks carrying cache_control.
	CacheControlBlocks int
	Header             http.Header
	Body               []byte
	// Fault is the fault injected, "" when none.
	Fault FaultKind
	// Status is the HTTP status returned (0 while the request is in flight).
	Status int
}

// LastUser returns the text of the last user message, or "".
func (r *Recorded) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Text
		}
	}
	return ""
}

// Round is the round of a tool loop the request belongs to: one more than
// the assistant turns with tool calls it carries.
func (r *Recorded) Round() int {
	n := 1
	for _, m := range r.Messages {
		if len(m.ToolCalls) > 0 {
			n++
		}
	}
	return n
}

// afterToolResult reports whether the request's last turn is a tool result.
func (r *Recorded) afterToolResult() bool {
	return len(r.Messages) > 0 && r.Messages[len(r.Messages)-1].Role == "tool"
}

// Server is a running fake model server. Its methods are safe for concurrent use.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	url  string
	done chan struct{}

	mu       sync.Mutex // guards the fields below
	closed   bool
	cfg      *compiled
	records  []*Recorded
	seq      int   // requests that reached the fault stage since SetConfig
	hits     []int // matches per rule since SetConfig
	rng      *rand.Rand
	quotaAt  time.Time
	quotaN   int
	handlers sync.WaitGroup

	cacheMu sync.Mutex
	cache   map[uint64]time.Time // prefix hash -> readable from
	seed    maphash.Seed

	inflight    atomic.Int64
	maxInflight atomic.Int64
	ids         atomic.Int64
	count       atomic.Int64
	conns       atomic.Int64 // connections accepted
}

// compiled is a Config prepared for serving.
type compiled struct {
	Config
	models   map[string]bool
	ruleJSON [][]byte // marshalled Rule.JSON
}

func compile(cfg Config) *compiled {
	if err := cfg.Validate(); err != nil {
		panic("llmtest: invalid config: " + err.Error())
	}
	// The caller keeps its slices; the server works on copies.
	cfg.Rules = slices.Clone(cfg.Rules)
	cfg.Models = slices.Clone(cfg.Models)
	cfg.Faults.Kinds = slices.Clone(cfg.Faults.Kinds)
	cfg.Faults.Sequence = slices.Clone(cfg.Faults.Sequence)
	c := &compiled{Config: cfg}
	if len(cfg.Models) > 0 {
		c.models = make(map[string]bool, len(cfg.Models))
		for _, m := range cfg.Models {
			c.models[m] = true
		}
	}
	c.ruleJSON = make([][]byte, len(cfg.Rules))
	for i, r := range cfg.Rules {
		if r.JSON != nil {
			c.ruleJSON[i], _ = marshalJSON(r.JSON)
		}
	}
	if c.Faults.RetryAfter == 0 {
		c.Faults.RetryAfter = 1
	}
	return c
}

// NewServer starts a server on 127.0.0.1 at a free port. It panics if it
// cannot listen or if cfg is invalid (see Config.Validate).
func NewServer(cfg Config) *Server {
	s, err := Listen("127.0.0.1:0", cfg)
	if err != nil {
		panic("llmtest: " + err.Error())
	}
	return s
}

// Listen starts a server on addr. It panics if cfg is invalid.
func Listen(addr string, cfg Config) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{
		ln:    ln,
		url:   "http://" + ln.Addr().String(),
		done:  make(chan struct{}),
		cache: map[uint64]time.Time{},
		seed:  maphash.MakeSeed(),
	}
	s.setConfig(cfg)
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				s.conns.Add(1)
			}
		},
	}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL is the server's root, http://127.0.0.1:PORT.
func (s *Server) URL() string { return s.url }

// OpenAIBaseURL is the value for OPENAI_BASE_URL.
func (s *Server) OpenAIBaseURL() string { return s.url + "/v1" }

// AnthropicBaseURL is the value for ANTHROPIC_BASE_URL.
func (s *Server) AnthropicBaseURL() string { return s.url }

// Connections is the number of connections the server has accepted,
// whether or not a request came on them.
func (s *Server) Connections() int { return int(s.conns.Load()) }

// Handler returns the server's HTTP handler, for mounting elsewhere.
func (s *Server) Handler() http.Handler { return s }

// Close stops the server, releases hanging requests and waits for the
// handlers to return.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	close(s.done)
	_ = s.srv.Close()
	s.handlers.Wait()
}

// SetConfig replaces the configuration. Rule match counts, the fault
// sequence position and the quota window start afresh; the prefix cache and
// the recorded requests are kept. It panics if cfg is invalid.
func (s *Server) SetConfig(cfg Config) { s.setConfig(cfg) }

func (s *Server) setConfig(cfg Config) {
	c := compile(cfg)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg = c
	s.seq = 0
	s.hits = make([]int, len(cfg.Rules))
	s.rng = rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	s.quotaAt, s.quotaN = time.Time{}, 0
}

// Requests returns a copy of every request received, in arrival order (only
// the most recent Config.RecordLimit when that is set).
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	recs := s.records
	if l := s.cfg.RecordLimit; l > 0 && len(recs) > l {
		recs = recs[len(recs)-l:]
	}
	out := make([]Recorded, len(recs))
	for i, r := range recs {
		out[i] = *r
	}
	// Records are appended once the body is read; order them by arrival.
	slices.SortStableFunc(out, func(a, b Recorded) int { return a.Time.Compare(b.Time) })
	return out
}

// Count is the number of requests received.
func (s *Server) Count() int { return int(s.count.Load()) }

// appendLocked records rec, trimming to the record limit. s.mu must be held.
func (s *Server) appendLocked(rec *Recorded) {
	s.records = append(s.records, rec)
	if l := s.cfg.RecordLimit; l > 0 && len(s.records) >= 2*l {
		n := copy(s.records, s.records[len(s.records)-l:])
		clear(s.records[n:])
		s.records = s.records[:n]
	}
}

// MaxConcurrent is the highest number of requests that were in flight at once.
func (s *Server) MaxConcurrent() int { return int(s.maxInflight.Load()) }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.count.Add(1)
	n := s.inflight.Add(1)
	lw := &leavingWriter{ResponseWriter: w}
	lw.leave = func() { lw.once.Do(func() { s.inflight.Add(-1) }) }
	defer lw.leave()
	w = lw
	for {
		m := s.maxInflight.Load()
		if n <= m || s.maxInflight.CompareAndSwap(m, n) {
			break
		}
	}

	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && (path == "/v1/chat/completions" || path == "/chat/completions"):
		s.serveCall(w, r, OpenAI)
	case r.Method == http.MethodPost && path == "/v1/messages":
		s.serveCall(w, r, Anthropic)
	case r.Method == http.MethodGet && (path == "/v1/models" || path == "/models"):
		s.serveModels(w, r)
	default:
		s.record(&Recorded{Time: time.Now(), Method: r.Method, Path: path, Header: r.Header.Clone(), Status: http.StatusNotFound})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":{"message":"llmtest: no such endpoint: `+jsonEscape(r.Method+" "+path)+`","type":"invalid_request_error"}}`)
	}
}

// record appends rec.
func (s *Server) record(rec *Recorded) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appendLocked(rec)
}

func (s *Server) finish(rec *Recorded, status int, fault FaultKind) {
	s.mu.Lock()
	rec.Status = status
	rec.Fault = fault
	s.mu.Unlock()
}

func (s *Server) serveModels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	cfg := s.cfg
	s.mu.Unlock()
	anthropic := r.Header.Get("anthropic-version") != "" || r.Header.Get("x-api-key") != ""
	provider := OpenAI
	if anthropic {
		provider = Anthropic
	}
	rec := &Recorded{Time: time.Now(), Method: r.Method, Path: r.URL.Path, Provider: provider, Header: r.Header.Clone()}
	s.record(rec)
	d := dialectFor(provider)
	id := s.ids.Add(1)
	if !authorized(cfg, provider, r.Header) {
		s.finish(rec, http.StatusUnauthorized, "")
		d.writeError(w, id, http.StatusUnauthorized, errAuth, "")
		return
	}
	models := cfg.Models
	if len(models) == 0 {
		models = []string{"llmtest"}
	}
	var body any
	if anthropic {
		data := make([]map[string]any, len(models))
		for i, m := range models {
			data[i] = map[string]any{"type": "model", "id": m, "display_name": m, "created_at": "2024-01-01T00:00:00Z"}
		}
		body = map[string]any{"data": data, "has_more": false, "first_id": models[0], "last_id": models[len(models)-1]}
	} else {
		data := make([]map[string]any, len(models))
		for i, m := range models {
			data[i] = map[string]any{"id": m, "object": "model", "created": 0, "owned_by": "llmtest"}
		}
		body = map[string]any{"object": "list", "data": data}
	}
	s.finish(rec, http.StatusOK, "")
	d.setRequestID(w.Header(), id)
	writeJSON(w, http.StatusOK, body)
}

// call is a parsed model call.
type call struct {
	rec      *Recorded
	id       int64
	model    string
	jsonMode bool   // structured output without a schema (OpenAI json_object)
	toolName string // Anthropic: the forced tool
	// prompt is what a prefix cache sees; breaks are the ends of the blocks
	// that carry an Anthropic cache_control breakpoint, ends the ends of
	// all of its blocks (Anthropic's cache looks back over them).
	prompt []byte
	breaks []int
	ends   []int
}

func (c *call) structured() bool { return c.rec.Schema != nil || c.jsonMode || c.toolName != "" }

// answer is what the server sends back for a call.
type answer struct {
	text   string // text, or the JSON text of a structured answer
	isJSON bool   // text is the structured answer
	// calls, when set, are tool calls, sent after the text.
	calls  []toolCall
	finish string // "stop", "length" or "tool_calls"
	usage  usage
}

// toolCall is a tool call of an answer, its arguments a JSON object.
type toolCall struct {
	name string
	args []byte
}

type usage struct {
	input, output, cacheRead, cacheWrite int
}

func (s *Server) serveCall(w http.ResponseWriter, r *http.Request, provider string) {
	arrival := time.Now()
	d := dialectFor(provider)
	id := s.ids.Add(1)
	rec := &Recorded{Time: arrival, Method: r.Method, Path: r.URL.Path, Provider: provider, Header: r.Header.Clone()}
	body, readErr := readBody(w, r)
	rec.Body = body
	var c *call
	var parseErr error
	if readErr == nil {
		// Parse before rec is shared: Requests reads it under s.mu.
		c, parseErr = d.parse(body, rec)
	}

	s.mu.Lock()
	s.appendLocked(rec)
	cfg := s.cfg
	if s.closed {
		s.mu.Unlock()
		panic(http.ErrAbortHandler)
	}
	s.handlers.Add(1)
	s.mu.Unlock()
	defer s.handlers.Done()

	fail := func(status int, kind errKind, msg string, fault FaultKind) {
		s.finish(rec, status, fault)
		d.writeError(w, id, status, kind, msg)
	}
	if readErr != nil {
		fail(http.StatusBadRequest, errInvalid, "could not read the request body: "+readErr.Error(), "")
		return
	}
	if parseErr != nil {
		fail(http.StatusBadRequest, errInvalid, parseErr.Error(), "")
		return
	}
	c.id = id

	if !authorized(cfg, provider, r.Header) {
		fail(http.StatusUnauthorized, errAuth, "", "")
		return
	}
	if cfg.models != nil && !cfg.models[c.model] {
		fail(http.StatusNotFound, errModel, c.model, "")
		return
	}

	// Quota, fault sequence and rate, all under one short lock.
	var fault FaultKind
	var retryAfter int
	var retryAfterMs int64
	var jitter time.Duration
	s.mu.Lock()
	if q := cfg.Quota; q.Requests > 0 {
		if s.quotaAt.IsZero() || arrival.Sub(s.quotaAt) >= q.Window {
			s.quotaAt, s.quotaN = arrival, 0
		}
		if s.quotaN >= q.Requests {
			left := q.Window - arrival.Sub(s.quotaAt)
			retryAfterMs = int64((left + time.Millisecond - 1) / time.Millisecond)
			retryAfter = int((left + time.Second - 1) / time.Second)
			if retryAfter < 1 {
				retryAfter = 1
			}
		} else {
			s.quotaN++
		}
	}
	if retryAfter == 0 {
		if s.seq < len(cfg.Faults.Sequence) {
			fault = normalizeFault(cfg.Faults.Sequence[s.seq])
		} else if cfg.Faults.Rate > 0 && s.rng.Float64() < cfg.Faults.Rate {
			if len(cfg.Faults.Kinds) == 0 {
				fault = Fault500
			} else {
				fault = normalizeFault(cfg.Faults.Kinds[s.rng.IntN(len(cfg.Faults.Kinds))])
			}
		}
		s.seq++
		if cfg.LatencyJitter > 0 {
			jitter = time.Duration(s.rng.Int64N(int64(cfg.LatencyJitter) + 1))
		}
	}
	s.mu.Unlock()
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(max(1, retryAfterMs), 10))
		fail(http.StatusTooManyRequests, errRate, "", "")
		return
	}

	// The answer: an injected fault, a rule, or the default.
	latency := cfg.Latency + jitter
	var rep Reply
	if fault == "" {
		var matched bool
		rep, matched = s.match(cfg, rec)
		if matched && rep.Latency > 0 {
			latency = rep.Latency
		}
		fault = normalizeFault(rep.Fault)
	}
	if fault != "" && fault != FaultHang && fault != FaultSchemaViolation {
		// Errors do not wait for the model.
		switch fault {
		case Fault429:
			w.Header().Set("Retry-After", strconv.Itoa(cfg.Faults.RetryAfter))
			if ms := cfg.Faults.RetryAfterMs; ms > 0 {
				w.Header().Set("Retry-After-Ms", strconv.Itoa(ms))
			}
			fail(http.StatusTooManyRequests, errRate, "", fault)
			return
		case Fault500:
			fail(http.StatusInternalServerError, errServer, "", fault)
			return
		case Fault503:
			fail(http.StatusServiceUnavailable, errOverloaded, "", fault)
			return
		case Fault401:
			fail(http.StatusUnauthorized, errAuth, "", fault)
			return
		case Fault400:
			fail(http.StatusBadRequest, errInvalid, "this model does not support tools", fault)
			return
		}
	}
	if fault == FaultHang {
		s.finish(rec, 0, fault)
		t := time.NewTimer(hangCap)
		defer t.Stop()
		select {
		case <-r.Context().Done():
			s.abort(rec, fault) // the client went away
		case <-s.done:
			s.abort(rec, fault)
		case <-t.C:
			fail(http.StatusGatewayTimeout, errServer, "llmtest: hang fault gave up after "+hangCap.String(), fault)
		}
		return
	}

	// Latency counts from the request's arrival: reading and parsing it is
	// part of the simulated model's time, as it is at a real provider. A
	// streamed answer starts at its first token and ends at the latency;
	// one that does not stream (or breaks) is sent whole at the latency.
	paced := c.rec.Stream && fault != FaultTruncate && fault != FaultInvalidJSON
	start := latency
	if paced {
		start = firstToken(cfg, latency)
	}
	if !s.sleep(r.Context(), start-time.Since(arrival)) {
		s.abort(rec, fault)
	}

	a, err := s.compose(cfg, c, rep, fault, arrival)
	if err != nil {
		fail(http.StatusInternalServerError, errServer, "llmtest: "+err.Error(), fault)
		return
	}
	var out []byte
	head := 0
	if c.rec.Stream {
		out, head = d.stream(c, a)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
	} else {
		out = d.body(c, a)
		w.Header().Set("Content-Type", "application/json")
	}
	d.setRequestID(w.Header(), id)
	s.finish(rec, http.StatusOK, fault)
	if paced {
		w.WriteHeader(http.StatusOK)
		if head > 0 && start < latency {
			if _, err := w.Write(out[:head]); err != nil {
				return
			}
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			if !s.sleep(r.Context(), latency-time.Since(arrival)) {
				s.abort(rec, fault)
			}
			out = out[head:]
		}
		writeEvents(w, out)
		return
	}

	switch fault {
	case FaultTruncate:
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(out[:len(out)/2])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		panic(http.ErrAbortHandler)
	case FaultInvalidJSON:
		out = d.invalid(c.rec.Stream)
	}
	w.WriteHeader(http.StatusOK)
	if c.rec.Stream {
		writeEvents(w, out)
		return
	}
	leaving(w)
	_, _ = w.Write(out)
}

// firstToken is when a streamed answer of the given latency starts.
func firstToken(cfg *compiled, latency time.Duration) time.Duration {
	if cfg.FirstToken > 0 {
		return min(cfg.FirstToken, latency)
	}
	return latency / 10
}

// leavingWriter ends a request's time "in flight" just before its last
// bytes are written: a client that has read the whole answer may send its
// next request at once, and it must not be counted as overlapping this one.
type leavingWriter struct {
	http.ResponseWriter
	once  sync.Once
	leave func()
}

// Flush passes flushes through for streaming.
func (l *leavingWriter) Flush() {
	if f, ok := l.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// leaving marks w's request as no longer in flight.
func leaving(w http.ResponseWriter) {
	if l, ok := w.(*leavingWriter); ok {
		l.leave()
	}
}

// readBody reads a request body of at most maxBody bytes, in one
// allocation when the client sent its length.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	var buf bytes.Buffer
	if n := r.ContentLength; n > 0 && n <= maxBody {
		buf.Grow(int(n) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxBody))
	return buf.Bytes(), err
}

// writeEvents writes an SSE body in two writes: every event but the last,
// then the last. The answer is complete before it is sent, so writing each
// event on its own would only cost the client and the server wake-ups.
func writeEvents(w http.ResponseWriter, out []byte) {
	f, _ := w.(http.Flusher)
	body := bytes.TrimRight(out, "\n")
	cut := bytes.LastIndex(body, []byte("\n\n"))
	if cut < 0 {
		cut = 0
	} else {
		cut += 2
	}
	if cut > 0 {
		if _, err := w.Write(out[:cut]); err != nil {
			return
		}
		if f != nil {
			f.Flush()
		}
	}
	leaving(w)
	if _, err := w.Write(out[cut:]); err != nil {
		return
	}
	if f != nil {
		f.Flush()
	}
}

// abort records status 499 (the request ended without an answer) and drops
// the connection.
func (s *Server) abort(rec *Recorded, fault FaultKind) {
	s.finish(rec, 499, fault)
	panic(http.ErrAbortHandler)
}

// sleep waits d; it reports false if the client went away or the server closed.
func (s *Server) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		return false
	}
}

// matches says whether a request for model, with this system prompt and
// last user message (read only when the rule names one), falls under r's
// Model, System and User.
func (r *Rule) matches(model, system string, user func() string) bool {
	return (r.Model == "" || r.Model == model) && strings.Contains(system, r.System) && (r.User == "" || strings.Contains(user(), r.User))
}

// inLoop says whether rec meets r's tool-loop conditions: a rule with
// ToolCalls answers only a request that offers tools and, without Round,
// only one whose last turn is not a tool result; a rule with Round only
// that round.
func (r *Rule) inLoop(rec *Recorded) bool {
	if len(r.ToolCalls) > 0 && (len(rec.Tools) == 0 || r.Round == 0 && rec.afterToolResult()) {
		return false
	}
	return r.Round == 0 || r.Round == rec.Round()
}

// match finds the first rule that matches rec and returns its reply.
func (s *Server) match(cfg *compiled, rec *Recorded) (Reply, bool) {
	var lastUser string
	userDone := false
	for i := range cfg.Rules {
		r := &cfg.Rules[i]
		if !r.matches(rec.Model, rec.System, func() string {
			if !userDone {
				lastUser, userDone = rec.LastUser(), true
			}
			return lastUser
		}) || !r.inLoop(rec) {
			continue
		}
		if r.Times > 0 {
			s.mu.Lock()
			ok := s.cfg == cfg && s.hits[i] < r.Times
			if ok {
				s.hits[i]++
			}
			s.mu.Unlock()
			if !ok {
				continue
			}
		}
		if r.Respond != nil {
			s.mu.Lock()
			cp := *rec
			s.mu.Unlock()
			rep := r.Respond(&cp)
			if rep.Latency == 0 {
				rep.Latency = r.Latency
			}
			return rep, true
		}
		rep := Reply{Text: r.Reply, ToolCalls: r.ToolCalls, Fault: r.Fault, Latency: r.Latency}
		if cfg.ruleJSON[i] != nil {
			rep.JSON = json.RawMessage(cfg.ruleJSON[i])
		}
		return rep, true
	}
	return Reply{}, false
}

// compose builds the answer text and usage of a call.
func (s *Server) compose(cfg *compiled, c *call, rep Reply, fault FaultKind, arrival time.Time) (answer, error) {
	var a answer
	switch {
	case fault == FaultSchemaViolation:
		a.isJSON = true
		if c.rec.Schema != nil {
			a.text = string(Violation(c.rec.Schema))
		} else {
			a.text = `[]`
		}
	case len(rep.ToolCalls) > 0:
		if len(c.rec.Tools) == 0 {
			return a, errors.New("a reply with tool calls to a request that offers no tools")
		}
		a.text = rep.Text
		for i, tc := range rep.ToolCalls {
			args, err := toolArguments(tc.Arguments)
			if err != nil {
				return a, fmt.Errorf("reply tool call %d: arguments %w", i, err)
			}
			a.calls = append(a.calls, toolCall{name: tc.Name, args: args})
		}
	case rep.JSON != nil:
		b, err := marshalJSON(rep.JSON)
		if err != nil {
			return a, fmt.Errorf("reply JSON: %w", err)
		}
		a.text, a.isJSON = string(b), true
	case rep.Text != "":
		a.text = rep.Text
		a.isJSON = c.structured() && json.Valid([]byte(rep.Text))
	case c.rec.Schema != nil:
		b, err := Instance(c.rec.Schema)
		if err != nil {
			return a, fmt.Errorf("cannot read the request's schema: %w", err)
		}
		a.text, a.isJSON = string(b), true
	case c.structured():
		a.text, a.isJSON = `{"answer":"ok"}`, true
	default:
		a.text = "ok"
	}

	if a.isJSON && c.structured() && (cfg.ExtraKey || cfg.WrapJSON) {
		a.text, a.isJSON = sloppy(a.text, cfg.ExtraKey, cfg.WrapJSON), !cfg.WrapJSON
	}
	a.finish = "stop"
	out := len(a.text)
	switch {
	case a.calls != nil:
		// Tool calls are sent whole: the output limit is for answers.
		a.finish = "tool_calls"
		for _, tc := range a.calls {
			out += len(tc.name) + len(tc.args)
		}
	case c.rec.MaxTokens > 0 && tokens(len(a.text)) > c.rec.MaxTokens:
		a.text = cutRunes(a.text, c.rec.MaxTokens*4)
		a.finish = "length"
		out = len(a.text)
	}
	a.usage.output = tokens(out)
	a.usage.input = tokens(len(c.prompt))
	if cfg.PrefixCache {
		// The answer starts now: the call reads what was written before it
		// arrived, and what it writes is readable from now on.
		readable := time.Now().Add(cfg.CacheWarmup)
		if c.rec.Provider == Anthropic {
			a.usage.cacheRead, a.usage.cacheWrite = s.explicitCache(c, arrival, readable)
			a.usage.input -= a.usage.cacheRead + a.usage.cacheWrite
		} else {
			a.usage.cacheRead = s.automaticCache(c, arrival, readable)
		}
	}
	return a, nil
}

// sloppyKey is the key ExtraKey adds to every object of a structured
// answer.
const sloppyKey = "model_note"

// sloppy answers as models without enforced output do: an extra key in
// every object, and the JSON wrapped in prose and a fenced block. Numbers
// keep the form they had.
func sloppy(text string, extra, wrap bool) string {
	if extra {
		var v any
		d := json.NewDecoder(strings.NewReader(text))
		d.UseNumber()
		if d.Decode(&v) == nil {
			var add func(any)
			add = func(x any) {
				switch y := x.(type) {
				case map[string]any:
					for _, e := range y {
						add(e)
					}
					y[sloppyKey] = "added by a model that does not enforce the schema"
				case []any:
					for _, e := range y {
						add(e)
					}
				}
			}
			add(v)
			if b, err := json.Marshal(v); err == nil {
				text = string(b)
			}
		}
	}
	if wrap {
		text = "Here is the answer you asked for:\n\n```json\n" + text + "\n```\n\nI hope this helps."
	}
	return text
}

// cutRunes cuts s to at most n bytes without splitting a UTF-8 sequence.
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// tokens estimates the tokens of n bytes: one per four, at least one.
func tokens(n int) int {
	if n <= 0 {
		return 1
	}
	return (n + 3) / 4
}

// splitPieces cuts s into at most n pieces on rune boundaries.
func splitPieces(s string, n int) []string {
	if s == "" {
		return nil
	}
	size := (len(s) + n - 1) / n
	if size < 1 {
		size = 1
	}
	out := make([]string, 0, n)
	for len(s) > 0 {
		k := size
		if k >= len(s) {
			out = append(out, s)
			break
		}
		for k < len(s) && s[k]&0xC0 == 0x80 {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"message":"llmtest: ` + jsonEscape(err.Error()) + `"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	leaving(w)
	_, _ = w.Write(b)
}

// jsonEscape returns s as the inside of a JSON string.
func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// authorized checks the API key the request carries.
func authorized(cfg *compiled, provider string, h http.Header) bool {
	if cfg.APIKey == "" {
		return true
	}
	bearer := strings.TrimSpace(strings.TrimPrefix(h.Get("Authorization"), "Bearer "))
	if provider == Anthropic {
		// The API takes x-api-key; the official Go SDK's option.WithAPIKey sends a
		// bearer token, so both are accepted.
		return h.Get("X-Api-Key") == cfg.APIKey || bearer == cfg.APIKey
	}
	return bearer == cfg.APIKey
}

var errNoMessages = errors.New("messages: at least one message is required")
