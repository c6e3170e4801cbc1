// Package status shows the progress of a run's model calls: on a terminal, a
// live line per group (specialist) that is redrawn in place; otherwise plain
// log lines, one per finished or failed call.
package status

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/sotlabs/sot/engine"
)

// Display renders engine events.
type Display struct {
	out io.Writer
	tty bool

	mu     sync.Mutex
	groups map[string]*group
	order  []string
	drawn  int
	// failed holds the tasks whose last attempt failed: one queued again
	// (on another model, say) is no longer counted as a failure.
	failed map[string]bool
}

type group struct {
	queued, running, done, failed int
	severities                    map[string]int
	lastErr                       string
	started                       time.Time
}

// New returns a display writing to out; tty selects live redrawing.
func New(out io.Writer, tty bool) *Display {
	return &Display{out: out, tty: tty, groups: map[string]*group{}, failed: map[string]bool{}}
}

// Event takes one engine event.
func (d *Display) Event(e engine.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	g := d.groups[e.Task.Group]
	if g == nil {
		g = &group{severities: map[string]int{}}
		d.groups[e.Task.Group] = g
		d.order = append(d.order, e.Task.Group)
	}
	switch e.State {
	case engine.Queued:
		g.queued++
		if d.failed[e.Task.ID] {
			delete(d.failed, e.Task.ID)
			g.failed--
			g.lastErr = ""
		}
	case engine.Running:
		g.queued--
		g.running++
		if g.started.IsZero() {
			g.started = e.At
		}
	case engine.Done:
		g.running--
		g.done++
		n := countSeverities(e.Resp.JSON, g.severities)
		if !d.tty {
			fmt.Fprintf(d.out, "sot: %s done: %d finding(s) in %s\n", e.Task.ID, n, e.Resp.Latency.Round(100*time.Millisecond))
		}
	case engine.Failed:
		g.running--
		g.failed++
		d.failed[e.Task.ID] = true
		g.lastErr = firstLine(e.Err.Error())
		if !d.tty {
			fmt.Fprintf(d.out, "sot: %s failed: %s\n", e.Task.ID, g.lastErr)
		}
	}
	if d.tty {
		d.redraw()
	}
}

// countSeverities adds the severities of a structured review answer.
func countSeverities(raw json.RawMessage, into map[string]int) int {
	var a struct {
		Findings []struct {
			Severity string `json:"severity"`
		} `json:"findings"`
	}
	if json.Unmarshal(raw, &a) != nil {
		return 0
	}
	for _, f := range a.Findings {
		into[strings.ToLower(f.Severity)]++
	}
	return len(a.Findings)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

// Write prints p (a log line, a warning) above the live lines, which are
// drawn again below it, so messages during a run never tear the display.
// Without a terminal it writes p through.
func (d *Display) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.tty {
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

// redraw rewrites every group's line in place.
func (d *Display) redraw() {
	if d.drawn > 0 {
		fmt.Fprintf(d.out, "\x1b[%dA", d.drawn)
	}
	width := 0
	for _, name := range d.order {
		width = max(width, len(name))
	}
	for _, name := range d.order {
		fmt.Fprintf(d.out, "\x1b[2K  %-*s  %s\n", width, name, d.line(d.groups[name]))
	}
	d.drawn = len(d.order)
}

func (d *Display) line(g *group) string {
	total := g.queued + g.running + g.done + g.failed
	switch {
	case g.failed > 0 && g.queued+g.running == 0:
		return fmt.Sprintf("failed (%d of %d calls): %s", g.failed, total, g.lastErr)
	case g.queued+g.running == 0:
		return "done: " + d.counts(g)
	case g.running > 0 || g.done > 0:
		return fmt.Sprintf("running (%d of %d calls done)", g.done+g.failed, total)
	}
	return "queued"
}

func (d *Display) counts(g *group) string {
	var parts []string
	for _, s := range []string{"must-fix", "should-fix", "consider"} {
		if n := g.severities[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	if len(parts) == 0 {
		return "no findings"
	}
	return strings.Join(parts, ", ")
}
