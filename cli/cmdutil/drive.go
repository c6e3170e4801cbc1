package cmdutil

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdktemporal "go.temporal.io/sdk/temporal"

	"github.com/sotlabs/sot/blob"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/engine/temporal"
	"github.com/sotlabs/sot/internal/project"
	"github.com/sotlabs/sot/internal/safedir"
	"github.com/sotlabs/sot/material"
)

// MaxProject bounds the project a run driven on a worker sends to the
// blob store.
const MaxProject = 4 << 30

// Drives says whether cmd, a scenario's command, is to be driven on a
// Temporal worker: the temporal executor with executor.drive worker (the
// default), a command that calls models (not a dry run, not --resolve),
// and not already the command a worker drives. A command a worker could
// not run as it was given (one outside a project, whose files could not
// be sent) runs its protocol here, with
// its calls on the workers, and says so.
func (f *Factory) Drives(cmd *cobra.Command) (bool, error) {
	if f.Getenv(temporal.EnvDriveWorkflow) != "" {
		return false, nil
	}
	cfg, _, err := f.Config()
	if err != nil {
		return false, err
	}
	if cfg.Executor.Kind != config.ExecutorTemporal || cfg.Executor.Drive == config.DriveClient {
		return false, nil
	}
	for _, name := range []string{"dry-run", "estimate", "help", "resolve", "show-prompt"} {
		if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed {
			return false, nil
		}
	}
	why := ""
	if wd, err := os.Getwd(); err != nil {
		return false, err
	} else if _, ok := project.Top(wd); !ok {
		why = "it runs outside a project (no .git, .sot or .paw above " + wd + "), whose files a worker could not be sent"
	}
	if why != "" {
		f.Note("this run's protocol runs here and only its model calls go to Temporal workers: " + why + "; it does not go on without this process")
		return false, nil
	}
	return true, nil
}

