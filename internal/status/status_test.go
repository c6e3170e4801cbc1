package status

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/llm"
)

func events(d *Display) {
	sec := &engine.Task{ID: "review/security", Group: "security"}
	tst := &engine.Task{ID: "review/testing", Group: "testing"}
	d.Event(engine.Event{Task: sec, State: engine.Queued})
	d.Event(engine.Event{Task: tst, State: engine.Queued})
	d.Event(engine.Event{Task: sec, State: engine.Running})
	d.Event(engine.Event{Task: tst, State: engine.Running})
	d.Event(engine.Event{Task: sec, State: engine.Done, Resp: &llm.Response{Latency: 1200 * time.Millisecond,
		JSON: json.RawMessage(`{"findings":[{"severity":"must-fix"},{"severity":"consider"}]}`)}})
	d.Event(engine.Event{Task: tst, State: engine.Failed, Err: errors.New("openai: rate limited\nmore")})
}

// clock is a display's clock that moves only when told.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newAt(out *bytes.Buffer, tty bool) (*Display, *clock) {
	c := &clock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	d := New(out, tty)
	d.now = c.now
	return d, c
}

func TestPlainLines(t *testing.T) {
	var b bytes.Buffer
	d, _ := newAt(&b, false)
	events(d)
	want := "sot: review/security done: 2 findings raised in 1.2s (1 of 2 calls done, 0:00 elapsed)\n" +
		"sot: review/testing failed: openai: rate limited (2 of 2 calls done, 0:00 elapsed)\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestLiveLines(t *testing.T) {
	var b bytes.Buffer
	d, _ := newAt(&b, true)
	events(d)
	out := b.String()
	last := out[strings.LastIndex(out, "\x1b[3A"):]
	for _, want := range []string{"2 of 2 calls done, 0:00 elapsed", "security  done: 2 findings raised, before the synthesis merges and grades them", "testing   failed (1 of 1 calls): openai: rate limited"} {
		if !strings.Contains(last, want) {
			t.Errorf("final frame lacks %q:\n%q", want, last)
		}
	}
	if !strings.Contains(out, "running (0 of 1 calls done)") {
		t.Error("a running line should appear")
	}
}

// A log line written during a run appears above the live lines, which are
// drawn again in full below it.
func TestLiveLinesSurviveLogLines(t *testing.T) {
	var b bytes.Buffer
	d := New(&b, true)
	sec := &engine.Task{ID: "review/security", Group: "security"}
	tst := &engine.Task{ID: "review/testing", Group: "testing"}
	d.Event(engine.Event{Task: sec, State: engine.Queued})
	d.Event(engine.Event{Task: tst, State: engine.Queued})
	b.Reset()
	d.Write([]byte("level=WARN msg=retrying\n"))
	out := b.String()
	want := "\x1b[3A\x1b[J" + "level=WARN msg=retrying\n"
	if !strings.HasPrefix(out, want) {
		t.Fatalf("the live lines were not cleared before the log line:\n%q", out)
	}
	rest := out[len(want):]
	if strings.Count(rest, "\x1b[2K") != 3 || !strings.Contains(rest, "security  queued") || !strings.Contains(rest, "testing   queued") {
		t.Errorf("the live lines were not drawn again below the log line:\n%q", rest)
	}
	b.Reset()
	d.Event(engine.Event{Task: sec, State: engine.Running})
	if !strings.HasPrefix(b.String(), "\x1b[3A") {
		t.Errorf("the next frame does not redraw the three lines in place:\n%q", b.String())
	}
}

func TestPlainWriteIsPassedThrough(t *testing.T) {
	var b bytes.Buffer
	New(&b, false).Write([]byte("sot: warning: x\n"))
	if b.String() != "sot: warning: x\n" {
		t.Errorf("got %q", b.String())
	}
}

// A failed call that is queued again (the specialist moved to the session
// default model) counts once, by its last outcome.
func TestRetriedTaskCountsByItsLastOutcome(t *testing.T) {
	var b bytes.Buffer
	d := New(&b, true)
	sec := &engine.Task{ID: "review/security", Group: "security"}
	d.Event(engine.Event{Task: sec, State: engine.Queued})
	d.Event(engine.Event{Task: sec, State: engine.Running})
	d.Event(engine.Event{Task: sec, State: engine.Failed, Err: errors.New("unknown model")})
	d.Event(engine.Event{Task: sec, State: engine.Queued})
	d.Event(engine.Event{Task: sec, State: engine.Running})
	d.Event(engine.Event{Task: sec, State: engine.Done, Resp: &llm.Response{JSON: json.RawMessage(`{"findings":[]}`)}})
	out := b.String()
	last := out[strings.LastIndex(out, "\x1b[2A"):]
	if !strings.Contains(last, "1 of 1 calls done") || !strings.Contains(last, "security  done: 0 findings raised") {
		t.Errorf("final frame:\n%q", last)
	}
}

