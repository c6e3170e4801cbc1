package cmdutil

import (
	"context"

	"go.temporal.io/sdk/client"

	"fmt"
	"slices"
	"time"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine/temporal"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/stack"
)

// StackOptions are what differs between the stacks commands build.
type StackOptions struct {
	// NoCache neither reads nor writes the response cache (--fresh).
	NoCache bool
}

// NewStack returns the function a scenario calls to build its provider
// stack, journaling to the path it is given. The stack logs through the
// factory's Logger as it is when the stack is built (a live display may
// have taken it over by then), and notes once per command.
//
// Under the temporal executor (executor.kind, --executor) the stack's
// calls go to the run's workflow, where `sot worker` processes make them.
func (f *Factory) NewStack(cfg *config.Config, so StackOptions) func(journal string) (*stack.Stack, error) {
	return func(journal string) (*stack.Stack, error) {
		opts := stack.Options{JournalPath: journal, Getenv: f.Getenv, Logger: f.Logger, Note: f.Note, NoCache: so.NoCache}
		switch cfg.Executor.Kind {
		case "", config.ExecutorLocal:
		case config.ExecutorTemporal:
			r, err := f.remote(cfg)
			if err != nil {
				return nil, err
			}
			opts.Backend = r
		default:
			return nil, AsUsage(fmt.Errorf("executor %q is not one sot knows: use local or temporal", cfg.Executor.Kind))
		}
		return stack.New(cfg, opts)
	}
}

// connect returns the factory's one connection to Temporal and its blob
// store, made on first use.
func (f *Factory) connect(cfg *config.Config) (client.Client, temporal.Blobs, error) {
	f.temporalOnce.Do(func() {
		e := temporal.Settings(cfg.Executor)
		c, err := temporal.Dial(e, f.Getenv, f.Logger)
		if err != nil {
			f.temporalErr = err
			return
		}
		blobs, err := temporal.OpenBlobs(context.Background(), e, f.Getenv)
		if err != nil {
			c.Close()
			f.temporalErr = err
			return
		}
		f.temporal, f.blobs = c, blobs
	})
	return f.temporal, f.blobs, f.temporalErr
}

// remote returns a provider that sends calls to Temporal workers, over
// the factory's one connection.
func (f *Factory) remote(cfg *config.Config) (*temporal.Remote, error) {
	if _, _, err := f.connect(cfg); err != nil {
		return nil, err
	}
	e := temporal.Settings(cfg.Executor)
	r := temporal.NewRemote(f.temporal, f.blobs, e.TaskQueue, temporal.RunInput{MaxCalls: cfg.Budget.MaxCalls, MaxTokens: cfg.Budget.MaxTokens,
		MaxCost: cfg.Budget.MaxCost, Prices: llm.DefaultPrices().Merge(cfg.Prices), Heartbeat: time.Duration(e.Heartbeat)}, e.MaxInFlight)
	r.Pin = f.Getenv(temporal.EnvDriveWorkflow)
	r.OnStart = func(id string) {
		if r.Pin != "" {
			// The command a worker drives: its user follows the drive
			// workflow, and Ctrl-C is theirs.
			f.Note(fmt.Sprintf("the run's calls go to workflow %s", id))
			return
		}
		f.Note(fmt.Sprintf("calls run on Temporal: workflow %s, task queue %s at %s (Ctrl-C detaches; the same command joins it again)", id, e.TaskQueue, e.Address))
	}
	return r, nil
}

// MissingKey refuses, once and before any call, a run whose models include
// one whose provider has no key: every call on it would fail with the same
// error. It is a usage error that names the provider and what to set.
func (f *Factory) MissingKey(cfg *config.Config, models ...string) error {
	models = slices.Clone(models)
	slices.Sort(models)
	for _, m := range slices.Compact(models) {
		if err := stack.MissingKey(cfg, f.Getenv, m); err != nil {
			return AsUsage(fmt.Errorf("%w; no model was called (sot doctor checks every configured model)", err))
		}
	}
	return nil
}