// Drive runs the scenario command (review, ask, debate) on a Temporal
// worker, which drives the whole run: the project's files go to the blob
// store, a workflow runs the same command on a worker in a copy of them,
// and this process follows it, printing what the command prints, and
// writes back into the project what it wrote. The run goes on without
// this process: Ctrl-C detaches, and the same command, run again, follows
// it again (its workflow id is made of the project and the arguments).
func (f *Factory) Drive(ctx context.Context, command string) error {
	cfg, _, err := f.Config()
	if err != nil {
		return err
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	top, ok := project.Top(wd)
	if !ok {
		return AsUsage(fmt.Errorf("%s is not in a project (no .git, .sot or .paw above it): a run driven on a worker sends its project's files", wd))
	}
	dir, _ := project.Within(top, wd)
	args, named, err := driveArgs(f.Args, command, top, wd)
	if err != nil {
		return AsUsage(err)
	}
	args = carried(cfg, args)
	c, blobs, err := f.connect(cfg)
	if err != nil {
		return err
	}
	e := temporal.Settings(cfg.Executor)
	skip := skipDirs(top, e.Blobs)
	files, err := material.ProjectFiles(ctx, top, named, skip)
	if err != nil {
		return fmt.Errorf("list the project's files: %w", err)
	}
	key := run.Key()
	sendStart := time.Now()
	ref, tree, err := blob.PutTree(ctx, blobs, top, files, MaxProject, func(p string, data []byte) bool {
		return path.Base(p) == run.StateFile && run.Authentic(data, key)
	})
	if err != nil {
		if errors.Is(err, blob.ErrTreeTooLarge) {
			return AsUsage(fmt.Errorf("%w; run it with executor.drive: client (the protocol runs here, only the calls go to workers)", err))
		}
		return fmt.Errorf("send the project to the blob store: %w", err)
	}
	var size int64
	for _, e := range tree.Files {
		size += e.Size
	}
	f.Logger.Debug("sent the project to the blob store", "files", len(tree.Files), "bytes", size, "took", time.Since(sendStart).Round(time.Millisecond))
	stdin, err := f.sendStdin(ctx, blobs, args)
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(string(ref) + "\x00" + filepath.ToSlash(dir) + "\x00" + command + "\x00" + strings.Join(args, "\x00") + "\x00" + string(stdin)))
	id := fmt.Sprintf("%s%s-%s-%x", temporal.WorkflowPrefix, "drive", command, sum[:8])
	host, _ := os.Hostname()
	mirror := sha256.Sum256([]byte(host + "\x00" + top))
	in := temporal.DriveInput{Command: command, Args: args, Dir: filepath.ToSlash(dir), Project: ref, Heartbeat: time.Duration(e.Heartbeat), Interactive: f.IO.InTTY,
		Mirror: fmt.Sprintf("%x", mirror[:16]), Stdin: stdin}
	wr, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: e.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
	}, temporal.DriveWorkflowName, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	switch {
	case errors.As(err, &started):
		// The same command on the same project finished before, and what
		// it wrote never came back: fetch it now.
		wr = c.GetWorkflow(ctx, id, "")
	case err != nil:
		return fmt.Errorf("start the run's workflow on Temporal at %s: %w", e.Address, err)
	}
	f.Note(fmt.Sprintf("the run is on Temporal: workflow %s drives it on a worker of task queue %s at %s (Ctrl-C detaches and leaves it running; the same command follows it again; sot runs --cancel %s stops it)", id, e.TaskQueue, e.Address, id))

	type result struct {
		out temporal.DriveOutput
		err error
	}
	got := make(chan result, 1)
	go func() {
		var out temporal.DriveOutput
		err := wr.Get(context.WithoutCancel(ctx), &out)
		got <- result{out, err}
	}()
	fl := &follower{}
	var qs *questioner
	if in.Interactive {
		qs = &questioner{asked: map[int]bool{}, busy: make(chan struct{}, 1), asker: TerminalAsker(f.IO), client: c, id: id}
	}
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	var res result
follow:
	for {
		select {
		case res = <-got:
			break follow
		case <-ctx.Done():
			Note(f.IO.ErrOut, fmt.Sprintf("detached: the run goes on in workflow %s; the same command follows it again and writes its outputs here; sot runs --cancel %s stops it", id, id))
			return &ExitError{Code: ExitInterrupted}
		case <-tick.C:
			f.followLines(ctx, c, id, fl)
			if qs != nil {
				qs.poll(ctx, f)
			}
		}
	}
	out := res.out
	var cancelled *sdktemporal.CanceledError
	if errors.As(res.err, &cancelled) {
		f.Note(fmt.Sprintf("the run's workflow %s was cancelled: the command stopped as Ctrl-C stops it, and what it had done is written here", id))
	}
	if res.err != nil {
		// A cancelled run's command was interrupted as Ctrl-C interrupts
		// it, and what it wrote was kept: take it from there.
		kept, err := blobs.Kept(ctx, temporal.DriveKept(id))
		if err != nil || temporal.DecodeDrive(kept, &out) != nil {
			return fmt.Errorf("the run's workflow %s: %w", id, res.err)
		}
	}
	if errb, err := blobs.Get(ctx, out.Stderr); err == nil {
		for i, l := range temporal.Lines(errb) {
			if i+1 > fl.printed {
				fmt.Fprintln(f.IO.ErrOut, l)
			}
		}
	}
	if err := f.writeBack(ctx, blobs, top, tree, out, key, outputDirs(args, top, wd)); err != nil {
		return err
	}
	if outb, err := blobs.Get(ctx, out.Stdout); err == nil {
		_, _ = f.IO.Out.Write(outb)
	}
	if out.Exit != 0 {
		return &ExitError{Code: out.Exit}
	}
	return nil
}

// carried puts before args what the user's configuration chose that the
// worker's must not: the default model, the budget and a disabled cache.
// A flag of the command line comes later and wins.
func carried(cfg *config.Config, args []string) []string {
	for _, b := range []struct {
		flag string
		v    string
		set  bool
	}{
		// The model the user chose (SOT_MODEL, their configuration)
		// goes with the run, as the budget does; --model given on the
		// command line comes later and wins.
		{"--model", cfg.DefaultModel, cfg.DefaultModel != ""},
		{"--max-calls", strconv.Itoa(cfg.Budget.MaxCalls), cfg.Budget.MaxCalls > 0},
		{"--max-tokens", strconv.Itoa(cfg.Budget.MaxTokens), cfg.Budget.MaxTokens > 0},
		{"--max-cost", strconv.FormatFloat(cfg.Budget.MaxCost, 'f', -1, 64), cfg.Budget.MaxCost > 0},
	} {
		// The budget of the user's configuration goes with the run too:
		// the worker's own configuration must not decide what is spent.
		if b.set {
			args = append([]string{b.flag + "=" + b.v}, args...)
		}
	}
	if cfg.Cache.Disabled && !slices.Contains(args, "--no-cache") {
		// SOT_NO_CACHE or the user's configuration: the worker's cache
		// must not answer either.
		args = append([]string{"--no-cache"}, args...)
	}
	return args
}

// follower is where following a driven command's output has got to.
type follower struct {
	worker  string // the worker whose command it follows
	printed int    // the lines of its standard error printed
}

