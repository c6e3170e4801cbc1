package llm

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
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
	// A connection Preconnect opened is taken by the first dial of its
	// address; to an https server, it has done its TLS handshake too.
	t.DialContext = preconnects.dial
	t.DialTLSContext = preconnects.dialTLS
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

// preconnectTTL is how long a connection Preconnect opened waits to be
// taken before it is closed.
var preconnectTTL = 20 * time.Second

// Preconnect starts opening, in the background, connections to the
// server that requests to base (a provider's base URL) are sent to, or to
// the proxy the environment names for them, with their TLS handshakes when
// that server is reached over https, so that a run's first requests find
// them ready instead of waiting for them: for a remote provider, two round
// trips; on a busy machine, a wait for the scheduler. It opens one
// connection to a server that speaks HTTP/2, which carries every request
// at once, and up to n (at least one) to one that speaks HTTP/1.1, one
// for each request a run sends at once, as a local model server does.
// Each dial of that address by a client of NewHTTPClient takes one; one
// not taken within 20 seconds is closed. Nothing is sent on them.
func Preconnect(base string, n int) {
	if addr, secure, ok := dialAddress(base); ok {
		preconnects.start(addr, secure, max(n, 1))
	}
}

// dialAddress is the address a client of NewHTTPClient dials for a
// request to base, the proxy's if the environment names one for it, and
// whether it speaks TLS there.
func dialAddress(base string) (addr string, secure, ok bool) {
	u, err := ParseBaseURL(base)
	if err != nil || u == nil {
		return "", false, false
	}
	if p, err := http.ProxyFromEnvironment(&http.Request{URL: u}); err != nil {
		return "", false, false
	} else if p != nil {
		u = p
	}
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		case "socks5", "socks5h":
			port = "1080"
		default:
			return "", false, false
		}
	}
	return net.JoinHostPort(u.Hostname(), port), u.Scheme == "https", true
}

// preconnectTLS is the TLS configuration of the connections Preconnect
// and NewHTTPClient's clients open to https servers (the system's roots);
// tests give it theirs.
var preconnectTLS = &tls.Config{}

// tlsHandshakeTimeout bounds a TLS handshake, as http.DefaultTransport's
// does.
const tlsHandshakeTimeout = 10 * time.Second

// tlsClient starts TLS on raw, a connection to addr, offering HTTP/2 and
// HTTP/1.1 as http.Transport does, and completes its handshake.
func tlsClient(ctx context.Context, raw net.Conn, addr string) (*tls.Conn, error) {
	cfg := preconnectTLS.Clone()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		cfg.ServerName = host
	}
	cfg.NextProtos = []string{"h2", "http/1.1"}
	tc := tls.Client(raw, cfg)
	ctx, cancel := context.WithTimeout(ctx, tlsHandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, err
	}
	return tc, nil
}

// preconnects holds the connections Preconnect opened, by address, until
// dials take them.
var preconnects = &preconnected{m: map[string][]*preconnection{}}

type preconnected struct {
	mu sync.Mutex
	m  map[string][]*preconnection // in the order they were started
}

// preconnection is a connection being opened: done is closed once conn or
// err is set.
type preconnection struct {
	done chan struct{}
	conn net.Conn
	err  error
}

var preconnectDialer = &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}

// start opens n connections to addr, with TLS when secure, unless some
// are open or being opened. Over TLS the first is opened alone: a server
// that speaks HTTP/2 needs no other, and the others are started, when it
// does not, before the first is handed to a dial.
func (p *preconnected) start(addr string, secure bool, n int) {
	key := preconnectKey(addr, secure)
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.m[key]) > 0 {
		return
	}
	if secure {
		p.dialOne(key, addr, true, n-1)
		return
	}
	for range n {
		p.dialOne(key, addr, false, 0)
	}
}

// dialOne starts opening one connection of key, to addr, and, once its TLS
// handshake shows a server that does not speak HTTP/2, more others; p.mu
// is held.
func (p *preconnected) dialOne(key, addr string, secure bool, more int) {
	c := &preconnection{done: make(chan struct{})}
	p.m[key] = append(p.m[key], c)
	ttl := preconnectTTL
	go func() {
		ctx := context.Background()
		conn, err := preconnectDialer.DialContext(ctx, "tcp", addr)
		if err == nil && secure {
			var tc *tls.Conn
			if tc, err = tlsClient(ctx, conn, addr); err == nil {
				conn = tc
				if more > 0 && tc.ConnectionState().NegotiatedProtocol != "h2" {
					p.mu.Lock()
					for range more {
						p.dialOne(key, addr, true, 0)
					}
					p.mu.Unlock()
				}
			} else {
				conn = nil
			}
		}
		c.conn, c.err = conn, err
		close(c.done)
		time.AfterFunc(ttl, func() {
			if p.take(key, c) != nil && c.conn != nil {
				c.conn.Close() // never taken
			}
		})
	}()
}

// preconnectKey names a connection to addr, with TLS or not.
func preconnectKey(addr string, secure bool) string {
	if secure {
		return "tls " + addr
	}
	return addr
}

// take removes a connection of key from p and returns it: with want,
// that one if it is there; else the first that is open, or the first.
func (p *preconnected) take(key string, want *preconnection) *preconnection {
	p.mu.Lock()
	defer p.mu.Unlock()
	cs := p.m[key]
	i := -1
	switch {
	case want != nil:
		i = slices.Index(cs, want)
	case len(cs) > 0:
		i = max(0, slices.IndexFunc(cs, (*preconnection).open))
	}
	if i < 0 {
		return nil
	}
	c := cs[i]
	if cs = slices.Delete(cs, i, i+1); len(cs) == 0 {
		delete(p.m, key)
	} else {
		p.m[key] = cs
	}
	return c
}

// open reports whether c's opening is over.
func (c *preconnection) open() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// taken waits for a connection of key, if Preconnect opened one, and
// returns it once it is open; nil when there is none, or it failed (the
// caller dials anew).
func (p *preconnected) taken(ctx context.Context, key string) (net.Conn, error) {
	c := p.take(key, nil)
	if c == nil {
		return nil, nil
	}
	select {
	case <-c.done:
		if c.err != nil {
			return nil, nil
		}
		return c.conn, nil
	case <-ctx.Done():
		go func() {
			<-c.done
			if c.conn != nil {
				c.conn.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// dial is NewHTTPClient's dialer: a connection Preconnect opened to addr,
// once it is open, or a new one.
func (p *preconnected) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if network == "tcp" {
		if conn, err := p.taken(ctx, preconnectKey(addr, false)); conn != nil || err != nil {
			return conn, err
		}
	}
	return preconnectDialer.DialContext(ctx, network, addr)
}

// dialTLS is NewHTTPClient's dialer of https servers: a connection
// Preconnect opened to addr, once its handshake is done, or a new one
// with its handshake done.
func (p *preconnected) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	if network == "tcp" {
		if conn, err := p.taken(ctx, preconnectKey(addr, true)); conn != nil || err != nil {
			return conn, err
		}
	}
	raw, err := preconnectDialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return tlsClient(ctx, raw, addr)
}
