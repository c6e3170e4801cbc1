// Command llmtest runs the fake OpenAI/Anthropic model server of package
// llm/llmtest, for trying sot without a provider and for benchmarks.
//
//	llmtest --addr 127.0.0.1:8089 --latency 300ms --prefix-cache
//
// It prints the environment to export, then serves until interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sotlabs/sot/llm/llmtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(exitCode(run(ctx, os.Args[1:], os.Stdout, os.Stderr), os.Stderr))
}

// exitCode is 0 for success and for --help (its usage is printed), and 2
// with the error on stderr otherwise.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	}
	fmt.Fprintln(stderr, "llmtest:", err)
	return 2
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("llmtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8089", "address to listen on")
	configPath := fs.String("config", "", "YAML configuration file (rules, faults, quota, models, ...)")
	latency := fs.Duration("latency", 0, "delay before every answer, e.g. 300ms (overrides the file)")
	firstToken := fs.Duration("first-token", 0, "when a streamed answer starts, e.g. 30ms; default a tenth of the latency (overrides the file)")
	faultRate := fs.Float64("fault-rate", 0, "probability 0..1 that a request fails with 429, 500 or 503 (overrides the file's rate)")
	prefixCache := fs.Bool("prefix-cache", false, "simulate the providers' prompt prefix caches (overrides the file)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: llmtest [--addr HOST:PORT] [--config FILE] [--latency D] [--first-token D] [--fault-rate P] [--prefix-cache]")
		fmt.Fprintln(stderr, "Serves the OpenAI Chat Completions and Anthropic Messages APIs with scripted or schema-generated answers.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}

	var cfg llmtest.Config
	if *configPath != "" {
		var err error
		if cfg, err = llmtest.LoadConfig(*configPath); err != nil {
			return err
		}
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "latency":
			cfg.Latency = *latency
		case "first-token":
			cfg.FirstToken = *firstToken
		case "fault-rate":
			cfg.Faults.Rate = *faultRate
			if len(cfg.Faults.Kinds) == 0 {
				cfg.Faults.Kinds = []llmtest.FaultKind{llmtest.Fault429, llmtest.Fault500, llmtest.Fault503}
			}
		case "prefix-cache":
			cfg.PrefixCache = *prefixCache
		}
	})
	if cfg.RecordLimit == 0 {
		cfg.RecordLimit = 1000 // a long run must not keep every request body
	}
	if err := cfg.Validate(); err != nil {
		return err
	}

	s, err := llmtest.Listen(*addr, cfg)
	if err != nil {
		return err
	}
	key := cfg.APIKey
	if key == "" {
		key = "test-key"
	}
	fmt.Fprintf(stdout, "llmtest listening on %s\n\n", s.URL())
	fmt.Fprintf(stdout, "export OPENAI_BASE_URL=%s\n", s.OpenAIBaseURL())
	fmt.Fprintf(stdout, "export ANTHROPIC_BASE_URL=%s\n", s.AnthropicBaseURL())
	fmt.Fprintf(stdout, "export OPENAI_API_KEY=%s\n", key)
	fmt.Fprintf(stdout, "export ANTHROPIC_API_KEY=%s\n", key)

	start := time.Now()
	<-ctx.Done()
	s.Close()
	fmt.Fprintf(stdout, "\nserved %d requests in %s, at most %d at once\n",
		s.Count(), time.Since(start).Round(time.Millisecond), s.MaxConcurrent())
	return nil
}
