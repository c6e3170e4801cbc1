package status

import (
	"bytes"
	"encoding/json"
	"errors"
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

func TestPlainLines(t *testing.T) {
	var b bytes.Buffer
	events(New(&b, false))
	want := "sot: review/security done: 2 finding(s) in 1.2s\nsot: review/testing failed: openai: rate limited\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestLiveLines(t *testing.T) {
	var b bytes.Buffer
	events(New(&b, true))
	out := b.String()
	last := out[strings.LastIndex(out, "\x1b[2A"):]
	for _, want := range []string{"security  done: 1 must-fix, 1 consider", "testing   failed (1 of 1 calls): openai: rate limited"} {
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
	want := "\x1b[2A\x1b[J" + "level=WARN msg=retrying\n"
	if !strings.HasPrefix(out, want) {
		t.Fatalf("the live lines were not cleared before the log line:\n%q", out)
	}
	rest := out[len(want):]
	if strings.Count(rest, "\x1b[2K") != 2 || !strings.Contains(rest, "security  queued") || !strings.Contains(rest, "testing   queued") {
		t.Errorf("the live lines were not drawn again below the log line:\n%q", rest)
	}
	b.Reset()
	d.Event(engine.Event{Task: sec, State: engine.Running})
	if !strings.HasPrefix(b.String(), "\x1b[2A") {
		t.Errorf("the next frame does not redraw the two lines in place:\n%q", b.String())
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
	last := out[strings.LastIndex(out, "\x1b[1A"):]
	if !strings.Contains(last, "security  done: no findings") {
		t.Errorf("final frame:\n%q", last)
	}
}
