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
