// Package stack assembles the provider stack a sot run talks to: a backend
// for every configured provider, each with its own retries and limits, behind
// the run-wide journal, cache, schema check, secret masking and meter.
package stack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/anthropic"
	"github.com/sotlabs/sot/llm/command"
	"github.com/sotlabs/sot/llm/middleware"
	"github.com/sotlabs/sot/llm/openai"
)

// Options are choices of one run that are not configuration.
type Options struct {
	// JournalPath, when set, journals every finished call there and replays
	// the calls already recorded.
	JournalPath string
	// NoCache turns the response cache off even if config enables it.
	NoCache bool
	// Retries overrides the configured number of retries when > 0.
	Retries int
	// Timeout overrides the configured per-attempt timeout when > 0.
	Timeout time.Duration
	// HTTPClient is used by the HTTP backends (default: a plain client).
	HTTPClient *http.Client
	// Getenv reads API keys (default: the process environment via config).
	Getenv func(string) string
	Logger *slog.Logger
	// Note tells the user something worth knowing once, in sot's own
	// voice ("sot: note: ..."): a model with no known price. Nil logs it.
	Note func(string)
	// Backend, when set, answers every call in place of the configured
	// providers: a durable executor's remote calls (engine/temporal.Remote),
	// made by workers with their own keys, retries and limits. The meter,
	// masking, schema check, cache and journal stay in this stack.
	Backend llm.Provider
	// JournalBefore, when set, keeps only the run journal's records made
	// before it (see middleware.OpenJournalBefore): a run that is a
	// durable workflow's code passes the workflow's start, since its own
	// calls come again from the workflow's history when its code runs
	// again.
	JournalBefore time.Time
}

// Stack is a ready provider and the parts a run reports on.
type Stack struct {
	llm.Provider
	Meter   *middleware.Meter
	Cache   *middleware.Cache   // nil when caching is off
	Journal *middleware.Journal // nil without JournalPath
	// Backend is Options.Backend: nil when the configured providers answer.
	Backend llm.Provider

	journalBefore time.Time

	retries retryCounter
}

// Retries counts the retries a stack made, by what went wrong with the
// attempt before each one. Rate limits are waited out without using up
// the configured retries, so RateLimited may exceed them.
type Retries struct {
	RateLimited int // the provider answered 429
	Unavailable int // 5xx, 408, 409, or the provider could not be reached
	TimedOut    int // no answer within the time limit of an attempt
	Unreadable  int // an answer that could not be read
}

// Add returns the sum of two counts (of two stacks of one run, say).
func (r Retries) Add(o Retries) Retries {
	return Retries{r.RateLimited + o.RateLimited, r.Unavailable + o.Unavailable, r.TimedOut + o.TimedOut, r.Unreadable + o.Unreadable}
}

// Total is the number of retries of every kind.
func (r Retries) Total() int { return r.RateLimited + r.Unavailable + r.TimedOut + r.Unreadable }

// String says how many retries there were and why, for the end of a run:
// "7 retries: 5 after rate limits (429), 2 after server errors". It is ""
// when there were none.
func (r Retries) String() string {
	if r.Total() == 0 {
		return ""
	}
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d after %s", n, what))
		}
	}
	add(r.RateLimited, "rate limits (429)")
	add(r.Unavailable, "server or connection errors")
	add(r.TimedOut, "timeouts")
	add(r.Unreadable, "unreadable answers")
	noun := "retries"
	if r.Total() == 1 {
		noun = "retry"
	}
	return fmt.Sprintf("%d %s: %s", r.Total(), noun, strings.Join(parts, ", "))
}

// Retries returns the retries the stack's calls needed so far.
func (s *Stack) Retries() Retries {
	return Retries{
		RateLimited: int(s.retries.rateLimited.Load()),
		Unavailable: int(s.retries.unavailable.Load()),
		TimedOut:    int(s.retries.timedOut.Load()),
		Unreadable:  int(s.retries.unreadable.Load()),
	}
}

// retryCounter counts retries as they happen, from any goroutine.
type retryCounter struct {
	rateLimited, unavailable, timedOut, unreadable atomic.Int64
}

// count records one retry after err.
func (c *retryCounter) count(err error) {
	switch {
	case errors.Is(err, llm.ErrRateLimited):
		c.rateLimited.Add(1)
	case errors.Is(err, llm.ErrTimeout):
		c.timedOut.Add(1)
	case errors.Is(err, llm.ErrBadResponse):
		c.unreadable.Add(1)
	default:
		c.unavailable.Add(1)
	}
}

