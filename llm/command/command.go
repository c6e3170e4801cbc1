// Package command is the sot backend that runs a local program as a model,
// following the convention of Simon Willison's llm CLI: the model goes in -m,
// the system prompt in -s, the temperature in -o temperature T, the prompt on
// stdin, and the answer comes back on stdout.
//
// A reference "command:NAME" runs the configured program (default "llm") with
// -m NAME. A reference whose name contains a space, "command:my-tool --flag",
// is a whole command line: it is run as written, without -m.
package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/sotlabs/sot/llm"
)

// Config configures the backend.
type Config struct {
	// Name labels the provider in errors (default "command").
	Name string
	// Program runs for a plain model name (default "llm").
	Program string
	// Timeout bounds each run (default 5 minutes).
	Timeout time.Duration
	// Env, when set, replaces the environment of the child process.
	Env []string
}

// Provider runs a command per call.
type Provider struct{ cfg Config }

// New returns a command backend.
func New(cfg Config) *Provider {
	if cfg.Name == "" {
		cfg.Name = llm.ProviderCommand
	}
	if cfg.Program == "" {
		cfg.Program = "llm"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Minute
	}
	return &Provider{cfg: cfg}
}

// argv builds the command line for a request.
func (p *Provider) argv(req *llm.Request) ([]string, error) {
	name := req.Model
	if m, err := llm.ParseModel(req.Model); err == nil {
		name = m.Name
	}
	var args []string
	if strings.ContainsAny(name, " \t") {
		var err error
		if args, err = splitArgs(name); err != nil {
			return nil, err
		}
	} else {
		args = []string{p.cfg.Program, "-m", name}
	}
	system := req.System
	if req.Schema != nil {
		system += "\n\nAnswer with one JSON value that validates against this JSON Schema, and nothing else (no prose, no code fence):\n" + string(req.Schema.JSON)
	}
	if system != "" {
		args = append(args, "-s", system)
	}
	if req.Temperature != nil {
		args = append(args, "-o", "temperature", strconv.FormatFloat(*req.Temperature, 'f', -1, 64))
	}
	return args, nil
}

// prompt renders the conversation for stdin. A single user message is sent
// as is; a longer conversation is written out turn by turn.
func prompt(req *llm.Request) string {
	if len(req.Messages) == 1 {
		return req.Messages[0].Content
	}
	var b strings.Builder
	for _, m := range req.Messages {
		fmt.Fprintf(&b, "[%s]\n%s\n\n", m.Role, m.Content)
	}
	b.WriteString("[assistant]\n")
	return b.String()
}

// Complete runs the command once.
func (p *Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	args, err := p.argv(req)
	if err != nil {
		return nil, p.fail(req, llm.ErrConfig, err.Error(), nil)
	}
	if err := llm.WaitSendHold(ctx); err != nil {
		return nil, err
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.WaitDelay = 2 * time.Second
	if p.cfg.Env != nil {
		cmd.Env = p.cfg.Env
	}
	in := prompt(req)
	cmd.Stdin = strings.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	latency := time.Since(start)
	switch {
	case err == nil:
	case errors.Is(err, exec.ErrNotFound):
		return nil, p.fail(req, llm.ErrConfig, fmt.Sprintf("program %q not found on PATH; install it or set providers.command.program", args[0]), err)
	case parent.Err() != nil:
		// The caller cancelled or its own deadline passed: report that, as
		// the HTTP backends do, not the command's timeout.
		return nil, parent.Err()
	case ctx.Err() == context.DeadlineExceeded:
		return nil, p.fail(req, llm.ErrTimeout, fmt.Sprintf("%q ran longer than %s", args[0], p.cfg.Timeout), err)
	default:
		return nil, p.fail(req, llm.ErrUnavailable, fmt.Sprintf("%q failed (%v): %s", args[0], err, tail(stderr.String())), nil)
	}
	text := strings.TrimSpace(stdout.String())
	if text == "" {
		return nil, p.fail(req, llm.ErrBadResponse, fmt.Sprintf("%q printed nothing on stdout; stderr: %s", args[0], tail(stderr.String())), nil)
	}
	if req.OnDelta != nil {
		req.OnDelta(text)
	}
	resp := &llm.Response{
		Text:         text,
		FinishReason: llm.FinishStop,
		Latency:      latency,
		Model:        req.Model,
		// The convention reports no usage; estimate it so budgets still bite.
		Usage: llm.Usage{InputTokens: estimate(req.System) + estimate(in), OutputTokens: estimate(text)},
	}
	if req.Schema != nil {
		resp.JSON = llm.ExtractJSON(text)
	}
	return resp, nil
}

func (p *Provider) fail(req *llm.Request, kind error, msg string, cause error) error {
	return &llm.Error{Provider: p.cfg.Name, Model: req.Model, Kind: kind, Message: msg, Err: cause}
}

// estimate approximates a token count: about four bytes a token.
func estimate(s string) int { return (len(s) + 3) / 4 }

// tail keeps the last lines of a command's stderr for an error message.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "(no output on stderr)"
	}
	lines := strings.Split(s, "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	out := strings.Join(lines, " | ")
	if len(out) > 600 {
		out = "…" + out[len(out)-600:]
	}
	return llm.Redact(out)
}

// splitArgs splits a command line on spaces, honouring single and double quotes.
func splitArgs(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	var quote rune
	inArg := false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inArg = r, true
		case r == ' ' || r == '\t':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in command %q", quote, s)
	}
	if inArg {
		args = append(args, cur.String())
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	return args, nil
}