// The live counts never contradict the summary the synthesis prints: they
// are each call's own, said to come before the synthesis merges and grades
// them, and never split by severity, which only the synthesis decides (a
// must-fix a specialist raised may end as a should-fix or an observation).
func TestLiveCountsAreRaisedPerCall(t *testing.T) {
	for _, tty := range []bool{true, false} {
		var b bytes.Buffer
		d, _ := newAt(&b, tty)
		red := &engine.Task{ID: "review/security/red-team", Group: "security"}
		pre := &engine.Task{ID: "review/security/premortem", Group: "security"}
		for _, task := range []*engine.Task{red, pre} {
			d.Event(engine.Event{Task: task, State: engine.Queued})
		}
		for _, task := range []*engine.Task{red, pre} {
			d.Event(engine.Event{Task: task, State: engine.Running})
			d.Event(engine.Event{Task: task, State: engine.Done, Resp: &llm.Response{
				JSON: json.RawMessage(`{"findings":[{"severity":"must-fix"},{"severity":"should-fix"}]}`)}})
		}
		out := b.String()
		for _, sev := range []string{"must-fix", "should-fix", "consider"} {
			if strings.Contains(out, sev) {
				t.Errorf("tty %v: the live output counts %s before the synthesis graded anything:\n%s", tty, sev, out)
			}
		}
		want := "review/security/red-team done: 2 findings raised"
		if tty {
			want = "security  done: 4 findings raised (red-team 2, premortem 2), before the synthesis merges and grades them"
		}
		if !strings.Contains(out, want) {
			t.Errorf("tty %v: output lacks %q:\n%q", tty, want, out)
		}
	}
}

// On a terminal a progress line shows the calls done over the calls
// planned and the time elapsed, and moves with the clock between events.
func TestProgressLine(t *testing.T) {
	var b bytes.Buffer
	d, c := newAt(&b, true)
	d.Expect(19)
	sec := &engine.Task{ID: "review/security", Group: "security"}
	d.Event(engine.Event{Task: sec, State: engine.Queued})
	d.Event(engine.Event{Task: sec, State: engine.Running})
	c.t = c.t.Add(42 * time.Second)
	d.Event(engine.Event{Task: sec, State: engine.Done, Resp: &llm.Response{JSON: json.RawMessage(`{"findings":[]}`)}})
	if !strings.Contains(b.String(), "1 of 19 calls done, 0:42 elapsed") {
		t.Errorf("no progress line with 1 of 19 calls and 0:42:\n%q", b.String())
	}
	b.Reset()
	c.t = c.t.Add(time.Hour + 18*time.Second)
	d.Tick()
	if !strings.Contains(b.String(), "1 of 19 calls done, 1:01:00 elapsed") {
		t.Errorf("a tick does not move the elapsed time:\n%q", b.String())
	}
	// Calls queued beyond the plan raise the count planned.
	for i := range 20 {
		d.Event(engine.Event{Task: &engine.Task{ID: fmt.Sprintf("review/security/round-2/%d", i), Group: "security"}, State: engine.Queued})
	}
	if !strings.Contains(b.String(), "1 of 21 calls done") {
		t.Errorf("21 calls queued, 19 expected: the count planned must follow:\n%q", b.String())
	}
	// Without a terminal a tick draws nothing, and Start does nothing.
	var plain bytes.Buffer
	p := New(&plain, false)
	p.Event(engine.Event{Task: sec, State: engine.Queued})
	p.Tick()
	p.Start(time.Millisecond)()
	if plain.Len() != 0 {
		t.Errorf("a plain display drew %q", plain.String())
	}
}

// An error shared by many calls is printed once; the others point at it.
func TestSharedErrorPrintedOnce(t *testing.T) {
	var out strings.Builder
	d := New(&out, false)
	err := errors.New("provider unavailable: connection refused")
	for _, id := range []string{"review/security", "review/testing", "review/correctness"} {
		task := &engine.Task{ID: id, Group: strings.TrimPrefix(id, "review/")}
		d.Event(engine.Event{Task: task, State: engine.Queued})
		d.Event(engine.Event{Task: task, State: engine.Running})
		d.Event(engine.Event{Task: task, State: engine.Failed, Err: err})
	}
	if n := strings.Count(out.String(), "connection refused"); n != 1 {
		t.Errorf("the shared error is printed %d times:\n%s", n, out.String())
	}
	if !strings.Contains(out.String(), "review/testing failed: the same error as review/security") {
		t.Errorf("a later failure does not point at the first:\n%s", out.String())
	}
}

