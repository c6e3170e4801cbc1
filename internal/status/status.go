// Package status shows the progress of a run's model calls: on a terminal, a
// live block (a line with the calls done over the calls planned and the
// time elapsed, then a line per group, a specialist or a debater) redrawn
// in place; otherwise plain log lines, one per call as it ends.
//
// A call is counted as the run's journal records it: one answer is one
// call, whether a provider gave it now (asked twice for a valid structured
// answer or not), the response cache gave it, or the journal replayed it
// (shown as replayed, not as new). So the count the display ends on is the
// number of records in the journal, and the command's summary prints the
// same count (Counts). A call a budget refused, one that failed and one
// that Ctrl-C stopped are not answers and are not in the journal: each is
// counted apart, as "not run: budget", "failed" or "cancelled". The
// budget's message is said once, with its figure, and the calls it stopped
// are listed on one line when the display closes.
//
// Finding counts shown while a run goes on are those of each call's own
// answer: the synthesis later merges, grades and may demote them, so they
// are labelled as raised before the synthesis and never split by severity,
// which only the synthesis decides.
//
// Nothing the display draws may land on what the user types: before a
// question is put to the user (Asking) it gives up its live lines for good
// (Detach), and once the run is over (Close) it draws nothing again.
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
	"github.com/sotlabs/sot/llm/middleware"
)

// Counts are a run's calls as the display counted them.
type Counts struct {
	// Done is the calls answered: one record each in the run's journal.
	Done int
	// Of Done, Replayed came from the run's journal and Cached from the
	// response cache; the others a provider answered now (Sent), and
	// AskedTwice of those were structured answers asked for a second time
	// because the first did not match the schema.
	Replayed, Cached, AskedTwice int
	// Failed, Budget (not run: a budget was reached) and Cancelled
	// (stopped by Ctrl-C) are calls that have no answer, so no record in
	// the journal either.
	Failed, Budget, Cancelled int
}

// Sent is how many of the calls answered a provider answered now.
func (c Counts) Sent() int { return c.Done - c.Replayed - c.Cached }

// outcome is where a task's last call ended.
type outcome int

const (
	pending outcome = iota
	answered
	failed
	stopped // not run: a budget was reached
	cancelled
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
	// queued counts the calls queued: a task queued again after it failed
	// (moved to the fallback model) is the same call, counted once by its
	// last outcome; c counts how the calls ended.
	queued int
	c      Counts
	last   map[string]outcome
	// firstWith names, for each error printed, the first call that failed
	// with it, so that an error shared by many calls is printed once.
	firstWith map[string]string
	// budget is what the budget that stopped calls reached, said once;
	// notRun, the calls it stopped, in order.
	budget string
	notRun []string
	// plain: the calls' answers are not review findings (Plain).
	plain bool
	// detached: the live lines are given up for good (Detach); plain lines
	// from then on. closed: the run is over (Close); nothing is written
	// again but what passes through Write.
	detached, closed bool
	// final: the progress counts only the calls the run made, as the
	// plan's estimate no longer matters.
	final bool
}

