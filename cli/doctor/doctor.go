// Package doctor implements "sot doctor": one tiny live request to each
// configured model, to prove that keys, endpoints, model names and structured
// output work before a real run spends money.
package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine/temporal"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/stack"
)

// Options are the inputs of "sot doctor".
type Options struct {
	IO      *cmdutil.IOStreams
	Config  func() (*config.Config, config.Sources, error)
	Getenv  func(string) string
	Models  []string
	JSON    bool
	Timeout time.Duration
}

// NewCmd returns "sot doctor".
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{IO: f.IO, Config: f.Config, Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "doctor [MODEL...]",
		Short: "Send one tiny request to each configured model and report what works",
		Long: `Send one tiny request to each configured model and report the provider, the
latency, the token usage and whether structured (JSON Schema) output works.

Without arguments it checks the default model (SOT_MODEL or --model) and every
alias in the configuration. It exits 2 when a key is missing (a configuration
problem, as for every sot command), and 1 when a key is rejected, an endpoint
cannot be reached or a model is unknown, explaining what to fix.`,
		Example: `  SOT_MODEL=openai:gpt-4.1 sot doctor
  sot doctor anthropic:claude-sonnet-4-5 ollama:qwen2.5
  OPENAI_BASE_URL=http://127.0.0.1:8000/v1 sot doctor openai:my-vllm-model`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Models = args
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the results as JSON")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 60*time.Second, "time limit for each request")
	return cmd
}

// Check is the result for one model.
type Check struct {
	Model      string    `json:"model"`
	Provider   string    `json:"provider"`
	OK         bool      `json:"ok"`
	LatencyMS  int64     `json:"latency_ms"`
	Usage      llm.Usage `json:"usage"`
	Structured bool      `json:"structured_output"`
	Error      string    `json:"error,omitempty"`
	Hint       string    `json:"hint,omitempty"`

	missingKey bool
}

