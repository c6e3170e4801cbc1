package engine

import (
	"fmt"
	"time"
)

// Hooks are how a run reaches outside itself: the user, the live display
// and the log. A protocol never asks the user or prints on its own; it
// goes through these, so that a durable executor can turn a question into
// a signal and a server can stream events. Every hook may be nil.
type Hooks struct {
	// Ask puts a question to the user, with the choices offered (none for a
	// free answer), and returns the answer; nil when nobody can be asked.
	Ask func(question string, choices []string) (string, error)
	// Events receives every change of a task's state.
	Events func(Event)
	// Warn receives warnings and notes as they happen.
	Warn func(string)
	// Progress receives one line per step ("synthesizing ...").
	Progress func(string)
	// Now reads the clock (nil: time.Now), for the times a run records.
	Now func() time.Time
}

// Time is the time now, by the hooks' clock.
func (h Hooks) Time() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// Warnf sends a warning, when anyone listens.
func (h Hooks) Warnf(format string, args ...any) {
	if h.Warn != nil {
		h.Warn(fmt.Sprintf(format, args...))
	}
}

// Progressf reports a step, when anyone listens.
func (h Hooks) Progressf(format string, args ...any) {
	if h.Progress != nil {
		h.Progress(fmt.Sprintf(format, args...))
	}
}
