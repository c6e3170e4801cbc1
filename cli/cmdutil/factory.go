package cmdutil

import (
	"go.temporal.io/sdk/client"

	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine/temporal"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/persona"
)

// Factory gives commands what they need without globals, so tests can run
// every command in-process with their own streams and environment.
type Factory struct {
	IO *IOStreams
	// Getenv reads the environment.
	Getenv func(string) string
	// Loader collects the configuration layers; the root command adds flags.
	Loader *config.Loader
	// Logger writes diagnostics to ErrOut: with Verbose (--verbose) every
	// one, debug lines included, as slog's text lines; otherwise only
	// warnings, once each and in sot's own voice ("sot: warning: ..."),
	// never as log lines.
	Logger  *slog.Logger
	Verbose bool
	// Args are the process's arguments after the program's name, as
	// given: a run driven on a worker runs the same command there.
	Args []string
	// ReleaseStartup ends the hold on the collector that cmd/sot takes
	// while its packages initialise (internal/gcstart); nil for a Factory
	// built without it. See StartupOver.
	ReleaseStartup func()

	once sync.Once
	cfg  *config.Config
	src  config.Sources
	err  error

	libOnce sync.Once
	lib     *persona.Library
	libErr  error

	noteMu  sync.Mutex
	noted   map[string]bool
	noteOut io.Writer // where notes go: ErrOut, or the live display (LogTo)
	logged  *said     // what the logger has said without --verbose

	// The connection to Temporal and the blob store, under the temporal
	// executor (see remote).
	temporalOnce sync.Once
	temporal     client.Client
	blobs        temporal.Blobs
	temporalErr  error

	// The host of the run a worker drives this command's run as (see
	// hosted).
	hostOnce sync.Once
	host     *temporal.Host
	hostErr  error
}

// Note prints a note on ErrOut once per command: a stack built for each
// run of a comparison says the same thing once, not once a run.
func (f *Factory) Note(s string) {
	f.noteMu.Lock()
	defer f.noteMu.Unlock()
	if f.noted[s] {
		return
	}
	if f.noted == nil {
		f.noted = map[string]bool{}
	}
	f.noted[s] = true
	w := f.noteOut
	if w == nil {
		w = f.IO.ErrOut
	}
	Note(w, s)
}

// New returns a factory for the real process.
func New() *Factory {
	io := System()
	llm.RegisterEnvSecrets()
	f := &Factory{
		IO:     io,
		Getenv: os.Getenv,
		Loader: &config.Loader{Getenv: os.Getenv, Trust: config.DefaultTrustStore(os.Getenv)},
	}
	f.Logger = f.newLogger(io.ErrOut)
	return f
}

// StartupOver ends the hold on the collector the process took while its
// packages initialised (ReleaseStartup). A scenario ends it once it holds
// the collector itself (RunScenario), and a command that serves (sot mcp,
// sot worker) as it starts; any other command exits before it matters,
// and the hold ends by itself at the first collection, which its heap
// limit (64 MB) starts.
func (f *Factory) StartupOver() {
	if f.ReleaseStartup != nil {
		f.ReleaseStartup()
	}
}

// LogTo sends diagnostics and notes to w from now on (see Logger); a live
// status display passes itself, so that log lines never tear its lines.
func (f *Factory) LogTo(w io.Writer) {
	f.noteMu.Lock()
	f.noteOut = w
	f.noteMu.Unlock()
	f.Logger = f.newLogger(w)
	slog.SetDefault(f.Logger)
}

// Config loads the merged configuration once. A configuration problem is a
// usage error.
func (f *Factory) Config() (*config.Config, config.Sources, error) {
	f.once.Do(func() {
		f.cfg, f.src, f.err = f.Loader.Load()
		f.err = AsUsage(f.err)
		for _, w := range f.Loader.Lapsed() {
			Warn(f.IO.ErrOut, w)
		}
		for _, w := range config.ProjectWarnings(f.Loader.Ignored()) {
			Warn(f.IO.ErrOut, w)
		}
	})
	return f.cfg, f.src, f.err
}

// WorkDir is the directory sot runs in.
func (f *Factory) WorkDir() string {
	if f.Loader.WorkDir != "" {
		return f.Loader.WorkDir
	}
	wd, _ := os.Getwd()
	return wd
}

// PersonaDirs are the directories persona discovery reads.
func (f *Factory) PersonaDirs() persona.Dirs {
	d := persona.DefaultDirs(f.WorkDir(), config.UserDir(f.Getenv))
	if h := f.Getenv("HOME"); h != "" {
		d.Home = h
	}
	return d
}

// Library discovers the personas once and reports skipped files on ErrOut.
func (f *Factory) Library() (*persona.Library, error) {
	f.libOnce.Do(func() {
		f.lib, f.libErr = persona.Discover(f.PersonaDirs())
		if f.libErr == nil {
			f.lib.Vet(f.vetPersona)
			for _, p := range f.lib.Problems {
				Warn(f.IO.ErrOut, p.Error())
			}
		}
	})
	return f.lib, f.libErr
}

// Trust is the store of files the user trusted with "sot trust".
func (f *Factory) Trust() *config.TrustStore { return f.Loader.Trust }

// vetPersona clears the model of a project persona (or one named by path)
// when that model would run a program and the user has not trusted the
// file: a cloned repository must not choose a program to run.
func (f *Factory) vetPersona(p *persona.Persona) []persona.Problem {
	if p.Meta.Model == "" {
		return nil
	}
	cfg, _, err := f.Config()
	if err != nil {
		d := config.Defaults()
		cfg = &d
	}
	if !cfg.RunsProgram(p.Meta.Model) {
		return nil
	}
	check := f.Trust().TrustedFile(p.Path, f.WorkDir())
	if check.Trusted && check.Digest == p.Digest {
		return nil
	}
	model := p.Meta.Model
	p.Meta.Model = ""
	if check.Lapsed != "" {
		return []persona.Problem{{File: p.Path, Line: p.FrontmatterLine("model"),
			Message: fmt.Sprintf("model %q could run a program, so sot ignored it (%s takes the usual model): %s", model, p.ID, config.LapsedWarning(p.Path, check.Lapsed))}}
	}
	return []persona.Problem{{File: p.Path, Line: p.FrontmatterLine("model"),
		Message: fmt.Sprintf("model %q could run a program and this file is not trusted, so sot ignored it (%s takes the usual model); if you wrote this file or have read it, trust it as it is now with: sot trust %s", model, p.ID, p.Path)}}
}
