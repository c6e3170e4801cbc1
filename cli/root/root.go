// Package root assembles the sot command tree and runs it, turning errors
// into one-line messages (control characters and line breaks in them
// escaped) and exit codes.
package root

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/cli/askcmd"
	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/cli/configcmd"
	"github.com/sotlabs/sot/cli/conflicts"
	"github.com/sotlabs/sot/cli/debatecmd"
	"github.com/sotlabs/sot/cli/doctor"
	"github.com/sotlabs/sot/cli/evalcmd"
	"github.com/sotlabs/sot/cli/graphcmd"
	"github.com/sotlabs/sot/cli/mcpcmd"
	"github.com/sotlabs/sot/cli/moderate"
	"github.com/sotlabs/sot/cli/personas"
	"github.com/sotlabs/sot/cli/promptcmd"
	"github.com/sotlabs/sot/cli/reviewcmd"
	"github.com/sotlabs/sot/cli/runs"
	"github.com/sotlabs/sot/cli/sources"
	"github.com/sotlabs/sot/cli/stats"
	"github.com/sotlabs/sot/cli/trust"
	"github.com/sotlabs/sot/cli/version"
	"github.com/sotlabs/sot/cli/worker"
	"github.com/sotlabs/sot/llm"
)

// globalFlags are the flags every command accepts.
type globalFlags struct {
	model       string
	configFile  string
	concurrency int
	maxCalls    int
	maxTokens   int
	maxCost     float64
	noCache     bool
	verbose     bool
	executor    string
}

// NewCmd returns the root command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	g := &globalFlags{}
	cmd := &cobra.Command{
		Use:   "sot <command>",
		Short: "Society of Thought: several LLM personas review, argue and synthesize",
		Long: `sot puts one piece of material (a code diff, design documents or any
text) in front of several LLM personas that each reason in a different way,
lets them work in parallel or argue in rounds, measures where they agree and
clash, and writes one synthesis that keeps the dissent visible.

Models are named provider:model: openai:gpt-4.1, anthropic:claude-sonnet-4-5,
ollama:qwen2.5, command:llm-model-name. Set the session default with
SOT_MODEL or --model; keys come from OPENAI_API_KEY and ANTHROPIC_API_KEY.

Exit codes: 0 success, 1 failure (or findings at --fail-on), 2 usage error,
3 partial result, 130 interrupted (Ctrl-C; the same command continues).`,
		Example: `  export SOT_MODEL=openai:gpt-4.1 OPENAI_API_KEY=...
  sot doctor                 # check that every configured model answers
  sot config show            # see the merged configuration and its sources`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return g.apply(cmd, f)
		},
	}
	pf := cmd.PersistentFlags()
	pf.StringVarP(&g.model, "model", "m", "", "session default model, provider:model or an alias (env SOT_MODEL)")
	pf.StringVar(&g.configFile, "config", "", "read this config file too (ranks above .sot/config.yaml)")
	pf.IntVar(&g.concurrency, "concurrency", 0, "calls in flight per provider (default 20)")
	pf.IntVar(&g.maxCalls, "max-calls", 0, "stop after this many model calls (0 = no limit)")
	pf.IntVar(&g.maxTokens, "max-tokens", 0, "stop after this many input+output tokens (0 = no limit)")
	pf.Float64Var(&g.maxCost, "max-cost", 0, "stop after spending this many US dollars (0 = no limit)")
	pf.BoolVar(&g.noCache, "no-cache", false, "do not read or write the response cache")
	pf.BoolVarP(&g.verbose, "verbose", "v", false, "log diagnostics (retries, timings) to stderr")
	pf.StringVar(&g.executor, "executor", "", "where the run goes: local (this process) or temporal (sot worker processes drive it and make its calls; see docs/scale-out.md)")

	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return cmdutil.AsUsage(fmt.Errorf("%w (see '%s --help')", err, c.CommandPath()))
	})
	cmd.AddCommand(
		version.NewCmd(f),
		configcmd.NewCmd(f),
		doctor.NewCmd(f),
		personas.NewCmd(f),
		promptcmd.NewCmd(f),
		reviewcmd.NewCmd(f),
		askcmd.NewCmd(f),
		debatecmd.NewCmd(f),
		sources.NewCmd(f),
		moderate.NewCmd(f),
		trust.NewCmd(f),
		runs.NewCmd(f),
		conflicts.NewCmd(f),
		graphcmd.NewCmd(f),
		worker.NewCmd(f),
		mcpcmd.NewCmd(f),
		evalcmd.NewCmd(f),
		stats.NewCmd(f),
	)
	for _, c := range cmd.Commands() {
		if c.Name() == "review" || c.Name() == "ask" || c.Name() == "debate" {
			drivable(f, c)
		}
	}
	return cmd
}

