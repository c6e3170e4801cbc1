package cmdutil

import (
	"context"

	"go.temporal.io/sdk/client"

	"fmt"
	"io"
	"os"
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
			if f.Driven() {
				// The run is the workflow of its own (hosted): each call
				// is an activity of it, and the workflow's history is
				// what a cache would be.
				opts.Backend, opts.NoCache = temporal.Backend, true
				if f.host != nil {
					opts.JournalBefore = f.host.Began()
				}
				break
			}
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

// hosted returns the Host that runs the command a worker drives as the
// workflow of its own run (temporal.Host): its calls are the workflow's
// activities, its budget the workflow's state, and a worker that takes
// the run over from a dead one replays it from the workflow's history.
func (f *Factory) hosted() (*temporal.Host, error) {
	f.hostOnce.Do(func() {
		cfg, _, err := f.Config()
		if err != nil {
			f.hostErr = err
			return
		}
		c, blobs, err := f.connect(cfg)
		if err != nil {
			f.hostErr = err
			return
		}
		e := temporal.Settings(cfg.Executor)
		exitWhenOrphaned()
		host, _ := os.Hostname()
		said := f.IO.ErrOut
		f.host = &temporal.Host{Client: c, Blobs: blobs, Calls: e.TaskQueue, Drive: f.Getenv(temporal.EnvDriveWorkflow),
			Heartbeat: time.Duration(e.Heartbeat), Code: Code, Identity: fmt.Sprintf("%d@%s", os.Getpid(), host),
			Prices: llm.DefaultPrices().Merge(cfg.Prices),
			OnStart: func(id string) {
				f.Note(fmt.Sprintf("the run is workflow %s, served by this command on a task queue of its own; its calls are activities on task queue %s", id, e.TaskQueue))
			},
			OnReplay: func(id string) {
				Say(said, fmt.Sprintf("note: taking the run up from the history of workflow %s: the calls it holds answered are not made again, and what the run printed before is not printed again", id))
			}}
		// What the run printed before this process took it up from its
		// workflow's history was printed then: it is not printed again.
		f.IO.ErrOut = &quietWhile{w: said, quiet: f.host.Replaying}
	})
	return f.host, f.hostErr
}

// quietWhile drops what is written while quiet reports true.
type quietWhile struct {
	w     io.Writer
	quiet func() bool
}

func (q *quietWhile) Write(p []byte) (int, error) {
	if q.quiet() {
		return len(p), nil
	}
	return q.w.Write(p)
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

// Preconnect starts opening the connection the run's first call to the
// default model will go out on, while the run prepares
// (stack.Preconnect), when this process sends the calls itself (the
// local executor). A command calls it unless its run is dry: a dry run
// calls no model and opens nothing.
func (f *Factory) Preconnect(cfg *config.Config) {
	if cfg.Executor.Kind == "" || cfg.Executor.Kind == config.ExecutorLocal {
		stack.Preconnect(cfg, "")
	}
}
