// Package status shows the progress of a run's model calls: on a terminal, a
// live line per group (specialist) under a line with the calls done over the
// calls planned and the time elapsed, redrawn in place; otherwise plain log
// lines, one per finished or failed call.
//
// Finding counts shown while a run goes on are those of each call's own
// answer: the synthesis later merges, grades and may demote them, so they
// are labelled as raised before the synthesis and never split by severity,
// which only the synthesis decides.
package status

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/termsafe"
	"github.com/sotlabs/sot/llm"
)

// Display renders engine events.
type Display struct {
	out io.Writer
	tty bool
	now func() time.Time

	mu       sync.Mutex
	start    time.Time
	expected int
	groups   map[string]*group
	order    []string
	drawn    int
	// seen holds every task queued, so the calls planned are never fewer
	// than the calls the run has made; finished counts those done or failed.
	seen     map[string]bool
	finished int
	// failed holds the tasks whose last attempt failed: one queued again
	// (on another model, say) is no longer counted as a failure.
	failed map[string]bool
	// firstWith names, for each error printed, the first call that failed
	// with it, so that an error shared by many calls is printed once.
	firstWith map[string]string
	// plain: the calls' answers are not review findings (Plain).
	plain bool
	// closed: the run is over (Close); nothing is drawn again.
	closed bool
}

type group struct {
	queued, running, done, failed int
	cancelled                     int // stopped by Ctrl-C
	findings                      int
	calls                         []callCount // per finished call, in order
	lastErr                       string
}

// callCount is the findings one call's answer raised.
type callCount struct {
	label string
	n     int
}

// New returns a display writing to out; tty selects live redrawing.
func New(out io.Writer, tty bool) *Display {
	return &Display{out: out, tty: tty, now: time.Now, groups: map[string]*group{}, seen: map[string]bool{}, failed: map[string]bool{}, firstWith: map[string]string{}}
}

// Plain makes the display count calls only, for runs whose answers are
// not review findings (a debate's turns): a finished call says how long it
// took, not what it raised.
func (d *Display) Plain() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.plain = true
}

// Expect tells the display how many calls the run plans, so that progress
// reads calls done over calls planned from the start; calls queued beyond
// it (debate rounds, a specialist run again on the default model) raise
// the count.
func (d *Display) Expect(calls int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.expected = calls
}

// Start redraws the live lines every interval on a terminal, so that the
// elapsed time moves while calls wait; stop ends it. Without a terminal it
// does nothing.
func (d *Display) Start(interval time.Duration) (stop func()) {
	if !d.tty || interval <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var once sync.Once
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				d.Tick()
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}

// Close ends the display: the lines drawn last stay where they are, and
// nothing is drawn again, so that what comes after (a question to the
// user, moderator mode, log lines) is never drawn over. Writes pass
// through as they are.
func (d *Display) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
}

// Tick redraws the live lines, with the time elapsed now. It does nothing
// before the first event or without a terminal.
func (d *Display) Tick() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.tty && len(d.order) > 0 {
		d.redraw()
	}
}

// Event takes one engine event.
func (d *Display) Event(e engine.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.start.IsZero() {
		d.start = d.now()
	}
	if e.Task.Support {
		// A hub's summary or the lead's synthesis: no persona's group, but
		// a call the run makes and its journal counts.
		d.support(e)
		return
	}
	g := d.groups[e.Task.Group]
	if g == nil {
		g = &group{}
		d.groups[e.Task.Group] = g
		d.order = append(d.order, e.Task.Group)
	}
	switch e.State {
	case engine.Queued:
		g.queued++
		d.seen[e.Task.ID] = true
		if d.failed[e.Task.ID] {
			delete(d.failed, e.Task.ID)
			g.failed--
			g.lastErr = ""
			d.finished--
		}
	case engine.Running:
		g.queued--
		g.running++
	case engine.Done:
		g.running--
		g.done++
		d.finished += calls(e.Resp)
		n := countFindings(e.Resp.JSON)
		g.findings += n
		g.calls = append(g.calls, callCount{label: callLabel(e.Task), n: n})
		switch {
		case d.tty:
		case d.plain:
			fmt.Fprintf(d.out, "sot: %s done in %s (%s)\n", termsafe.Line(e.Task.ID), e.Resp.Latency.Round(100*time.Millisecond), d.progress())
		default:
			fmt.Fprintf(d.out, "sot: %s done: %s raised in %s (%s)\n", termsafe.Line(e.Task.ID), plural(n, "finding", "findings"),
				e.Resp.Latency.Round(100*time.Millisecond), d.progress())
		}
	case engine.Failed:
		g.running--
		if errors.Is(e.Err, context.Canceled) {
			// Ctrl-C: the call did not fail, it was stopped; it is not
			// counted as done, and the same command runs it again.
			g.cancelled++
			if !d.tty {
				fmt.Fprintf(d.out, "sot: %s cancelled (%s)\n", termsafe.Line(e.Task.ID), d.progress())
			}
			break
		}
		g.failed++
		d.finished++
		d.failed[e.Task.ID] = true
		g.lastErr = firstLine(e.Err.Error())
		if first, ok := d.firstWith[g.lastErr]; ok && first != e.Task.ID {
			g.lastErr = "the same error as " + termsafe.Line(first)
		} else {
			d.firstWith[g.lastErr] = e.Task.ID
		}
		if !d.tty {
			fmt.Fprintf(d.out, "sot: %s failed: %s (%s)\n", termsafe.Line(e.Task.ID), g.lastErr, d.progress())
		}
	}
	if d.tty {
		d.redraw()
	}
}