// drivable makes a scenario's command run on a Temporal worker when the
// user's configuration says so (see cmdutil.Factory.Drive).
func drivable(f *cmdutil.Factory, c *cobra.Command) {
	local := c.RunE
	c.RunE = func(cmd *cobra.Command, args []string) error {
		drive, err := f.Drives(cmd)
		if err != nil {
			return err
		}
		if !drive {
			return local(cmd, args)
		}
		return cmdutil.RunDriven(cmd.Context(), f, c.Name())
	}
}

// apply passes the global flags that were given to the configuration loader.
func (g *globalFlags) apply(cmd *cobra.Command, f *cmdutil.Factory) error {
	fl := cmd.Flags()
	// Without --verbose only warnings are logged, in sot's own voice (see
	// cmdutil.Factory.Logger); with it, every diagnostic as a log line.
	if g.verbose {
		f.Verbose = true
		f.LogTo(f.IO.ErrOut)
	} else if f.Logger == nil {
		f.LogTo(f.IO.ErrOut)
	}
	slog.SetDefault(f.Logger)
	set := func(name, key, value string) {
		if fl.Changed(name) {
			f.Loader.Set(key, value, "--"+name)
		}
	}
	set("model", "default_model", g.model)
	set("concurrency", "concurrency", strconv.Itoa(g.concurrency))
	set("max-calls", "budget.max_calls", strconv.Itoa(g.maxCalls))
	set("max-tokens", "budget.max_tokens", strconv.Itoa(g.maxTokens))
	set("max-cost", "budget.max_cost", strconv.FormatFloat(g.maxCost, 'f', -1, 64))
	set("no-cache", "cache.disabled", strconv.FormatBool(g.noCache))
	set("executor", "executor.kind", g.executor)
	if fl.Changed("config") {
		f.Loader.File = g.configFile
	}
	return nil
}

// Main runs sot with args and returns the process exit code.
func Main(f *cmdutil.Factory, args []string) int {
	f.Args = args
	cmd := NewCmd(f)
	cmd.SetArgs(args)
	cmd.SetIn(f.IO.In)
	cmd.SetOut(f.IO.Out)
	cmd.SetErr(f.IO.ErrOut)
	err := cmd.Execute()
	if err == nil {
		return cmdutil.ExitOK
	}
	var ee *cmdutil.ExitError
	if !errors.As(err, &ee) || ee.Err != nil {
		// One line, whatever the error quotes: a planted name in it can
		// neither act on the terminal nor forge a line of its own.
		cmdutil.Say(f.IO.ErrOut, llm.Redact(err.Error()))
	}
	if isCobraUsage(err) {
		return cmdutil.ExitUsage
	}
	return cmdutil.Code(err)
}

// isCobraUsage recognises cobra's own argument errors, which do not pass
// through the flag error function.
func isCobraUsage(err error) bool {
	var ee *cmdutil.ExitError
	if errors.As(err, &ee) {
		return false
	}
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "requires exactly", "unknown flag", "unknown shorthand", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
