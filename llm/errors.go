package llm

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors. Every error a provider returns wraps exactly one of these,
// so callers can branch with errors.Is, except when the caller's context
// ends: then the error wraps context.Canceled or context.DeadlineExceeded
// (and, when a retry was pending, the last provider error too).
var (
	// ErrAuth: the provider rejected the credentials (401, 403).
	ErrAuth = errors.New("authentication failed")
	// ErrMissingKey: no API key is configured for a provider that needs one.
	ErrMissingKey = errors.New("missing API key")
	// ErrRateLimited: the provider asked us to slow down (429).
	ErrRateLimited = errors.New("rate limited")
	// ErrUnavailable: the provider failed or could not be reached (5xx, 408, 409, connection errors).
	ErrUnavailable = errors.New("provider unavailable")
	// ErrTimeout: the call took longer than its time limit.
	ErrTimeout = errors.New("timed out")
	// ErrBadResponse: the provider answered with something that cannot be read
	// (truncated body, invalid JSON, empty answer).
	ErrBadResponse = errors.New("unreadable response")
	// ErrUnknownModel: the provider does not know the model (404).
	ErrUnknownModel = errors.New("unknown model")
	// ErrBadRequest: the provider refused the request as invalid (400, 422).
	ErrBadRequest = errors.New("request rejected")
	// ErrSchema: the answer did not validate against the requested schema.
	ErrSchema = errors.New("answer does not match the schema")
	// ErrBudget: a --max-calls, --max-tokens or --max-cost budget is spent.
	ErrBudget = errors.New("budget exhausted")
	// ErrUnknownProvider: a model reference names no known provider.
	ErrUnknownProvider = errors.New("unknown provider")
	// ErrConfig: the provider's configuration is invalid (for example a bad base URL).
	ErrConfig = errors.New("invalid provider configuration")
)

// Error is a failed call, with what is known about it. It unwraps to one of the
// sentinel errors above. Its message never contains credentials.
type Error struct {
	Provider   string        // "openai", "anthropic", "command", ...
	Model      string        // the model reference, when known
	Status     int           // HTTP status, 0 when there was none
	RetryAfter time.Duration // the provider's Retry-After, 0 when absent
	RequestID  string        // the provider's request id, when given
	Message    string        // a short human explanation
	Kind       error         // one of the sentinel errors
	Err        error         // the underlying cause, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	if e.Model != "" {
		b.WriteString(" (" + e.Model + ")")
	}
	b.WriteString(": ")
	b.WriteString(e.Kind.Error())
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" [request " + e.RequestID + "]")
	}
	return Redact(b.String())
}

// Unwrap returns the sentinel kind and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// KindForStatus maps an HTTP status to a sentinel error.
func KindForStatus(status int) error {
	switch {
	case status == 401 || status == 403:
		return ErrAuth
	case status == 429:
		return ErrRateLimited
	case status == 404:
		return ErrUnknownModel
	case status == 408 || status == 504:
		return ErrTimeout
	case status == 409 || status >= 500:
		return ErrUnavailable
	default:
		return ErrBadRequest
	}
}

// Retryable reports whether a failed call may succeed if sent again:
// rate limits, server errors, timeouts, connection failures and unreadable answers.
func Retryable(err error) bool {
	return errors.Is(err, ErrRateLimited) || errors.Is(err, ErrUnavailable) ||
		errors.Is(err, ErrTimeout) || errors.Is(err, ErrBadResponse)
}

// RetryAfter returns the delay the provider asked for, or 0.
func RetryAfter(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}
