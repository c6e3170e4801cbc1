package status

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/middleware"
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
		"sot: review/testing failed: openai: rate limited (1 of 2 calls done, 1 failed, 0:00 elapsed)\n"
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
	for _, want := range []string{"1 of 2 calls done, 1 failed, 0:00 elapsed", "security  done: 2 findings raised, before the synthesis merges and grades them", "testing   failed (1 of 1 calls): openai: rate limited"} {
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

// ev is one event for a table of them.
func ev(t *engine.Task, s engine.State, resp *llm.Response, err error) engine.Event {
	return engine.Event{Task: t, State: s, Resp: resp, Err: err}
}

// finish queues, starts and ends a task: with resp, done; with err, failed.
func finish(d *Display, t *engine.Task, resp *llm.Response, err error) {
	d.Event(ev(t, engine.Queued, nil, nil))
	d.Event(ev(t, engine.Running, nil, nil))
	if err != nil {
		d.Event(ev(t, engine.Failed, nil, err))
		return
	}
	d.Event(ev(t, engine.Done, resp, nil))
}

// The display counts a call as the run's journal records it: one answer
// is one call, whoever gave it, and an answer asked twice is still one; a
// support call (a summary) counts like any other. A call that failed, one
// a budget refused and one Ctrl-C stopped have no answer and no record, so
// they are not counted done, each shown for what it is. The count the
// display ends on is the count Counts gives the command's summary.
func TestCountsAreTheJournals(t *testing.T) {
	budget := &middleware.BudgetError{Flag: "--max-calls", Limit: "4", Spent: "4 calls"}
	type call struct {
		id      string
		support bool
		resp    *llm.Response
		err     error
	}
	tests := []struct {
		name  string
		calls []call
		want  Counts
		lines []string // in the plain output
		not   []string // nowhere in the plain output
		final string   // the last frame on a terminal, once closed
	}{
		{
			name: "new, cached, asked twice, a summary",
			calls: []call{
				{id: "debate/main/turn/01", resp: &llm.Response{Latency: time.Second}},
				{id: "debate/main/turn/01/summary", support: true, resp: &llm.Response{}},
				{id: "debate/main/turn/02/summary", support: true, resp: &llm.Response{Source: llm.SourceCache}},
				{id: "debate/question/x", resp: &llm.Response{Calls: 2}},
			},
			want: Counts{Done: 4, Cached: 1, AskedTwice: 1},
			lines: []string{
				"sot: debate/main/turn/01 done in 1s (1 of 12 calls done, 0:00 elapsed)\n",
				"sot: debate/main/turn/01/summary done in 0s (2 of 12 calls done, 0:00 elapsed)\n",
				"sot: debate/main/turn/02/summary answered from the response cache (3 of 12 calls done, 0:00 elapsed)\n",
				"sot: debate/question/x done in 0s, asked twice for a valid answer (4 of 12 calls done, 0:00 elapsed)\n",
			},
			final: "4 of 4 calls done, 0:00 elapsed",
		},
		{
			name: "replayed from the journal",
			calls: []call{
				{id: "debate/main/turn/01", resp: &llm.Response{Source: llm.SourceJournal, Latency: time.Second}},
				{id: "debate/main/turn/01/summary", support: true, resp: &llm.Response{Source: llm.SourceJournal}},
				{id: "debate/main/turn/02", resp: &llm.Response{Latency: time.Second}},
			},
			want: Counts{Done: 3, Replayed: 2},
			lines: []string{
				"sot: debate/main/turn/01 replayed from the journal (1 of 12 calls done (1 replayed), 0:00 elapsed)\n",
				"sot: debate/main/turn/01/summary replayed from the journal (2 of 12 calls done (2 replayed), 0:00 elapsed)\n",
				"sot: debate/main/turn/02 done in 1s (3 of 12 calls done (2 replayed), 0:00 elapsed)\n",
			},
			not:   []string{"turn/01 done in"},
			final: "3 of 3 calls done (2 replayed), 0:00 elapsed",
		},
		{
			name: "failed, not run, cancelled",
			calls: []call{
				{id: "debate/main/turn/01", resp: &llm.Response{}},
				{id: "debate/main/turn/02", err: errors.New("openai: provider unavailable (HTTP 500)")},
				{id: "debate/question/a", err: fmt.Errorf("debate/question/a: %w", budget)},
				{id: "debate/question/b", err: budget},
				{id: "debate/main/turn/01/summary", support: true, err: fmt.Errorf("openai (openai:gpt-4.1): %w", context.Canceled)},
			},
			want: Counts{Done: 1, Failed: 1, Budget: 2, Cancelled: 1},
			lines: []string{
				"sot: debate/main/turn/02 failed: openai: provider unavailable (HTTP 500) (1 of 12 calls done, 1 failed, 0:00 elapsed)\n",
				"sot: debate/main/turn/01/summary cancelled (1 of 12 calls done, 1 failed, 2 not run: budget, 1 cancelled, 0:00 elapsed)\n",
				"sot: not run: budget (--max-calls 4 reached, spent 4 calls): debate/question/a; debate/question/b\n",
			},
			not:   []string{"summary failed", "question/a failed", "budget exhausted"},
			final: "1 of 5 calls done, 1 failed, 2 not run: budget, 1 cancelled, 0:00 elapsed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, tty := range []bool{false, true} {
				var b bytes.Buffer
				d, _ := newAt(&b, tty)
				d.Plain()
				d.Expect(12)
				for _, c := range tt.calls {
					group := strings.Split(c.id, "/")[2]
					finish(d, &engine.Task{ID: c.id, Group: group, Support: c.support}, c.resp, c.err)
				}
				d.Close()
				if got := d.Counts(); got != tt.want {
					t.Errorf("tty %v: counts %+v, want %+v", tty, got, tt.want)
				}
				out := b.String()
				if tty {
					last := out[strings.LastIndex(out, "\x1b[2K  "+strings.SplitN(tt.final, " ", 2)[0]):]
					if !strings.HasPrefix(last, "\x1b[2K  "+tt.final+"\n") {
						t.Errorf("the last frame does not read %q:\n%q", tt.final, out)
					}
					continue
				}
				for _, l := range tt.lines {
					if !strings.Contains(out, l) {
						t.Errorf("the output lacks %q:\n%s", l, out)
					}
				}
				for _, l := range tt.not {
					if strings.Contains(out, l) {
						t.Errorf("the output holds %q:\n%s", l, out)
					}
				}
			}
		})
	}
}

