package llm

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ParseBaseURL checks a provider's base URL: an absolute http or https URL
// with a host. An empty string means the provider's default (nil, nil).
// Errors never show credentials embedded in the URL.
func ParseBaseURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("base URL %q does not parse", raw)
	}
	shown := u.Redacted()
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("base URL %q must start with http:// or https://", shown)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("base URL %q has no host", shown)
	}
	return u, nil
}

// NewHTTPClient returns a client that keeps enough idle connections for
// sot's parallel calls. It sets no overall timeout: calls are bounded by
// their contexts.
func NewHTTPClient() *http.Client {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return &http.Client{}
	}
	t = t.Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 64
	// A prompt is tens of kilobytes: write it in one go rather than in
	// 4 KiB pieces (one system call each).
	t.WriteBufferSize = 64 << 10
	t.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	return &http.Client{Transport: t}
}

// SetHTTPFailure fills e from a response with an error status: the status,
// its kind, the Retry-After and a message. A rejected key names keyEnv, the
// variable it came from.
func (e *Error) SetHTTPFailure(resp *http.Response, msg, keyEnv string) {
	e.Status = resp.StatusCode
	e.Kind = KindForStatus(e.Status)
	e.RetryAfter = ParseRetryAfter(resp.Header, time.Now())
	e.Message = Clip(msg)
	if e.Kind == ErrAuth {
		e.Message = fmt.Sprintf("the API key was rejected; check %s", keyEnv)
		if msg != "" {
			e.Message += " (" + Clip(msg) + ")"
		}
	}
}

// SetTransportFailure fills e for a call that failed without an error
// status: a timeout, an answer that could not be read (answered), or a
// connection that never got through.
func (e *Error) SetTransportFailure(err error, answered bool) {
	switch {
	case IsTimeout(err):
		e.Kind, e.Message = ErrTimeout, "no answer in time"
	case answered:
		e.Kind, e.Message = ErrBadResponse, "could not read the answer: "+Clip(err.Error())
	default:
		e.Kind, e.Message = ErrUnavailable, "could not reach the API: "+Clip(TransportMessage(err))
	}
}

// BodyMessage reads the message of an error body that the SDK could not
// decode: error.message of a JSON body (or error as a string), else
// the text itself.
func BodyMessage(r *http.Response) string {
	if r.Body == nil {
		return ""
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil {
		return ""
	}
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &v) == nil && len(v.Error) > 0 {
		var inner struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(v.Error, &inner) == nil && inner.Message != "" {
			return inner.Message
		}
		var s string
		if json.Unmarshal(v.Error, &s) == nil {
			return s
		}
	}
	return strings.TrimSpace(string(b))
}
