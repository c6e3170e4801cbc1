// Package worker implements "sot worker": a process that takes sot's
// workflows and model calls from a Temporal task queue and makes the calls
// with this machine's keys.
package worker

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/sotlabs/sot/ask"
	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/engine/temporal"
	"github.com/sotlabs/sot/llm/stack"
)

// Options are the inputs of "sot worker". How many calls it makes at once
// is the configuration's concurrency (the global --concurrency).
type Options struct {
	Queue       string
	Identity    string
	Concurrency int // 0: the configuration's
	// Drives is how many runs this worker drives at once (0: DefaultDrives).
	Drives int
}

// NewCmd returns "sot worker".
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Drive the runs started with --executor temporal and make their model calls",
		Long: `Join a Temporal task queue, drive the runs that sot review, sot ask and
sot debate start with --executor temporal (or executor: {kind: temporal}
in your configuration), and make their model calls.

A worker drives a run by running the same command in a copy of its
project, which the starting command sent through the blob store; the
outputs go back to the starting command, or to the same command run again
if that one is gone. A run whose worker dies is taken over by another,
which pays for no call that was answered.

A worker calls the models with this machine's keys, retries and limits, as
its own configuration gives them; the run's budget is the starting
command's, kept by the run's workflow. Start as many workers as you like,
on as many machines: each call goes to one of them, and a call whose worker
dies goes to another, without being paid for twice once it was answered.
Every worker and client of a queue must share the blob store
(executor.blobs): a directory on one machine or a shared volume, or an
S3-compatible bucket. --concurrency (default 20) bounds the calls this
worker makes at once, and --drives (default 4) the runs it drives, which
come from a queue of their own (the task queue's name and -drive) so that
they never take the slots the calls need.

The connection comes from the executor section of your configuration
(address, namespace, task_queue, TLS and API key for Temporal Cloud); see
docs/scale-out.md. Ctrl-C stops the worker; the calls it was making and
the runs it was driving go to another worker.`,
		Example: `  temporal server start-dev &      # a dev server on 127.0.0.1:7233
  sot worker &                     # on every machine with keys
  sot review --executor temporal   # anywhere that reaches the server`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return Run(cmd.Context(), f, o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Queue, "task-queue", "", "the task queue to take work from (default: executor.task_queue, or sot)")
	fl.StringVar(&o.Identity, "identity", "", "this worker's name in Temporal and in the runs' records (default: host and process id)")
	fl.IntVar(&o.Drives, "drives", 0, fmt.Sprintf("how many runs this worker drives at once, besides the calls it makes (default %d)", DefaultDrives))
	return cmd
}

// DefaultDrives is how many runs a worker drives at once by default: each
// is a sot command of its own, which waits on its calls most of the time.
const DefaultDrives = 4

// driver runs the commands of the runs this worker drives: this sot
// program, in copies of their projects in the user cache directory, with
// this worker's environment and keys.
func driver(blobs temporal.Blobs, identity string) (*temporal.Driver, error) {
	program, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the sot program to drive runs with: %w", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return nil, fmt.Errorf("no user cache directory to copy the projects of driven runs into: %w", err)
	}
	key := run.Key()
	return &temporal.Driver{
		Blobs: blobs, Program: program, Work: filepath.Join(cache, "sot", "drive"), Env: os.Environ(), Identity: identity,
		Sign:   func(data []byte) ([]byte, bool) { return run.Resign(data, key) },
		Signed: func(data []byte) bool { return run.Authentic(data, key) },
		// The copy's corpus index is not sent back: it describes the
		// copy's files, whose inodes and times are not the user's, so it
		// would only make the user's next question read every source again.
		Skip: func(dir string) bool {
			return dir == ".sot/mcp" || dir == ".git" || dir == filepath.ToSlash(ask.IndexDir)
		},
		// A kept copy keeps its own corpus index, which knows the copy's
		// files: a question over an unchanged corpus reads none again.
		Keep: func(dir string) bool { return dir == filepath.ToSlash(ask.IndexDir) },
	}, nil
}

// Run runs the worker until ctx is done.
func Run(ctx context.Context, f *cmdutil.Factory, o *Options) error {
	f.StartupOver()
	if ctx == nil {
		ctx = context.Background()
	}
	cfg, _, err := f.Config()
	if err != nil {
		return err
	}
	e := temporal.Settings(cfg.Executor)
	if o.Queue != "" {
		e.TaskQueue = o.Queue
	}
	if o.Identity == "" {
		host, _ := os.Hostname()
		o.Identity = fmt.Sprintf("%s@%d", host, os.Getpid())
	}
	c, err := temporal.Dial(e, f.Getenv, f.Logger)
	if err != nil {
		return err
	}
	defer c.Close()
	blobs, err := temporal.OpenBlobs(ctx, e, f.Getenv)
	if err != nil {
		return err
	}
	defer blobs.Close()
	// The worker's stack makes calls for runs whose budgets their
	// workflows keep: it has none of its own, and it never sends a call
	// on to Temporal again. Nor does it cache: the starting command's
	// stack has the response cache (or, with --no-cache, not).
	wcfg := *cfg
	wcfg.Budget = config.Budget{}
	wcfg.Executor = config.Executor{}
	stack.RegisterKeys(&wcfg, f.Getenv)
	st, err := stack.New(&wcfg, stack.Options{Getenv: f.Getenv, Logger: f.Logger, Note: f.Note, NoCache: true})
	if err != nil {
		return err
	}
	defer st.Close()
	conc := o.Concurrency
	if conc <= 0 {
		conc = cfg.Concurrency
	}
	if conc <= 0 {
		conc = 20
	}
	w := temporal.NewWorker(c, e.TaskQueue, &temporal.Activities{Provider: st, Blobs: blobs, Identity: o.Identity},
		sdkworker.Options{Identity: o.Identity, MaxConcurrentActivityExecutionSize: conc})
	d, err := driver(blobs, o.Identity)
	if err != nil {
		return err
	}
	drives := o.Drives
	if drives <= 0 {
		drives = DefaultDrives
	}
	dw := temporal.NewDriveWorker(c, e.TaskQueue, d, sdkworker.Options{Identity: o.Identity, MaxConcurrentActivityExecutionSize: drives})
	d.Log = func(s string) { fmt.Fprintf(f.IO.ErrOut, "sot worker %s: %s\n", o.Identity, s) }
	d.Cancel = func(ctx context.Context, id string) error { return c.CancelWorkflow(ctx, id, "") }
	// Copies a killed worker left behind: one a week old belongs to no
	// run under way.
	d.Tidy(7 * 24 * time.Hour)
	// The runs it drives come from a queue of their own, so that they
	// never hold every slot the calls need (see temporal.DriveQueue).
	if err := dw.Start(); err != nil {
		return fmt.Errorf("the worker could not start: %w", err)
	}
	defer dw.Stop()
	fmt.Fprintf(f.IO.ErrOut, "sot worker %s: taking work from task queue %s at %s (namespace %s), driving at most %d runs at once; Ctrl-C stops it\n", o.Identity, e.TaskQueue, e.Address, e.Namespace, drives)
	ctx, cancel := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer cancel()
	stop := make(chan any)
	go func() {
		<-ctx.Done()
		close(stop)
	}()
	if err := w.Run(stop); err != nil {
		return fmt.Errorf("the worker stopped: %w", err)
	}
	return nil
}
