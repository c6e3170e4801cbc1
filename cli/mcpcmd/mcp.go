// Package mcpcmd implements "sot mcp": sot as a Model Context Protocol
// server, so that coding agents and editors can start reviews, questions
// and debates, follow them, and read what they wrote. Each run is a sot
// command in its own process (Jobs), recorded under .sot/mcp, so that it
// goes on when the client disconnects and a later server finds it by id or
// resumes it from its journal.
package mcpcmd

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/cli/version"
	"github.com/sotlabs/sot/internal/project"
)

// Options are the inputs of "sot mcp".
type Options struct {
	IO      *cmdutil.IOStreams
	WorkDir string
	// HTTP serves streamable HTTP on this address instead of stdio.
	HTTP string
	// TokenEnv names the environment variable that holds the bearer token
	// HTTP clients must send.
	TokenEnv string
	Getenv   func(string) string
}

// NewCmd returns "sot mcp".
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &Options{IO: f.IO, Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve this project's reviews, questions and debates to agents and editors over MCP",
		Long: `Serve the project as a Model Context Protocol server, over stdio (the
default, for editors and agents that start the server themselves) or over
streamable HTTP (--http ADDR).

Tools: review, ask and debate start a run and return its run id at once
(with wait: true, they wait and return the outcome, sending progress
notifications meanwhile); run_status, run_result and run_cancel take a run
id; estimate is the dry run (calls, tokens and cost, nothing spent);
graph_query and sources_search search an argument graph and the corpus
index by BM25; resolve records accept, dismiss or defer on a finding.
Resources: every output file of a run, sot://runs/<run-id>/<file>, and the
persona library, sot://personas/<kind>/<name>. Prompts: review, ask, debate.

Each run is a sot command of its own, recorded in .sot/mcp/jobs: it goes on
when the client disconnects, a client that reconnects finds it by id, and
a server started later resumes the runs an earlier one left unfinished from
their journals, paying for no call twice.

Tool arguments come from a model and are treated like a cloned
repository's files: paths stay inside the project, a model that would run a
program is refused, and budgets are your configuration's (a call may lower
them, never raise them).

Over HTTP the server listens on loopback unless you give another address;
then it requires a bearer token, read from the variable --token-env names
(default SOT_MCP_TOKEN). See docs/mcp.md.`,
		Example: `  sot mcp                                   # stdio, for an editor's MCP settings
  sot mcp --http 127.0.0.1:8765             # streamable HTTP on loopback
  SOT_MCP_TOKEN=$(openssl rand -hex 32) sot mcp --http 0.0.0.0:8765`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.WorkDir = f.WorkDir()
			return Run(cmd.Context(), f, o)
		},
	}
	cmd.Flags().StringVar(&o.HTTP, "http", "", "serve streamable HTTP on `ADDR` (host:port) instead of stdio")
	cmd.Flags().StringVar(&o.TokenEnv, "token-env", "SOT_MCP_TOKEN", "the environment variable that holds the bearer token HTTP clients must send (required off loopback)")
	return cmd
}

// Run serves until the client goes away (stdio) or ctx is done.
func Run(ctx context.Context, f *cmdutil.Factory, o *Options) error {
	f.StartupOver()
	top, ok := project.Top(o.WorkDir)
	if !ok {
		return cmdutil.UsageError("%s is not in a project (no .git, .sot or .paw above it); start sot mcp in the repository it serves", o.WorkDir)
	}
	token := ""
	if o.HTTP != "" {
		token = o.Getenv(o.TokenEnv)
		loop, err := loopback(o.HTTP)
		if err != nil {
			return cmdutil.UsageError("--http %s: %v", o.HTTP, err)
		}
		if !loop && token == "" {
			return cmdutil.UsageError("--http %s is not a loopback address: set a bearer token in %s (clients send it as Authorization: Bearer ...), or listen on 127.0.0.1", o.HTTP, o.TokenEnv)
		}
	}
	cfg, _, err := f.Config()
	if err != nil {
		return err
	}
	lib, err := f.Library()
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the sot executable runs are started with: %w", err)
	}
	s, err := New(Config{Top: top, Exe: exe, Config: cfg, Library: lib, Version: version.Get().Version})
	if err != nil {
		return err
	}
	defer s.Jobs.Close()
	// Ctrl-C or SIGTERM stops the server and, as Ctrl-C stops a run, the
	// runs it started: the next server resumes them.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if ids, err := s.Jobs.Resume(); err != nil {
		cmdutil.Warn(o.IO.ErrOut, "resuming unfinished runs: "+err.Error())
	} else if len(ids) > 0 {
		cmdutil.Say(o.IO.ErrOut, fmt.Sprintf("resumed %d unfinished run(s) from their journals: %s", len(ids), strings.Join(ids, ", ")))
	}
	if o.HTTP == "" {
		// Runs go on after the client leaves; a later server finds them.
		err := s.Run(ctx, &mcp.StdioTransport{})
		if ctx.Err() != nil {
			s.Jobs.Interrupt() // Ctrl-C: stop them as a run stops, to be resumed
			return nil
		}
		return err
	}
	return serveHTTP(ctx, o, s, token)
}

// loopback reports whether addr listens on loopback only.
func loopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

// serveHTTP serves streamable HTTP at /mcp until ctx is done.
func serveHTTP(ctx context.Context, o *Options, s *Server, token string) error {
	ln, err := net.Listen("tcp", o.HTTP)
	if err != nil {
		return cmdutil.UsageError("--http %s: %v", o.HTTP, err)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.Server }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", Bearer(token, h))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	cmdutil.Say(o.IO.ErrOut, fmt.Sprintf("serving MCP on http://%s/mcp", ln.Addr()))
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	err = srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		s.Jobs.Interrupt()
		return nil
	}
	return err
}

// Bearer lets through only requests that carry token (none needed when
// token is empty).
func Bearer(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sot"`)
			http.Error(w, "sot mcp: a bearer token is required", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