// Close closes the journal.
func (s *Stack) Close() error {
	if s.Journal != nil {
		return s.Journal.Close()
	}
	return nil
}

// JournalBefore is Options.JournalBefore: run.Begin opens the run's
// journal keeping only the records made before it.
func (s *Stack) JournalBefore() time.Time { return s.journalBefore }

// UseJournal puts j in front of a stack built without JournalPath, so every
// finished call is recorded there and recorded calls are replayed.
func (s *Stack) UseJournal(j *middleware.Journal) {
	s.Journal = j
	s.Provider = j.Wrap(s.Provider)
}

// New builds the stack for cfg.
func New(cfg *config.Config, opts Options) (*Stack, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Getenv == nil {
		return nil, fmt.Errorf("stack: Options.Getenv is required")
	}
	budget := middleware.Budget{MaxCalls: cfg.Budget.MaxCalls, MaxTokens: cfg.Budget.MaxTokens, MaxCost: cfg.Budget.MaxCost}
	if err := budget.Validate(); err != nil {
		return nil, err
	}
	s := &Stack{Meter: middleware.NewMeter(budget, llm.DefaultPrices().Merge(cfg.Prices), opts.Logger), Backend: opts.Backend, journalBefore: opts.JournalBefore}
	s.Meter.Note = opts.Note
	var answers llm.Provider = opts.Backend
	if answers == nil {
		router := llm.Router{}
		for _, name := range cfg.ProviderNames() {
			router[name] = backend(cfg, name, opts, s.retries.count)
		}
		answers = router
	}
	var p llm.Provider = s.Meter.Wrap(answers)
	// Answers are masked below the schema check, which then validates what
	// is passed on, and below the cache and the journal, which never hold
	// a secret a model quoted back.
	p = middleware.Redact(p)
	p = middleware.CheckSchema(p)
	if !cfg.Cache.Disabled && !opts.NoCache {
		dir := cfg.Cache.Dir
		if dir == "" {
			var err error
			if dir, err = middleware.DefaultCacheDir(); err != nil {
				return nil, err
			}
		}
		c, err := middleware.NewCache(dir)
		if err != nil {
			return nil, err
		}
		s.Cache = c
		p = c.Wrap(p)
	}
	if opts.JournalPath != "" {
		j, err := middleware.OpenJournalBefore(opts.JournalPath, opts.JournalBefore)
		if err != nil {
			return nil, err
		}
		s.Provider = p
		s.UseJournal(j)
		return s, nil
	}
	s.Provider = p
	return s, nil
}

// backend builds one provider wrapped in its retries and limits, reporting
// every retry to onRetry. A provider that cannot be built (a missing key, a
// bad URL) becomes one that fails every call with that error, so unused
// providers never block a run.
func backend(cfg *config.Config, name string, opts Options, onRetry func(error)) llm.Provider {
	pc := cfg.Providers[name]
	key := apiKey(pc, opts.Getenv)
	llm.RegisterSecret(key)
	var (
		p   llm.Provider
		err error
	)
	// The variables named in error messages: the provider's own for the
	// built-ins, the config keys for providers the user configured.
	keyEnv, urlEnv := pc.APIKeyEnv, "providers."+name+".base_url"
	if keyEnv == "" {
		keyEnv = "providers." + name + ".api_key_env"
	}
	switch name {
	case llm.ProviderOpenAI:
		urlEnv = "OPENAI_BASE_URL"
	case llm.ProviderAnthropic:
		urlEnv = "ANTHROPIC_BASE_URL"
	case llm.ProviderOllama:
		urlEnv = "OLLAMA_HOST"
	}
	switch cfg.ProviderType(name) {
	case llm.ProviderOpenAI:
		p, err = openai.New(openai.Config{Name: name, BaseURL: pc.BaseURL, APIKey: key, RequireKey: pc.BaseURL == "", HTTPClient: opts.HTTPClient, APIKeyEnv: keyEnv, BaseURLEnv: urlEnv})
	case llm.ProviderOllama:
		base := strings.TrimRight(pc.BaseURL, "/")
		if !strings.HasSuffix(base, "/v1") {
			base += "/v1"
		}
		p, err = openai.New(openai.Config{Name: name, BaseURL: base, APIKey: key, HTTPClient: opts.HTTPClient, APIKeyEnv: keyEnv, BaseURLEnv: urlEnv})
	case llm.ProviderAnthropic:
		p, err = anthropic.New(anthropic.Config{Name: name, BaseURL: pc.BaseURL, APIKey: key, RequireKey: pc.BaseURL == "", HTTPClient: opts.HTTPClient, APIKeyEnv: keyEnv, BaseURLEnv: urlEnv})
	case llm.ProviderCommand:
		p = command.New(command.Config{Name: name, Program: pc.Program, Timeout: time.Duration(pc.Timeout), PassEnv: pc.Env})
	default:
		err = &llm.Error{Provider: name, Kind: llm.ErrConfig, Message: "unknown provider type " + pc.Type}
	}
	if err != nil {
		return llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) { return nil, err })
	}
	conc := pc.Concurrency
	if conc == 0 {
		conc = cfg.Concurrency
	}
	attempts := cfg.Retries + 1 // the first attempt, then the retries
	if opts.Retries > 0 {
		attempts = opts.Retries + 1
	}
	timeout := time.Duration(cfg.Timeout)
	if pc.Timeout > 0 {
		timeout = time.Duration(pc.Timeout)
	}
	if opts.Timeout > 0 {
		timeout = opts.Timeout
	}
	return middleware.Retry(middleware.Limit(p, conc, pc.RPM), middleware.RetryOptions{
		MaxAttempts: attempts, AttemptTimeout: timeout, Logger: opts.Logger, OnRetry: onRetry,
	})
}

