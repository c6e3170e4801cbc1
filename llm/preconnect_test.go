package llm

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"
)

// connServer is a server that records the connections it accepts and
// sees closed.
type connServer struct {
	*httptest.Server
	mu             sync.Mutex
	opened, closed int
	changed        chan struct{}
}

// newConnServer starts a connServer answering with h, or with the
// request's protocol when h is nil; over TLS when secure, offering HTTP/2
// when http2, and then trusted by Preconnect's dials until the test ends.
func newConnServer(t *testing.T, h http.HandlerFunc, secure, http2 bool) *connServer {
	if h == nil {
		h = func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) }
	}
	s := &connServer{changed: make(chan struct{}, 1)}
	s.Server = httptest.NewUnstartedServer(h)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		s.mu.Lock()
		switch st {
		case http.StateNew:
			s.opened++
		case http.StateClosed:
			s.closed++
		}
		s.mu.Unlock()
		select {
		case s.changed <- struct{}{}:
		default: // a change not yet seen is waiting: await reads the counts again
		}
	}
	if secure {
		s.EnableHTTP2 = http2
		s.StartTLS()
		roots := x509.NewCertPool()
		roots.AddCert(s.Certificate())
		old := preconnectTLS
		preconnectTLS = &tls.Config{RootCAs: roots}
		t.Cleanup(func() { preconnectTLS = old })
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

func (s *connServer) counts() (opened, closed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opened, s.closed
}

// await waits until the server's counts satisfy ok.
func (s *connServer) await(t *testing.T, what string, ok func(opened, closed int) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !ok(s.counts()) {
		select {
		case <-s.changed:
		case <-deadline:
			o, c := s.counts()
			t.Fatalf("%s: the server saw %d connections opened and %d closed", what, o, c)
		}
	}
}

// A connection Preconnect opens reaches the server before any request is
// made, and the first request of a client goes out on it: the server sees
// one connection in all.
func TestPreconnectedConnectionCarriesTheFirstRequest(t *testing.T) {
	s := newConnServer(t, nil, false, false)
	Preconnect(s.URL+"/v1", 1)
	s.await(t, "before any request", func(o, _ int) bool { return o == 1 })
	resp, err := NewHTTPClient().Get(s.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if o, _ := s.counts(); o != 1 {
		t.Fatalf("the server saw %d connections; the request should have gone out on the one opened before it", o)
	}
	// Taken once: a second client dials anew.
	resp, err = NewHTTPClient().Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if o, _ := s.counts(); o != 2 {
		t.Fatalf("the server saw %d connections, want 2", o)
	}
}

// A connection Preconnect opened that no request takes is closed after
// preconnectTTL.
func TestUnusedPreconnectionIsClosed(t *testing.T) {
	old := preconnectTTL
	preconnectTTL = 50 * time.Millisecond
	t.Cleanup(func() { preconnectTTL = old })
	s := newConnServer(t, nil, false, false)
	Preconnect(s.URL, 1)
	s.await(t, "the connection opened and then closed", func(o, c int) bool { return o == 1 && c == 1 })
}

// The address dialled is the one a request to the base URL goes to, with
// the scheme's port when the URL names none; a base URL that is no URL
// opens nothing.
func TestDialAddress(t *testing.T) {
	for _, v := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"} {
		if os.Getenv(v) != "" {
			t.Skipf("%s is set: requests go through the proxy", v)
		}
	}
	for _, tc := range []struct {
		base, addr string
		secure, ok bool
	}{
		{"https://api.openai.com/v1", "api.openai.com:443", true, true},
		{"http://localhost:11434/v1", "localhost:11434", false, true},
		{"http://[::1]/v1", "[::1]:80", false, true},
		{"", "", false, false},
		{"localhost:8080", "", false, false},
		{"ftp://example.com", "", false, false},
	} {
		addr, secure, ok := dialAddress(tc.base)
		if addr != tc.addr || secure != tc.secure || ok != tc.ok {
			t.Errorf("dialAddress(%q) = %q, %v, %v; want %q, %v, %v", tc.base, addr, secure, ok, tc.addr, tc.secure, tc.ok)
		}
	}
}

// Over https, the connection Preconnect opens has done its TLS handshake,
// offering HTTP/2: the first request goes out on it over HTTP/2, and a
// client without one handshakes its own the same way.
func TestPreconnectedTLSConnectionCarriesTheFirstRequest(t *testing.T) {
	s := newConnServer(t, nil, true, true)
	Preconnect(s.URL+"/v1", 1)
	s.await(t, "before any request", func(o, _ int) bool { return o == 1 })
	for i, want := range []int{1, 2} {
		resp, err := NewHTTPClient().Get(s.URL + "/v1/models")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.ProtoMajor != 2 || string(body) != "HTTP/2.0" {
			t.Errorf("request %d went over %s (the server saw %s), not HTTP/2", i+1, resp.Proto, body)
		}
		if o, _ := s.counts(); o != want {
			t.Fatalf("after request %d the server saw %d connections, want %d", i+1, o, want)
		}
	}
}

// Preconnect opens a connection for each request a run sends at once to a
// server that speaks HTTP/1.1, over http or https, and the requests go out
// on them: the server sees no other. A server that speaks HTTP/2 gets one,
// which carries them all.
func TestPreconnectOpensAConnectionForEachParallelRequest(t *testing.T) {
	const parallel = 4
	for _, tc := range []struct {
		name       string
		tls, http2 bool
		want       int // connections in all
	}{
		{"http", false, false, parallel},
		{"https, HTTP/1.1", true, false, parallel},
		{"https, HTTP/2", true, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arrived := make(chan struct{}, parallel)
			release := make(chan struct{})
			s := newConnServer(t, func(w http.ResponseWriter, r *http.Request) {
				arrived <- struct{}{}
				<-release // every request is in flight at once
				io.WriteString(w, r.Proto)
			}, tc.tls, tc.http2)

			Preconnect(s.URL+"/v1", parallel)
			s.await(t, "before any request", func(o, _ int) bool { return o == tc.want })
			c := NewHTTPClient()
			get := func() (string, error) {
				resp, err := c.Get(s.URL + "/v1/models")
				if err != nil {
					return "", err
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				return string(b), err
			}
			// The first request alone: once it has its connection, no
			// other is being opened for a server that speaks HTTP/2.
			first := make(chan error, 1)
			go func() { _, err := get(); first <- err }()
			<-arrived
			var wg sync.WaitGroup
			protos := make([]string, parallel-1)
			errs := make([]error, parallel-1)
			for i := range parallel - 1 {
				wg.Add(1)
				go func() { defer wg.Done(); protos[i], errs[i] = get() }()
			}
			for range parallel - 1 {
				<-arrived
			}
			close(release)
			wg.Wait()
			if err := <-first; err != nil {
				t.Fatal(err)
			}
			for i, err := range errs {
				if err != nil {
					t.Fatalf("request %d: %v", i+2, err)
				}
				if want := map[bool]string{true: "HTTP/2.0", false: "HTTP/1.1"}[tc.http2]; protos[i] != want {
					t.Errorf("request %d went over %s, want %s", i+2, protos[i], want)
				}
			}
			if o, _ := s.counts(); o != tc.want {
				t.Fatalf("the server saw %d connections, want %d: the requests should have gone out on those opened before them", o, tc.want)
			}
			preconnects.mu.Lock()
			left := len(preconnects.m)
			preconnects.mu.Unlock()
			if left != 0 {
				t.Errorf("%d addresses still hold connections no request took", left)
			}
		})
	}
}
