// Package command is the sot backend that runs a local program as a model,
// following the convention of Simon Willison's llm CLI (version 0.24.1 or
// later): the model goes in -m, the system prompt in a template file named
// by -t, the temperature in -o temperature T, the prompt on stdin, and the
// answer comes back on stdout.
//
// A reference "command:NAME" runs the configured program (default "llm")
// as
//
//	PROGRAM -m NAME -t /tmp/sot-command-XXXX/system.yaml -o temperature T
//
// -t is left out when the request has no system prompt, and -o when it sets
// no temperature. A reference whose name contains a space, "command:my-tool
// --flag", is a whole command line: it is run as written, without -m, and
// -t PATH and -o temperature T are appended to it in the same way, so the
// program must accept them.
//
// # What the program is given
//
// No part of the material is ever put on the command line, where any local
// user could read it with ps and where a long passage fails with "argument
// list too long". For each call sot makes a private directory in
// os.TempDir() (mode 0700) and writes two files into it, each with mode
// 0600:
//
//   - system.yaml, an llm template whose only key is system: the system
//     prompt, with the JSON-schema instruction appended for a structured
//     request. It is written as one double-quoted YAML scalar, so that any
//     text survives (bytes that are not valid UTF-8 become U+FFFD), and
//     every "$" is doubled, because llm expands $name in a template. Its
//     path follows -t.
//   - system.txt, the same system prompt as plain text, byte for byte.
//     Its path is in the environment variable SOT_SYSTEM_FILE, for
//     programs that do not read llm templates.
//
// The directory and both files are removed when the call ends, whether it
// succeeded, failed, timed out or was cancelled. The conversation is
// written to the program's stdin.
//
// The program does not inherit sot's environment, which may hold API keys
// and other secrets. It gets only the variables of sot's environment that
// BaseEnv names, the ones Config.PassEnv names (set by the user's
// providers.NAME.env, which an untrusted project configuration cannot
// set), and SOT_SYSTEM_FILE. A key the program needs, say OPENAI_API_KEY
// for llm without a keys.json, must be listed in providers.command.env.
//
// # Errors
//
// A program that cannot be started for a reason that will not go away (it
// is not found, not executable, or its command line or environment is too
// long for the system) and a system prompt that cannot be written fail
// with a kind that is not retried (llm.ErrConfig, or llm.ErrBadRequest for
// "argument list too long"). A program that exits non-zero fails with
// llm.ErrUnavailable, which is retried. A request that offers tools
// (Request.Tools) fails with llm.ErrBadRequest before anything runs: the
// convention has no tool calling (llm.SupportsTools is false for
// command: references, and callers check it first).
package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
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
	// PassEnv names the variables of sot's environment the program gets
	// besides those BaseEnv names (from providers.NAME.env). A name is
	// matched exactly; a variable that is not set is left out.
	PassEnv []string
	// Environ returns the environment the program's variables are picked
	// from, as "NAME=value" strings (default os.Environ). It is called
	// once per call.
	Environ func() []string
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
	if cfg.Environ == nil {
		cfg.Environ = os.Environ
	}
	return &Provider{cfg: cfg}
}

// schemaInstruction introduces the JSON Schema of a structured request at
// the end of the system prompt (llm/llmtest's fake llm looks for it).
const schemaInstruction = "Answer with one JSON value that validates against this JSON Schema, and nothing else (no prose, no code fence):\n"

// systemPrompt is the system prompt the program gets: the request's, with
// the schema instruction appended for a structured request.
func systemPrompt(req *llm.Request) string {
	system := req.System
	if req.Schema != nil {
		system += "\n\n" + schemaInstruction + string(req.Schema.JSON)
	}
	return system
}

// command returns the program and arguments a request runs, before the
// template and the options are appended.
func (p *Provider) command(req *llm.Request) ([]string, error) {
	name := req.Model
	if m, err := llm.ParseModel(req.Model); err == nil {
		name = m.Name
	}
	if strings.ContainsAny(name, " \t") {
		return splitArgs(name)
	}
	return []string{p.cfg.Program, "-m", name}, nil
}

