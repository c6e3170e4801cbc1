package cmdutil

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/sotlabs/sot/internal/termsafe"
)

// A command speaks to its user in sot's own voice ("sot: note: ...",
// "sot: warning: ..."), never in log lines: slog's output (a time, a level,
// key=value pairs) is for --verbose. Without --verbose the factory's logger
// is a voiceHandler: diagnostics below slog.LevelWarn are dropped, and a
// warning from a library layer (the response cache that cannot be
// written, say) is said once per command as a warning of sot's own.

// voiceHandler is the log handler of a command run without --verbose.
type voiceHandler struct {
	w     io.Writer
	said  *said
	attrs []slog.Attr
	group string
}

// said is what a command's voice handlers have said, so that each
// message is said once per command, however many calls, runs or stacks
// say it.
type said struct {
	mu   sync.Mutex
	seen map[string]bool
}

// first reports whether line is said for the first time, and marks it.
func (s *said) first(line string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[line] {
		return false
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	s.seen[line] = true
	return true
}

// Enabled reports warnings and errors only.
func (h *voiceHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

// Handle writes "sot: warning: MSG (key=value, ...)" (or "sot: error:"),
// escaped for the terminal, unless the command has said MSG already.
func (h *voiceHandler) Handle(_ context.Context, r slog.Record) error {
	var kv []string
	add := func(a slog.Attr) bool {
		if a.Equal(slog.Attr{}) {
			return true
		}
		key := a.Key
		if h.group != "" {
			key = h.group + "." + key
		}
		kv = append(kv, key+"="+a.Value.Resolve().String())
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	msg := r.Message
	if len(kv) > 0 {
		msg += " (" + strings.Join(kv, ", ") + ")"
	}
	kind := "warning"
	if r.Level >= slog.LevelError {
		kind = "error"
	}
	// Said once by its message: the same warning for another call (the
	// cache's file for another answer) adds nothing.
	if !h.said.first(kind + ": " + r.Message) {
		return nil
	}
	line := fmt.Sprintf("sot: %s: %s\n", kind, termsafe.Line(msg))
	_, err := io.WriteString(h.w, line)
	return err
}

// WithAttrs returns a handler that adds attrs to every record.
func (h *voiceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	return &c
}

// WithGroup returns a handler that names the attributes after it name.key.
func (h *voiceHandler) WithGroup(name string) slog.Handler {
	c := *h
	if c.group != "" {
		name = c.group + "." + name
	}
	c.group = name
	return &c
}

// newLogger returns the logger writing to w: with f.Verbose slog's text
// lines from slog.LevelDebug up, else sot's voice.
func (f *Factory) newLogger(w io.Writer) *slog.Logger {
	if f.Verbose {
		return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	f.noteMu.Lock()
	if f.logged == nil {
		f.logged = &said{}
	}
	s := f.logged
	f.noteMu.Unlock()
	return slog.New(&voiceHandler{w: w, said: s})
}