type group struct {
	queued, running, done, failed int
	budget                        int // not run: a budget was reached
	cancelled                     int // stopped by Ctrl-C
	replayed                      int
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
	return &Display{out: out, tty: tty, now: time.Now, groups: map[string]*group{}, last: map[string]outcome{}, firstWith: map[string]string{}}
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
// the count. Once the display closes, the count is the calls the run made.
func (d *Display) Expect(calls int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.expected = calls
}

// Counts returns the calls counted so far: once the run is over, what the
// command's summary reports, as the journal holds them.
func (d *Display) Counts() Counts {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.c
}

// live reports whether the display redraws its lines in place.
func (d *Display) live() bool { return d.tty && !d.detached && !d.closed }

// Start redraws the live lines every interval on a terminal, so that the
// elapsed time moves while calls wait; stop ends it, and once stop has
// returned no tick draws again. Without a terminal it does nothing.
func (d *Display) Start(interval time.Duration) (stop func()) {
	if !d.tty || interval <= 0 {
		return func() {}
	}
	done, exited := make(chan struct{}), make(chan struct{})
	var once sync.Once
	go func() {
		defer close(exited)
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
	return func() {
		once.Do(func() { close(done) })
		<-exited
	}
}

// Detach gives up the live lines for good: the block drawn last stays
// where it is with the cursor below it, and from now on the display
// writes plain lines only, one per call as without a terminal, and never
// moves the cursor. A question to the user comes after it (see Asking),
// so that nothing is drawn over the question or the answer being typed.
func (d *Display) Detach() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.detached = true
}

// Asking returns ask, detaching the display (Detach) before each question;
// nil stays nil.
func (d *Display) Asking(ask func(question string, choices []string) (string, error)) func(question string, choices []string) (string, error) {
	if ask == nil {
		return nil
	}
	return func(question string, choices []string) (string, error) {
		d.Detach()
		return ask(question, choices)
	}
}

// Close ends the display once the run is over: on a terminal the block is
// drawn a last time, counting the calls the run made, and left where it
// is; the calls a budget stopped are listed on one line; then nothing is
// drawn again, so that what comes after (the summary, a question to the
// user, moderator mode, log lines) is never drawn over. Writes pass
// through as they are.
func (d *Display) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.final = true
	if d.live() && len(d.order) > 0 {
		d.redraw()
	}
	d.closed = true
	if len(d.notRun) > 0 {
		const most = 10
		names := d.notRun
		more := ""
		if len(names) > most {
			names, more = names[:most], fmt.Sprintf(" and %d more", len(names)-most)
		}
		fmt.Fprintf(d.out, "sot: not run: budget (%s): %s%s\n", d.budget, termsafe.Line(strings.Join(names, "; ")), more)
	}
}

// Tick redraws the live lines, with the time elapsed now. It does nothing
// before the first event, without a terminal, or once the display is
// detached or closed.
func (d *Display) Tick() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.live() && len(d.order) > 0 {
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
	// A support call (a hub's summary, the lead's synthesis) belongs to no
	// persona's group, but it is a call the run makes and its journal
	// records: it is counted like any other.
	g := &group{}
	if !e.Task.Support {
		g = d.groups[e.Task.Group]
		if g == nil {
			g = &group{}
			d.groups[e.Task.Group] = g
			d.order = append(d.order, e.Task.Group)
		}
	}
	id := e.Task.ID
	say := func(format string, args ...any) {
		if !d.live() && !d.closed {
			fmt.Fprintf(d.out, "sot: %s "+format+" (%s)\n", append(append([]any{termsafe.Line(id)}, args...), d.progress())...)
		}
	}
	switch e.State {
	case engine.Queued:
		g.queued++
		if d.last[id] == failed {
			// The task runs again (on the fallback model): the same call,
			// counted by how it ends this time.
			d.c.Failed--
			g.failed--
			g.lastErr = ""
		} else {
			d.queued++
		}
		d.last[id] = pending
	case engine.Running:
		g.queued--
		g.running++
	case engine.Done:
		g.running--
		g.done++
		d.last[id] = answered
		d.c.Done++
		r := e.Resp
		if r == nil {
			r = &llm.Response{}
		}
		n := countFindings(r.JSON)
		findings := !d.plain && !e.Task.Support
		// A task that looked made a call for each round of tool calls too.
		looked := ""
		for _, src := range r.Rounds {
			// A round was a call not counted among those planned.
			d.c.Done++
			d.queued++
			if d.expected > 0 {
				d.expected++
			}
			switch src {
			case llm.SourceJournal:
				d.c.Replayed++
			case llm.SourceCache:
				d.c.Cached++
			}
		}
		if k := len(r.Rounds); k > 0 {
			looked = " after " + plural(k, "round", "rounds") + " of looks"
		}
		if findings {
			g.findings += n
			g.calls = append(g.calls, callCount{label: callLabel(e.Task), n: n})
		}
		raisedN := ""
		if findings {
			raisedN = ": " + plural(n, "finding", "findings") + " raised"
		}
		switch r.Source {
		case llm.SourceJournal:
			d.c.Replayed++
			g.replayed++
			say("replayed from the journal%s", raisedN)
		case llm.SourceCache:
			d.c.Cached++
			say("answered from the response cache%s", raisedN)
		default:
			twice := ""
			if r.Calls > 1+len(r.Rounds) {
				d.c.AskedTwice++
				twice = ", asked twice for a valid answer"
			}
			took := r.Latency.Round(100 * time.Millisecond)
			if findings {
				say("done%s in %s%s%s", raisedN, took, looked, twice)
			} else {
				say("done in %s%s%s", took, looked, twice)
			}
		}
	case engine.Failed:
		g.running--
		switch {
		case errors.Is(e.Err, context.Canceled):
			// Ctrl-C: the call did not fail, it was stopped; the same
			// command runs it again.
			d.last[id] = cancelled
			d.c.Cancelled++
			g.cancelled++
			say("cancelled")
		case errors.Is(e.Err, llm.ErrBudget):
			// The budget refused the call before it was sent: said once,
			// with its figure, and the call listed when the display closes.
			d.last[id] = stopped
			d.c.Budget++
			g.budget++
			if d.budget == "" {
				d.budget = budgetFigure(e.Err)
			}
			d.notRun = append(d.notRun, id)
		default:
			d.last[id] = failed
			d.c.Failed++
			g.failed++
			g.lastErr = firstLine(e.Err.Error())
			if first, ok := d.firstWith[g.lastErr]; ok && first != id {
				g.lastErr = "the same error as " + termsafe.Line(first)
			} else {
				d.firstWith[g.lastErr] = id
			}
			say("failed: %s", g.lastErr)
		}
	}
	if d.live() && len(d.order) > 0 {
		d.redraw()
	}
}