var healthSchema = json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}`)

// Run checks every model and prints the results.
func Run(ctx context.Context, opts *Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	cfg, _, err := opts.Config()
	if err != nil {
		return err
	}
	models, err := targets(cfg, opts.Models)
	if err != nil {
		return err
	}
	sopts := stack.Options{NoCache: true, Retries: 1, Timeout: opts.Timeout, Getenv: opts.Getenv}
	if cfg.Executor.Kind == config.ExecutorTemporal {
		// Under the temporal executor the workers make the calls, with
		// their keys: check that they are there, then send the checks
		// through them, as a run would.
		remote, done, err := executorCheck(ctx, opts, cfg)
		if err != nil {
			return err
		}
		defer done()
		sopts.Backend = remote
	}
	st, err := stack.New(cfg, sopts)
	if err != nil {
		return cmdutil.AsUsage(err)
	}
	defer st.Close()

	checks := make([]Check, len(models))
	for i, m := range models {
		checks[i] = check(ctx, st, cfg, m)
	}
	if err := print(opts, checks); err != nil {
		return err
	}
	// A missing key is a configuration problem (exit 2, as in a review);
	// any other failure is a failed check (exit 1).
	code := cmdutil.ExitOK
	for _, c := range checks {
		switch {
		case c.OK:
		case c.missingKey && code == cmdutil.ExitOK:
			code = cmdutil.ExitUsage
		case !c.missingKey:
			code = cmdutil.ExitFailure
		}
	}
	if code != cmdutil.ExitOK {
		return &cmdutil.ExitError{Code: code}
	}
	return nil
}

// targets lists the models to check: the arguments, or the default model
// and every alias.
func targets(cfg *config.Config, args []string) ([]llm.ModelRef, error) {
	names := args
	if len(names) == 0 {
		if cfg.DefaultModel != "" {
			names = append(names, cfg.DefaultModel)
		}
		aliases := make([]string, 0, len(cfg.Aliases))
		for a := range cfg.Aliases {
			aliases = append(aliases, a)
		}
		sort.Strings(aliases)
		names = append(names, aliases...)
	}
	if len(names) == 0 {
		return nil, cmdutil.UsageError("no model to check: set SOT_MODEL=provider:model (for example openai:gpt-4.1), pass --model, or name models as arguments")
	}
	var refs []llm.ModelRef
	seen := map[string]bool{}
	for _, n := range names {
		ref, err := cfg.ResolveModel(n)
		if err != nil {
			return nil, cmdutil.AsUsage(err)
		}
		if !seen[ref.String()] {
			seen[ref.String()] = true
			refs = append(refs, ref)
		}
	}
	return refs, nil
}

func check(ctx context.Context, p llm.Provider, cfg *config.Config, ref llm.ModelRef) Check {
	c := Check{Model: ref.String(), Provider: ref.Provider}
	resp, err := p.Complete(ctx, &llm.Request{
		Model:       ref.String(),
		System:      "You are a connectivity check. Answer in one word.",
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: "Reply with the word ok."}},
		Temperature: llm.Float(0),
		MaxTokens:   16,
		Label:       "doctor/plain",
	})
	if err != nil {
		c.Error, c.Hint = llm.Redact(err.Error()), llm.Redact(hint(err, cfg, ref))
		c.missingKey = errors.Is(err, llm.ErrMissingKey)
		return c
	}
	c.LatencyMS, c.Usage = resp.Latency.Milliseconds(), resp.Usage
	sresp, err := p.Complete(ctx, &llm.Request{
		Model:       ref.String(),
		System:      "You are a connectivity check.",
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: `Answer with the JSON object {"ok": true}.`}},
		Temperature: llm.Float(0),
		MaxTokens:   64,
		Schema:      &llm.Schema{Name: "health", JSON: healthSchema},
		Label:       "doctor/structured",
	})
	if err != nil {
		c.Error, c.Hint = llm.Redact("structured output: "+err.Error()), llm.Redact(hint(err, cfg, ref))
		return c
	}
	c.Structured, c.OK = true, true
	c.Usage = c.Usage.Add(sresp.Usage)
	return c
}

// hint says what to do about a failure.
func hint(err error, cfg *config.Config, ref llm.ModelRef) string {
	pc := cfg.Providers[ref.Provider]
	base := pc.BaseURL
	if base == "" {
		base = "the provider's default endpoint"
	}
	switch {
	case errors.Is(err, llm.ErrMissingKey):
		return fmt.Sprintf("export %s with your key, or point providers.%s.api_key_env at the variable that holds it", pc.APIKeyEnv, ref.Provider)
	case errors.Is(err, llm.ErrAuth) && pc.APIKeyEnv == "":
		return fmt.Sprintf("%s rejected the request's credentials; set providers.%s.api_key_env to the variable that holds its key", base, ref.Provider)
	case errors.Is(err, llm.ErrAuth):
		return fmt.Sprintf("the key in %s was rejected; check that it is current and belongs to this provider", pc.APIKeyEnv)
	case errors.Is(err, llm.ErrUnknownModel):
		return fmt.Sprintf("%s does not serve a model called %q; check the spelling (for Ollama: ollama pull %s)", ref.Provider, ref.Name, ref.Name)
	case errors.Is(err, llm.ErrUnavailable), errors.Is(err, llm.ErrTimeout):
		return fmt.Sprintf("could not get an answer from %s; is the server running and the base URL right?", base)
	case errors.Is(err, llm.ErrSchema):
		return "the model answered but not in the requested JSON shape; sot's reviews need structured output, so try a larger model"
	case errors.Is(err, llm.ErrRateLimited):
		return "the provider is rate limiting this key; wait, or lower --concurrency"
	}
	return ""
}

func print(opts *Options, checks []Check) error {
	if opts.JSON {
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(checks)
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tPROVIDER\tLATENCY\tTOKENS IN/OUT\tSTRUCTURED\tSTATUS")
	for _, c := range checks {
		status, structured, latency, tokens := "ok", "yes", fmt.Sprintf("%dms", c.LatencyMS), fmt.Sprintf("%d/%d", c.Usage.InputTokens, c.Usage.OutputTokens)
		if !c.Structured {
			structured = "no"
		}
		if !c.OK {
			status = "FAILED"
			if c.LatencyMS == 0 {
				latency, tokens, structured = "-", "-", "-"
			}
		}
		cmdutil.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Model, c.Provider, latency, tokens, structured, status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range checks {
		if !c.OK {
			cmdutil.Fprintf(opts.IO.ErrOut, "\n%s: %s\n", c.Model, c.Error)
			if c.Hint != "" {
				cmdutil.Fprintf(opts.IO.ErrOut, "  fix: %s\n", c.Hint)
			}
		}
	}
	return nil
}

// executorCheck checks the temporal executor: the service answers, the
// blob store takes and returns a payload, and a worker takes work from the
// task queue. It prints what it found and returns the provider that sends
// the model checks to the workers, and what ends its workflow.
func executorCheck(ctx context.Context, opts *Options, cfg *config.Config) (llm.Provider, func(), error) {
	e := temporal.Settings(cfg.Executor)
	fail := func(what string, err error, fix string) (llm.Provider, func(), error) {
		cmdutil.Fprintf(opts.IO.ErrOut, "executor: temporal at %s: %s: %v\n  fix: %s\n", e.Address, what, err, fix)
		return nil, nil, &cmdutil.ExitError{Code: cmdutil.ExitFailure}
	}
	c, err := temporal.Dial(e, opts.Getenv, slog.New(slog.DiscardHandler))
	if err != nil {
		return fail("cannot connect", err, "start a server (temporal server start-dev) or set executor.address, executor.namespace and, for Temporal Cloud, executor.api_key_env")
	}
	blobs, err := temporal.OpenBlobs(ctx, e, opts.Getenv)
	if err != nil {
		c.Close()
		return fail("blob store", err, "set executor.blobs to a directory or bucket every worker shares")
	}
	closeAll := func() { blobs.Close(); c.Close() }
	probe := []byte("sot doctor " + time.Now().UTC().Format(time.RFC3339Nano))
	if ref, err := blobs.Put(ctx, probe); err != nil {
		closeAll()
		return fail("blob store", err, "make executor.blobs writable")
	} else if _, err := blobs.Get(ctx, ref); err != nil {
		closeAll()
		return fail("blob store", err, "make executor.blobs readable")
	}
	tq, err := c.DescribeTaskQueue(ctx, e.TaskQueue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
	if err != nil {
		closeAll()
		return fail("task queue "+e.TaskQueue, err, "check executor.namespace and executor.task_queue")
	}
	if len(tq.GetPollers()) == 0 {
		closeAll()
		return fail("task queue "+e.TaskQueue, errors.New("no sot worker is taking work from it"), "start `sot worker` on a machine with the providers' keys")
	}
	if e.Drive != config.DriveClient {
		// A run is driven from a queue of its own: a worker of an older
		// sot takes calls but drives nothing.
		dq, err := c.DescribeTaskQueue(ctx, temporal.DriveQueue(e.TaskQueue), enumspb.TASK_QUEUE_TYPE_ACTIVITY)
		if err == nil && len(dq.GetPollers()) == 0 {
			closeAll()
			return fail("task queue "+temporal.DriveQueue(e.TaskQueue), errors.New("no sot worker drives runs from it"),
				"run the same sot on the workers as here (sot worker drives runs from this queue), or set executor.drive: client")
		}
	}
	var names []string
	for _, p := range tq.GetPollers() {
		names = append(names, p.GetIdentity())
	}
	sort.Strings(names)
	cmdutil.Fprintf(opts.IO.ErrOut, "executor: temporal at %s, namespace %s, task queue %s: %d worker(s) (%s); the checks below are made by them\n",
		e.Address, e.Namespace, e.TaskQueue, len(names), strings.Join(names, ", "))
	r := temporal.NewRemote(c, blobs, e.TaskQueue, temporal.RunInput{}, e.MaxInFlight)
	r.Attach("doctor "+string(probe[len("sot doctor "):]), nil)
	return r, func() { _ = r.Finish(context.Background()); closeAll() }, nil
}