// followLines prints the lines of the driven command's standard error
// that a worker's last heartbeat holds and that were not printed yet. A
// worker that takes the run over runs the command again from its start:
// its lines are numbered from 1 again.
func (f *Factory) followLines(ctx context.Context, c client.Client, id string, fl *follower) {
	qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	d, err := c.DescribeWorkflowExecution(qctx, id, "")
	if err != nil {
		return
	}
	for _, a := range d.GetPendingActivities() {
		var p temporal.DriveProgress
		if a.GetHeartbeatDetails() == nil || converter.GetDefaultDataConverter().FromPayloads(a.GetHeartbeatDetails(), &p) != nil {
			continue
		}
		if p.Worker != fl.worker {
			if fl.worker != "" {
				f.Note(fmt.Sprintf("worker %s took the run over from %s; the calls %s had made are not made again", p.Worker, fl.worker, fl.worker))
			}
			fl.worker, fl.printed = p.Worker, 0
		}
		first := p.Next - len(p.Lines)
		for i, l := range p.Lines {
			if n := first + i; n > fl.printed {
				fmt.Fprintln(f.IO.ErrOut, l)
				fl.printed = n
			}
		}
	}
}

// writeBack writes into the project what the driven command wrote: its
// outputs, and whatever changed under .sot. A file the project held is
// overwritten only under .sot or the output directory the command was
// given (outs, slash paths relative to top), every file is written
// without following a link, and a run record the worker vouched for is
// signed with this user's key.
func (f *Factory) writeBack(ctx context.Context, blobs temporal.Blobs, top string, sent *blob.Tree, out temporal.DriveOutput, key []byte, outs []string) error {
	had := map[string]bool{}
	for _, e := range sent.Files {
		had[e.Path] = true
	}
	dirs := map[string]*safedir.Dir{}
	defer func() {
		for _, d := range dirs {
			d.Close()
		}
	}()
	mayReplace := func(p string) bool {
		return strings.HasPrefix(p, ".sot/") || slices.ContainsFunc(outs, func(o string) bool { return strings.HasPrefix(p, o+"/") })
	}
	open := func(p string) (*safedir.Dir, error) {
		dir := filepath.Join(top, filepath.FromSlash(path.Dir(p)))
		if d, ok := dirs[dir]; ok {
			return d, nil
		}
		d, err := safedir.Open(top, dir)
		if err != nil {
			return nil, err
		}
		dirs[dir] = d
		return d, nil
	}
	skipped := 0
	for _, p := range out.Removed {
		// An earlier run's outputs the command cleared, as it would have
		// here; nothing else of the project is removed.
		if !mayReplace(p) {
			skipped++
			continue
		}
		if _, err := os.Lstat(filepath.Join(top, filepath.FromSlash(p))); err != nil {
			continue
		}
		d, err := open(p)
		if err != nil {
			return err
		}
		if err := d.Remove(path.Base(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	for _, e := range out.Files {
		if had[e.Path] && !mayReplace(e.Path) {
			skipped++
			continue
		}
		data, err := blobs.Get(ctx, e.Ref)
		if err != nil {
			return fmt.Errorf("fetch %s: %w", e.Path, err)
		}
		if path.Base(e.Path) == run.StateFile {
			if !e.Trusted {
				continue
			}
			if data, _ = run.Resign(data, key); data == nil {
				continue
			}
		}
		d, err := open(e.Path)
		if err != nil {
			return err
		}
		if err := d.WriteFile(path.Base(e.Path), data, 0o644); err != nil {
			return err
		}
	}
	if skipped > 0 {
		f.Note(fmt.Sprintf("%d files of the project that the run changed or removed on the worker were left as they are here", skipped))
	}
	return nil
}

// skipDirs leaves out of the project sent to a worker what no run reads:
// the MCP server's job records, and the user's cache and configuration
// and the blob store when they lie inside the project.
func skipDirs(top, blobs string) func(string) bool {
	var abs []string
	for _, fn := range []func() (string, error){os.UserCacheDir, os.UserConfigDir} {
		if d, err := fn(); err == nil {
			abs = append(abs, d)
		}
	}
	if blobs != "" && !strings.HasPrefix(blobs, "s3://") {
		abs = append(abs, blobs)
	}
	return func(rel string) bool {
		if rel == ".sot/mcp" {
			return true
		}
		p := filepath.Join(top, filepath.FromSlash(rel))
		return slices.Contains(abs, p)
	}
}

// RunDriven runs Drive until it ends or Ctrl-C (or SIGTERM) detaches it.
func RunDriven(ctx context.Context, f *Factory, command string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	sigCtx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return f.Drive(sigCtx, command)
}
