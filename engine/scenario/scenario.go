// Package scenario runs one run of a scenario: it owns what review, ask and
// debate would otherwise each repeat, so that a scenario supplies only its
// plan, its protocol and its renderers.
//
// The runner holds the options every scenario shares (Options), begins a
// run (the provider stack with its budgets, the price check under a cost
// cap, the run directory and its lock, the signed record and the journal
// that replays finished calls: Begin), hands the protocol its Executor,
// writes the files the renderers made (Run.Write, Run.WriteLater), ends the
// run (Run.Finish records what was written once the journal is safe), and
// names what the run came to in the errors every front end turns into the
// same exit code (PartialError, FailedError, ExitCode).
//
// A new scenario is about one file of glue: see the toy scenario in
// toy_test.go, which plans, runs, renders, resumes and lists through this
// package alone.
package scenario

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/middleware"
	"github.com/sotlabs/sot/llm/stack"
)

// Options are the options every scenario takes. A scenario's own options
// embed them, so a front end (the CLI, a server, an evaluation harness)
// fills the same fields the same way for each.
type Options struct {
	// Dir is where the project is looked for (default ".").
	Dir string
	// OutputDir is the run's directory (default: a directory of the run's
	// id under .sot at the project's top; each scenario names its own).
	OutputDir string
	// Model is the model the run calls (default: the config's).
	Model string
	// FollowSymlinks reads named inputs that lead through a symbolic link
	// out of their project (--follow-symlinks).
	FollowSymlinks bool

	// Config holds the budgets, concurrency, cache and prices the stack is
	// built with, and the scenario's own settings.
	Config *config.Config
	// Getenv reads the providers' keys (default os.Getenv).
	Getenv func(string) string
	// NewStack builds the provider stack; Begin passes "" and attaches the
	// run's journal itself.
	NewStack func(journal string) (*stack.Stack, error)

	// Fresh discards the journal of an earlier run of the same work.
	Fresh bool
	// Command is the command line that started the run, recorded so that
	// a listing can say how to resume it.
	Command string
	// Formats are the machine outputs the run writes besides its
	// human-readable ones; Version names sot in them.
	Formats []string
	Version string

	engine.Hooks
	// NewExecutor makes the Executor the calls go through (nil: an
	// engine.Local in this process).
	NewExecutor engine.NewExecutor
}

// Spec is what a scenario tells Begin about the run it plans.
type Spec struct {
	// What names the work in messages: "a review", "an answer".
	What string
	// Other describes, in a warning, an earlier run of other work whose
	// files Begin cleared from the directory: "another question or corpus".
	// With none, runs replace each other there without a word (the
	// index's analysis of the sources).
	Other string
	// Top is the project's top; OutputDir the run's directory in it.
	Top, OutputDir string
	// Layout names the files the scenario writes there.
	Layout run.Layout
	// State is the run's record: its id, nonce and the scenario's payload.
	// A zero Created is set to the run's start.
	State run.State
	// Models are every model the run may call: under a cost cap, a model
	// with no known price refuses the run before anything is touched.
	Models []string
}

// Run is a run under way: the directory it owns, its journal and the
// provider stack that meters, budgets and journals its calls.
type Run struct {
	Dir     *run.Dir
	Journal *middleware.Journal
	Stack   *stack.Stack
	// Start is when the run began, by the hooks' clock.
	Start time.Time

	o         *Options
	outputDir string
}

// Begin starts the run spec describes: it builds the stack (a run it
// refuses, such as one under --max-cost with an unpriced model, touches no
// directory), takes the run directory and its lock, records the run and
// opens its journal, replaying the calls an earlier, interrupted run of
// the same work finished. An earlier run of other work there is cleared
// and named in a warning. Close the Run when it is done.
func Begin(o *Options, spec Spec) (*Run, error) {
	start := o.Time()
	st, err := o.NewStack("")
	if err != nil {
		return nil, err
	}
	if err := st.Meter.CheckPrices(spec.Models...); err != nil {
		st.Close()
		return nil, err
	}
	if spec.State.Created.IsZero() {
		spec.State.Created = start.UTC()
	}
	d, j, old, err := run.Begin(spec.Top, spec.OutputDir, spec.Layout, spec.What, spec.State, o.Fresh, st)
	if err != nil {
		st.Close()
		return nil, err
	}
	id := spec.State.RunID
	if a, ok := st.Backend.(attacher); ok {
		a.Attach(runName(spec, d, o.Fresh), j.Recorded)
	}
	switch {
	case old == id && spec.Other != "":
		o.Warnf("%s held a run.json that sot did not write for you (it may have come with the repository, or sot's key in the user cache directory was replaced); its files were removed and the run starts afresh", spec.OutputDir)
	case old != "" && spec.Other != "":
		o.Warnf("%s held run %s, %s; its files were removed and run %s writes there now", spec.OutputDir, old, spec.Other, id)
	}
	return &Run{Dir: d, Journal: j, Stack: st, Start: start, o: o, outputDir: spec.OutputDir}, nil
}