// budgetFigure is what a budget error says the budget reached, without
// its advice (the command gives that once, in its summary).
func budgetFigure(err error) string {
	var b *middleware.BudgetError
	if !errors.As(err, &b) {
		return firstLine(err.Error())
	}
	if b.Next != "" {
		return termsafe.Line(fmt.Sprintf("%s %s could be exceeded: %s, spent %s", b.Flag, b.Limit, b.Next, b.Spent))
	}
	return termsafe.Line(fmt.Sprintf("%s %s reached, spent %s", b.Flag, b.Limit, b.Spent))
}

// progress is "5 of 19 calls done, 0:42 elapsed", with the calls replayed,
// failed, not run and cancelled when there are any.
func (d *Display) progress() string {
	planned := max(d.expected, d.queued)
	if d.final {
		planned = d.queued
	}
	s := fmt.Sprintf("%d of %d calls done", d.c.Done, planned)
	if d.c.Replayed > 0 {
		s += fmt.Sprintf(" (%d replayed)", d.c.Replayed)
	}
	for _, n := range []struct {
		n    int
		what string
	}{{d.c.Failed, "failed"}, {d.c.Budget, "not run: budget"}, {d.c.Cancelled, "cancelled"}} {
		if n.n > 0 {
			s += fmt.Sprintf(", %d %s", n.n, n.what)
		}
	}
	return s + ", " + elapsed(d.now().Sub(d.start)) + " elapsed"
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
// Without a terminal, or once the display is detached or closed, it writes
// p through.
func (d *Display) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.live() {
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

// redraw rewrites the progress line and every group's line in place; the
// caller has checked that the display is live.
func (d *Display) redraw() {
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

// line is a group's state: queued, running, or how its calls ended.
func (d *Display) line(g *group) string {
	total := g.queued + g.running + g.done + g.failed + g.budget + g.cancelled
	replayed := ""
	if g.replayed > 0 {
		replayed = fmt.Sprintf(", %d replayed", g.replayed)
	}
	switch {
	case g.queued+g.running > 0 && g.running+g.done+g.failed+g.budget+g.cancelled == 0:
		return "queued"
	case g.queued+g.running > 0:
		return fmt.Sprintf("running (%d of %d calls done%s)", g.done, total, replayed)
	case g.cancelled > 0:
		return fmt.Sprintf("cancelled (%d of %d calls done)", g.done, total)
	case g.failed > 0:
		return fmt.Sprintf("failed (%d of %d calls): %s", g.failed, total, g.lastErr)
	case g.budget > 0 && g.done == 0:
		return "not run: budget"
	case g.budget > 0:
		return fmt.Sprintf("%d of %d calls done%s, %d not run: budget", g.done, total, replayed, g.budget)
	case d.plain:
		return fmt.Sprintf("done (%d of %d calls%s)", g.done, total, replayed)
	}
	return "done: " + raised(g)
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