// A budget that stops many calls is said once, with its figure, and the
// calls it stopped are listed on one line as not run; on a terminal each
// group whose calls it stopped reads "not run: budget", never failed, and
// no group repeats the budget's message.
func TestBudgetSaidOnce(t *testing.T) {
	budget := &middleware.BudgetError{Flag: "--max-cost", Limit: "$0.05", Spent: "$0.0412",
		Next: "the next call could cost up to $0.0700 (its input and its output limit of 8192 tokens), more than the $0.0088 left"}
	for _, tty := range []bool{false, true} {
		var b bytes.Buffer
		d, _ := newAt(&b, tty)
		d.Expect(21)
		finish(d, &engine.Task{ID: "review/security", Group: "security"}, &llm.Response{JSON: json.RawMessage(`{"findings":[]}`)}, nil)
		for i := range 20 {
			name := fmt.Sprintf("specialist-%02d", i)
			finish(d, &engine.Task{ID: "review/" + name, Group: name}, nil, fmt.Errorf("review/%s: %w", name, budget))
		}
		d.Close()
		out := b.String()
		if n := strings.Count(out, "--max-cost $0.05"); n != 1 {
			t.Errorf("tty %v: the budget is said %d times:\n%s", tty, n, out)
		}
		if want := "sot: not run: budget (--max-cost $0.05 could be exceeded: the next call could cost up to $0.0700 (its input and its output limit of 8192 tokens), more than the $0.0088 left, spent $0.0412): review/specialist-00; "; !strings.Contains(out, want) {
			t.Errorf("tty %v: no line %q:\n%s", tty, want, out)
		}
		if !strings.Contains(out, "review/specialist-09 and 10 more\n") {
			t.Errorf("tty %v: the calls not run are not on one line:\n%s", tty, out)
		}
		if strings.Contains(out, "failed") || strings.Contains(out, "the same error") {
			t.Errorf("tty %v: a call the budget stopped reads as failed:\n%s", tty, out)
		}
		if tty {
			if !strings.Contains(out, "specialist-19  not run: budget\n") || !strings.Contains(out, "1 of 21 calls done, 20 not run: budget") {
				t.Errorf("the last frame does not say not run: budget:\n%q", out)
			}
		}
	}
}