// argv completes a command with the template path (when there is one) and
// the options. Nothing of the request's text goes into it.
func argv(cmd []string, template string, req *llm.Request) []string {
	args := append([]string(nil), cmd...)
	if template != "" {
		args = append(args, "-t", template)
	}
	if req.Temperature != nil {
		args = append(args, "-o", "temperature", strconv.FormatFloat(*req.Temperature, 'f', -1, 64))
	}
	return args
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
	if len(req.Tools) > 0 {
		return nil, p.fail(req, llm.ErrBadRequest, "the command provider cannot offer a model tools: the program it runs has no tool calling (ask llm.SupportsTools before offering them)", nil)
	}
	base, err := p.command(req)
	if err != nil {
		return nil, p.fail(req, llm.ErrConfig, err.Error(), err)
	}
	system := systemPrompt(req)
	var files *systemFiles
	if system != "" {
		if files, err = writeSystem(system); err != nil {
			return nil, p.fail(req, llm.ErrConfig, fmt.Sprintf("cannot write the system prompt to a temporary file (set TMPDIR to a writable directory): %v", err), err)
		}
		// Removed however the call ends: the deferred call runs after the
		// program has been waited for, killed or never started.
		defer files.remove()
	}
	var template, plain string
	if files != nil {
		template, plain = files.template, files.plain
	}
	args := argv(base, template, req)

	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.WaitDelay = 2 * time.Second
	cmd.Env = p.environ(plain)
	in := prompt(req)
	cmd.Stdin = strings.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := llm.Sending(parent); err != nil {
		return nil, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		if parent.Err() != nil {
			return nil, parent.Err()
		}
		return nil, p.startError(req, args[0], err)
	}
	llm.Yield(parent) // the program has the request
	err = cmd.Wait()
	latency := time.Since(start)
	switch {
	case err == nil:
	case parent.Err() != nil:
		// The caller cancelled or its own deadline passed: report that, as
		// the HTTP backends do, not the command's timeout.
		return nil, parent.Err()
	case ctx.Err() == context.DeadlineExceeded:
		return nil, p.fail(req, llm.ErrTimeout, fmt.Sprintf("%q ran longer than %s", args[0], p.cfg.Timeout), err)
	default:
		msg := fmt.Sprintf("%q failed (%v): %s", args[0], err, tail(stderr.String()))
		if strings.Contains(strings.ToLower(stderr.String()), "key") {
			msg += fmt.Sprintf(" (the program gets a minimal environment: list any variable it needs, such as an API key, under providers.%s.env)", p.cfg.Name)
		}
		return nil, p.fail(req, llm.ErrUnavailable, msg, nil)
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

// startError classifies an error from starting the program. The reasons
// that will not go away by trying again get a kind the retry middleware
// does not retry; anything else (the system out of processes or memory,
// say) is ErrUnavailable.
func (p *Provider) startError(req *llm.Request, program string, err error) error {
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return p.fail(req, llm.ErrConfig, fmt.Sprintf("program %q not found on PATH; install it or set providers.command.program", program), err)
	case errors.Is(err, exec.ErrDot):
		return p.fail(req, llm.ErrConfig, fmt.Sprintf("program %q resolves to the current directory, which sot does not run from; give its path", program), err)
	case errors.Is(err, fs.ErrNotExist):
		return p.fail(req, llm.ErrConfig, fmt.Sprintf("program %q not found (or its interpreter is missing)", program), err)
	case errors.Is(err, fs.ErrPermission):
		return p.fail(req, llm.ErrConfig, fmt.Sprintf("program %q is not executable (permission denied)", program), err)
	case errors.Is(err, syscall.ENOEXEC):
		return p.fail(req, llm.ErrConfig, fmt.Sprintf("program %q is not a program the system can run (exec format error)", program), err)
	case errors.Is(err, syscall.E2BIG):
		return p.fail(req, llm.ErrBadRequest, fmt.Sprintf("cannot start %q: its command line or environment is too long (argument list too long); shorten the model's command line or the variables in providers.command.env", program), err)
	default:
		return p.fail(req, llm.ErrUnavailable, fmt.Sprintf("cannot start %q: %v", program, err), err)
	}
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