// RegisterKeys registers the key of every configured provider as a secret,
// so that it is masked wherever it appears: in the material before any
// prompt is composed, in answers and in everything printed or written. The
// stack registers the keys it uses as it is built; a caller that reads
// material before that (a review gathers its diff first) calls this first.
func RegisterKeys(cfg *config.Config, getenv func(string) string) {
	for _, name := range cfg.ProviderNames() {
		llm.RegisterSecret(apiKey(cfg.Providers[name], getenv))
	}
}

// apiKey is a provider's key: written in the configuration, or read from
// the variable it names.
func apiKey(pc config.Provider, getenv func(string) string) string {
	if pc.APIKey == "" && pc.APIKeyEnv != "" {
		return getenv(pc.APIKeyEnv)
	}
	return pc.APIKey
}

// MissingKey reports, without a request, whether the provider of model
// needs an API key it does not have: an OpenAI or Anthropic provider at its
// public endpoint with no key. The error wraps llm.ErrMissingKey and names
// the variable to set. Under the temporal executor the workers make the
// calls with their own keys, so none is missing here.
func MissingKey(cfg *config.Config, getenv func(string) string, model string) error {
	ref, err := cfg.ResolveModel(model)
	if err != nil {
		return err
	}
	if cfg.Executor.Kind == config.ExecutorTemporal {
		return nil
	}
	pc := cfg.Providers[ref.Provider]
	switch cfg.ProviderType(ref.Provider) {
	case llm.ProviderOpenAI, llm.ProviderAnthropic:
	default:
		return nil
	}
	if pc.BaseURL != "" || strings.TrimSpace(apiKey(pc, getenv)) != "" {
		return nil
	}
	env := pc.APIKeyEnv
	if env == "" {
		env = "providers." + ref.Provider + ".api_key_env"
	}
	return fmt.Errorf("%w for %s: set %s", llm.ErrMissingKey, ref.Provider, env)
}

// Preconnect starts opening the connections the first calls to model (""
// for the default) will go out on, while the run prepares
// (llm.Preconnect), when model's provider is reached over HTTP: one to a
// server that speaks HTTP/2, and as many as the provider's concurrency
// lets go at once, up to maxPreconnections, to one that speaks HTTP/1.1.
// A model that does not resolve opens nothing: the run reports it.
func Preconnect(cfg *config.Config, model string) {
	ref, err := cfg.ResolveModel(model)
	if err != nil {
		return
	}
	pc := cfg.Providers[ref.Provider]
	n := cmp.Or(pc.Concurrency, cfg.Concurrency)
	if n <= 0 || n > maxPreconnections {
		n = maxPreconnections
	}
	base := pc.BaseURL
	switch cfg.ProviderType(ref.Provider) {
	case llm.ProviderOpenAI:
		base = cmp.Or(base, openai.DefaultBaseURL)
	case llm.ProviderAnthropic:
		base = cmp.Or(base, anthropic.DefaultBaseURL)
	case llm.ProviderOllama:
	default:
		return // a program, or no provider sot knows
	}
	llm.Preconnect(base, n)
}

// maxPreconnections is the most connections Preconnect opens to a server
// that speaks HTTP/1.1: the first wave of a question's readings; a larger
// wave dials the rest as it goes.
const maxPreconnections = 8