// Nothing the display writes moves the cursor once a question is put to
// the user through Asking (a debate-mode review asks mid-run), nor once it
// is closed: events, ticks and log lines after it are plain text, so the
// question and what the user types are never drawn over.
func TestNoRedrawOverTheUser(t *testing.T) {
	for _, how := range []string{"ask", "close"} {
		t.Run(how, func(t *testing.T) {
			var term bytes.Buffer
			d, c := newAt(&term, true)
			sec := &engine.Task{ID: "review/security/round-2", Group: "security"}
			tst := &engine.Task{ID: "review/testing/round-2", Group: "testing"}
			d.Event(ev(sec, engine.Queued, nil, nil))
			d.Event(ev(tst, engine.Queued, nil, nil))
			d.Event(ev(sec, engine.Running, nil, nil))
			if !strings.Contains(term.String(), "\x1b[") {
				t.Fatal("the live display drew nothing before the question")
			}
			var during string
			ask := func(q string, choices []string) (string, error) {
				during = term.String()
				fmt.Fprintf(&term, "%s [Y/n] ", q)
				// While the user reads and types, the clock moves, a call
				// ends, another is logged.
				c.t = c.t.Add(3 * time.Second)
				d.Tick()
				d.Event(ev(sec, engine.Done, &llm.Response{JSON: json.RawMessage(`{"findings":[]}`)}, nil))
				fmt.Fprint(d, "sot: note: a note\n")
				return "yes", nil
			}
			mark := term.Len()
			switch how {
			case "ask":
				if _, err := d.Asking(ask)("Keep the finding?", []string{"yes", "no"}); err != nil {
					t.Fatal(err)
				}
			case "close":
				d.Close()
				mark = term.Len()
				ask("Enter moderator mode?", []string{"yes", "no"})
			}
			after := term.String()[mark:]
			if strings.Contains(after, "\x1b") {
				t.Errorf("after the question began the display wrote escape sequences:\n%q", after)
			}
			if how == "ask" && during != term.String()[:len(during)] {
				t.Error("the output before the question changed")
			}
			if !strings.Contains(after, "sot: note: a note\n") {
				t.Errorf("a log line after the question is lost:\n%q", after)
			}
			if how == "ask" && !strings.Contains(after, "sot: review/security/round-2 done: 0 findings raised") {
				t.Errorf("after the question, calls are not shown as plain lines:\n%q", after)
			}
			// Nor later.
			mark = term.Len()
			d.Event(ev(tst, engine.Running, nil, nil))
			d.Tick()
			d.Close()
			if rest := term.String()[mark:]; strings.Contains(rest, "\x1b") {
				t.Errorf("the display drew again: %q", rest)
			}
		})
	}
}

// Once stopped, the ticker draws nothing, even a tick it had begun.
func TestStopEndsTicks(t *testing.T) {
	var term syncBuffer
	d := New(&term, true)
	d.Event(ev(&engine.Task{ID: "a", Group: "a"}, engine.Queued, nil, nil))
	stop := d.Start(time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	stop()
	d.Close()
	n := term.Len()
	time.Sleep(20 * time.Millisecond)
	if term.Len() != n {
		t.Error("the display drew after stop and Close")
	}
}

// syncBuffer is a bytes.Buffer safe for the ticker's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}