// runName names one run for a backend that serves runs (the workflow of
// a run on Temporal): the work and its id, and a hash of the run's
// directory and when the run began, so that the same work in another
// directory, or begun afresh (--fresh), is another run, as its journal is.
func runName(spec Spec, d *run.Dir, fresh bool) string {
	created := spec.State.Created
	if !fresh {
		if s := d.State(nil); s.RunID == spec.State.RunID && s.Authentic && !s.Created.IsZero() {
			created = s.Created // resumed: the run began then
		}
	}
	sum := sha256.Sum256([]byte(d.Path() + "\x00" + created.UTC().Format(time.RFC3339Nano)))
	return fmt.Sprintf("%s %s %x", spec.What, spec.State.RunID, sum[:4])
}

// attacher is a stack backend that serves one run at a time, named by
// its scenario and id (engine/temporal.Remote: the run's workflow), told
// how many answers of each request the run's journal held.
type attacher interface {
	Attach(run string, recorded func(key string) int)
}

// finisher is a stack backend told when its run is finished, so that what
// it holds open for the run can end (the run's workflow).
type finisher interface {
	Finish(ctx context.Context) error
}

// CheckPrices refuses, as Begin does before anything is touched, models
// with no known price under a cost cap, as an *engine.UserError: a dry run
// calls it so that it fails as the run would.
func CheckPrices(o *Options, models ...string) error {
	st, err := o.NewStack("")
	if err != nil {
		return err
	}
	defer st.Close()
	return engine.AsUserError(st.Meter.CheckPrices(models...))
}

// Executor is the Executor the run's calls go through; fallback is the
// model a call whose own model is unusable runs on ("" for none).
func (r *Run) Executor(fallback string) engine.Executor {
	return r.o.NewExecutor.Make(r.Stack, r.o.Hooks, fallback)
}

// Close closes the stack, then the directory. The journal's last records
// are synced to disk first; when that fails, a warning says that a resumed
// run may pay for its last calls again.
func (r *Run) Close() {
	if err := r.Stack.Close(); err != nil {
		r.o.Warnf("the run's journal: %v; the same command run again may pay again for the calls whose answers it had not saved", err)
	}
	r.Dir.Close()
}

// Spent is what the run cost so far, with the calls replayed from its
// journal at what they cost when they were made.
func (r *Run) Spent() stack.Spent { return r.Stack.Spent() }

// Wall is the time since the run began, by the hooks' clock.
func (r *Run) Wall() time.Duration { return r.o.Time().Sub(r.Start) }

// File is one output a renderer made: its name in the run's directory and
// its bytes. A nil Data removes the file, so that an output an earlier
// invocation wrote and this one does not (a format not asked for again)
// describes nothing stale.
type File struct {
	Name string
	Data []byte
}

// Write writes files into the run's directory, never through a symlink,
// and returns the paths of those written (under the OutputDir as given).
func (r *Run) Write(files ...File) ([]string, error) {
	var paths []string
	for _, f := range files {
		if f.Data == nil {
			if err := r.Dir.Remove(f.Name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			continue
		}
		if err := r.Dir.WriteFile(f.Name, f.Data, 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, filepath.Join(r.outputDir, f.Name))
	}
	return paths, nil
}

// Stream writes the file name in the run's directory as render produces
// it, for an output too large to hold whole (every pair the conflict
// detector classified), and returns its path. The file is written in
// place: a run stopped meanwhile leaves it cut short, and the same
// command writes it again.
func (r *Run) Stream(name string, render func(w io.Writer) error) (string, error) {
	f, err := r.Dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", name, err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	err = render(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", name, err)
	}
	return filepath.Join(r.outputDir, name), nil
}

// WriteLater renders and writes files beside whatever the protocol does
// next (a review writes its specialists' files while the triage lead
// thinks); the returned func waits for them. The renderer must read only
// what nothing changes meanwhile.
func (r *Run) WriteLater(render func() ([]File, error)) (wait func() ([]string, error)) {
	type done struct {
		paths []string
		err   error
	}
	ch := make(chan done, 1)
	go func() {
		files, err := render()
		if err != nil {
			ch <- done{nil, err}
			return
		}
		paths, err := r.Write(files...)
		ch <- done{paths, err}
	}()
	return func() ([]string, error) {
		d := <-ch
		return d.paths, d.err
	}
}

// Finish ends the run: it waits until the journal's record is on disk,
// then adds written to the record's list of the run's files, so that a
// later run of other work there removes them and nothing else.
func (r *Run) Finish(written []string) error {
	if err := r.Journal.Ready(); err != nil {
		return err
	}
	if err := r.Dir.RecordWritten(written); err != nil {
		return err
	}
	if f, ok := r.Stack.Backend.(finisher); ok {
		// Every answer is journaled: the run's workflow may end. A
		// failure to say so leaves it to end when it has been idle.
		if err := f.Finish(context.Background()); err != nil {
			r.o.Warnf("could not tell the run's workflow that the run is finished (%v); it ends by itself once idle", err)
		}
	}
	return nil
}

// Interrupted is the error of a run that ctx stopped: it says how to
// continue.
func Interrupted(err error) error {
	return fmt.Errorf("interrupted: %w (run the same command again to continue; finished calls are replayed)", err)
}

// UserErrors marks the errors that are the caller's to fix (a missing key,
// a provider's configuration, no model named) as *engine.UserError, which
// front ends exit 2 on; other errors pass unchanged.
func UserErrors(err error) error {
	if err != nil && (errors.Is(err, llm.ErrMissingKey) || errors.Is(err, llm.ErrConfig) || errors.Is(err, config.ErrNoModel)) {
		return engine.AsUserError(err)
	}
	return err
}