// support counts a support call: queued, it is one more call planned;
// finished, one more done (a failed one too, as the journal has it).
func (d *Display) support(e engine.Event) {
	switch e.State {
	case engine.Queued:
		d.seen[e.Task.ID] = true
	case engine.Done:
		d.finished += calls(e.Resp)
	case engine.Failed:
		if !errors.Is(e.Err, context.Canceled) {
			d.finished++
		}
	}
	if d.tty && len(d.order) > 0 {
		d.redraw()
	}
}

// calls is how many provider calls an answer took: a structured answer
// asked again is two, as the meter and the journal count them.
func calls(r *llm.Response) int {
	if r == nil {
		return 1
	}
	return max(r.Calls, 1)
}

// progress is "5 of 19 calls done, 0:42 elapsed".
func (d *Display) progress() string {
	planned := max(d.expected, len(d.seen))
	return fmt.Sprintf("%d of %d calls done, %s elapsed", d.finished, planned, elapsed(d.now().Sub(d.start)))
}

// elapsed is a duration as m:ss, or h:mm:ss from an hour on.
func elapsed(t time.Duration) string {
	s := int(max(t, 0).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// callLabel names a call within its group: its task id after the group's
// part ("red-team", "red-team/c2", "round-2"), or "" for the group's only
// kind of call.
func callLabel(t *engine.Task) string {
	id := t.ID
	if i := strings.Index(id, "/"+t.Group); i >= 0 && t.Group != "" {
		id = id[i+1+len(t.Group):]
	} else {
		return id
	}
	return strings.TrimPrefix(id, "/")
}

// countFindings counts the findings of a structured review answer.
func countFindings(raw json.RawMessage) int {
	var a struct {
		Findings []json.RawMessage `json:"findings"`
	}
	if json.Unmarshal(raw, &a) != nil {
		return 0
	}
	return len(a.Findings)
}

// firstLine is the first line of an error, cut at 160 bytes and made safe
// for the terminal (the error may quote a model's answer or a file name).
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return termsafe.Line(s)
}

// Write prints p (a log line, a warning) above the live lines, which are
// drawn again below it, so messages during a run never tear the display.
// Without a terminal it writes p through.
func (d *Display) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.tty || d.closed {
		return d.out.Write(p)
	}
	if d.drawn > 0 {
		fmt.Fprintf(d.out, "\x1b[%dA\x1b[J", d.drawn)
		d.drawn = 0
	}
	n, err := d.out.Write(p)
	if len(d.order) > 0 {
		d.redraw()
	}
	return n, err
}

// redraw rewrites the progress line and every group's line in place.
func (d *Display) redraw() {
	if d.closed {
		return
	}
	if d.drawn > 0 {
		fmt.Fprintf(d.out, "\x1b[%dA", d.drawn)
	}
	// The escape sequences here are the display's own; a group's name
	// (a persona's, an observer's) is escaped so it can do none of that.
	width := 0
	for _, name := range d.order {
		width = max(width, len(termsafe.Line(name)))
	}
	fmt.Fprintf(d.out, "\x1b[2K  %s\n", d.progress())
	for _, name := range d.order {
		fmt.Fprintf(d.out, "\x1b[2K  %-*s  %s\n", width, termsafe.Line(name), d.line(d.groups[name]))
	}
	d.drawn = len(d.order) + 1
}

func (d *Display) line(g *group) string {
	total := g.queued + g.running + g.done + g.failed + g.cancelled
	switch {
	case g.cancelled > 0 && g.queued+g.running == 0:
		return fmt.Sprintf("cancelled (%d of %d calls done)", g.done, total)
	case g.failed > 0 && g.queued+g.running == 0:
		return fmt.Sprintf("failed (%d of %d calls): %s", g.failed, total, g.lastErr)
	case g.queued+g.running == 0 && d.plain:
		return fmt.Sprintf("done (%d of %d calls)", g.done, total)
	case g.queued+g.running == 0:
		return "done: " + raised(g)
	case g.running > 0 || g.done > 0:
		return fmt.Sprintf("running (%d of %d calls done)", g.done+g.failed, total)
	}
	return "queued"
}

// raised says what a group's calls found, per call when there were
// several, as raised before the synthesis.
func raised(g *group) string {
	s := plural(g.findings, "finding", "findings") + " raised"
	if len(g.calls) > 1 {
		var parts []string
		for i, c := range g.calls {
			if i == 4 {
				parts = append(parts, "...")
				break
			}
			label := c.label
			if label == "" {
				label = "call"
			}
			parts = append(parts, fmt.Sprintf("%s %d", termsafe.Line(label), c.n))
		}
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s + ", before the synthesis merges and grades them"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
