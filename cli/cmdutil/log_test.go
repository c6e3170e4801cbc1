package cmdutil

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// Without --verbose a command logs in sot's own voice: a warning once per
// command, escaped, however many loggers (a stack a run, the live
// display's) say it, and nothing below a warning; with --verbose, slog's
// lines, debug included.
func TestLoggerSpeaksInSotsVoice(t *testing.T) {
	tests := []struct {
		name    string
		verbose bool
		log     func(f *Factory, a, b *bytes.Buffer)
		wantA   string
		wantB   string
	}{
		{"a warning once, in sot's voice", false, func(f *Factory, a, b *bytes.Buffer) {
			f.LogTo(a)
			f.Logger.Warn("could not write the response cache", "err", "disk full")
			f.Logger.Info("structured answer mended", "call", "review/security")
			f.Logger.Debug("model call failed; retrying")
			f.LogTo(b) // the live display takes over
			f.Logger.Warn("could not write the response cache", "err", "disk full")
			f.Logger.With("model", "m").Error("x\x1b[2J", "n", 3)
		}, "sot: warning: could not write the response cache (err=disk full)\n", `sot: error: x\x1b[2J (model=m, n=3)` + "\n"},
		{"log lines with --verbose", true, func(f *Factory, a, b *bytes.Buffer) {
			f.LogTo(a)
			f.Logger.Debug("model call failed; retrying", "attempt", 1)
			f.Logger.Warn("could not write the response cache")
		}, `level=DEBUG msg="model call failed; retrying" attempt=1`, `level=WARN msg="could not write the response cache"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a, b bytes.Buffer
			f := &Factory{IO: &IOStreams{ErrOut: io.Discard}, Verbose: tt.verbose}
			tt.log(f, &a, &b)
			if tt.verbose {
				if !strings.Contains(a.String(), tt.wantA) || !strings.Contains(a.String(), tt.wantB) {
					t.Errorf("got %q", a.String())
				}
				return
			}
			if a.String() != tt.wantA || b.String() != tt.wantB {
				t.Errorf("got %q and %q, want %q and %q", a.String(), b.String(), tt.wantA, tt.wantB)
			}
			if strings.Contains(a.String()+b.String(), "level=") || strings.Contains(a.String()+b.String(), "time=") {
				t.Error("a log line leaked")
			}
		})
	}
}

// The process's factory logs in sot's voice until --verbose asks for more.
func TestNewFactoryLogsInSotsVoice(t *testing.T) {
	f := New()
	if _, ok := f.Logger.Handler().(*voiceHandler); !ok || f.Logger.Enabled(t.Context(), slog.LevelInfo) {
		t.Errorf("the default logger is %T", f.Logger.Handler())
	}
}

// A note is said once per command, wherever notes go by then.
func TestNoteOncePerCommand(t *testing.T) {
	var errOut, display bytes.Buffer
	f := &Factory{IO: &IOStreams{ErrOut: &errOut}}
	note := "no price is known for openai:qwen-local, so its calls count no cost"
	f.Note(note)
	f.LogTo(&display)
	f.Note(note)
	f.Note("no price is known for openai:other\x1b[2J")
	if errOut.String() != "sot: note: "+note+"\n" || display.String() != `sot: note: no price is known for openai:other\x1b[2J`+"\n" {
		t.Errorf("got %q and %q", errOut.String(), display.String())
	}
}