// A plain display (a debate's) says how long each call took, never that
// it raised findings.
func TestPlainDisplay(t *testing.T) {
	var out strings.Builder
	d := New(&out, false)
	d.Plain()
	d.Expect(2)
	task := &engine.Task{ID: "debate/main/turn/01", Group: "main"}
	d.Event(engine.Event{Task: task, State: engine.Queued})
	d.Event(engine.Event{Task: task, State: engine.Running})
	d.Event(engine.Event{Task: task, State: engine.Done, Resp: &llm.Response{Text: "a turn", Latency: 1200 * time.Millisecond}})
	if got, want := out.String(), "sot: debate/main/turn/01 done in 1.2s (1 of 2 calls done, 0:00 elapsed)\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A group's name (an observer's from an ensemble file, a persona's), a
// task's id and an error's text are shown escaped: only the display's own
// escape sequences reach the terminal, and no name can clear the screen,
// set the window title or start a line of its own.
func TestUntrustedNamesAreEscaped(t *testing.T) {
	const evil = "obs\x1b]0;pwned\x07\x1b[2J\nsot: warning: fake"
	run := func(d *Display) {
		tk := &engine.Task{ID: "debate/" + evil, Group: evil}
		other := &engine.Task{ID: "review/x\u202e", Group: "x\u202e"}
		d.Event(engine.Event{Task: tk, State: engine.Queued})
		d.Event(engine.Event{Task: other, State: engine.Queued})
		d.Event(engine.Event{Task: tk, State: engine.Running})
		d.Event(engine.Event{Task: other, State: engine.Running})
		d.Event(engine.Event{Task: tk, State: engine.Done, Resp: &llm.Response{JSON: json.RawMessage(`{}`)}})
		d.Event(engine.Event{Task: other, State: engine.Failed, Err: errors.New("bad \x1b[31manswer\r")})
	}
	for _, tty := range []bool{false, true} {
		t.Run(fmt.Sprint("tty=", tty), func(t *testing.T) {
			var b bytes.Buffer
			d, _ := newAt(&b, tty)
			run(d)
			out := b.String()
			// The display's own sequences are ESC followed by "[<n>A",
			// "[J" or "[2K"; take them out and no ESC may be left.
			own := out
			for _, seq := range []string{"\x1b[2K", "\x1b[J", "\x1b[1A", "\x1b[2A", "\x1b[3A"} {
				own = strings.ReplaceAll(own, seq, "")
			}
			if strings.ContainsAny(own, "\x1b\x07\r\u202e") {
				t.Errorf("output holds a control character from a name:\n%q", out)
			}
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(strings.TrimLeft(l, "\x1b[2K "), "sot: warning: fake") {
					t.Errorf("a name forged a line: %q", l)
				}
			}
			if !strings.Contains(out, `obs\x1b]0;pwned\x07\x1b[2J\nsot: warning: fake`) {
				t.Errorf("the name is not shown escaped:\n%q", out)
			}
			if tty && !strings.Contains(out, "\x1b[2K") {
				t.Errorf("the display's own sequences are gone:\n%q", out)
			}
		})
	}
}

// The progress counts every call the run makes, as the meter and journal
// do: summaries (support calls) and an answer asked twice included. A call
// that Ctrl-C stopped is cancelled, not failed.
func TestProgressCountsWhatTheJournalCounts(t *testing.T) {
	var out bytes.Buffer
	d, _ := newAt(&out, false)
	d.Plain()
	d.Expect(4)
	turn := &engine.Task{ID: "debate/main/turn/01", Group: "literalist"}
	summary := &engine.Task{ID: "debate/main/summary/01", Group: "summaries", Support: true}
	question := &engine.Task{ID: "debate/question/x", Group: "x"}
	late := &engine.Task{ID: "debate/main/turn/02", Group: "symbolist"}
	for _, task := range []*engine.Task{turn, summary, question, late} {
		d.Event(engine.Event{Task: task, State: engine.Queued})
		d.Event(engine.Event{Task: task, State: engine.Running})
	}
	d.Event(engine.Event{Task: turn, State: engine.Done, Resp: &llm.Response{}})
	d.Event(engine.Event{Task: summary, State: engine.Done, Resp: &llm.Response{}})
	d.Event(engine.Event{Task: question, State: engine.Done, Resp: &llm.Response{Calls: 2}})
	d.Event(engine.Event{Task: late, State: engine.Failed, Err: fmt.Errorf("call: %w", context.Canceled)})
	text := out.String()
	if !strings.Contains(text, "debate/main/turn/02 cancelled") || strings.Contains(text, "turn/02 failed") {
		t.Errorf("a cancelled call reads as failed:\n%s", text)
	}
	if !strings.Contains(text, "(4 of 4 calls done") {
		t.Errorf("the count leaves out the summary or the second asking:\n%s", text)
	}
}

// Once closed, the display draws nothing: a log line or a note after the
// run, while the user types an answer, passes through as it is.
func TestClosedDisplayNeverRedraws(t *testing.T) {
	var out bytes.Buffer
	d, _ := newAt(&out, true)
	events(d)
	d.Close()
	out.Reset()
	d.Tick()
	fmt.Fprint(d, "sot: note: something\n")
	d.Event(engine.Event{Task: &engine.Task{ID: "x", Group: "x"}, State: engine.Queued})
	if got := out.String(); got != "sot: note: something\n" {
		t.Errorf("after Close the display wrote %q", got)
	}
}
