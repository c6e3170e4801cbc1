package compare

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"
)

// journalCall is what a run's wall time reads of one line of its journal
// (llm/middleware's record, whose fields these are): when the answer was
// journaled, which is when its call ended; whether the response cache gave
// it; and the call's latency, as the backend measured it.
type journalCall struct {
	At        time.Time `json:"at"`
	FromCache bool      `json:"from_cache"`
	Response  *struct {
		Latency time.Duration `json:"latency"`
	} `json:"response"`
}

// span is a stretch of time, from start to end.
type span struct{ start, end time.Time }

// journalWall is a run's wall time as its journal recorded it when the
// calls were made: how long at least one of its calls was in flight. Each
// call runs from its start (the time it was journaled less its latency) to
// its end (the time it was journaled); an answer the response cache gave
// took no time. For a run made in one go this is the time from its first
// call's start to its last call's end, which is what a clock around the
// run measures less the local work before the first call and after the
// last (a few milliseconds). Unlike that span, it leaves out the time
// between an interrupted run and the invocation that resumed it, when no
// call was in flight. Replaying the journal changes none of its records,
// so a replayed run reports the same figure as the run that made the
// calls. A torn last line is skipped, as the journal skips it.
//
// made counts the calls the journal records as made by the run, cached
// the answers the response cache gave it: a run with none made has no
// wall time of its own, as other runs made (and timed) its calls.
func journalWall(path string) (wall time.Duration, made, cached int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("read the run's journal for its wall time: %w", err)
	}
	defer f.Close()
	var spans []span
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var c journalCall
		if json.Unmarshal(sc.Bytes(), &c) != nil || c.Response == nil {
			continue
		}
		if c.FromCache {
			cached++
			continue
		}
		made++
		if c.Response.Latency > 0 {
			spans = append(spans, span{c.At.Add(-c.Response.Latency), c.At})
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, 0, fmt.Errorf("read the run's journal for its wall time: %w", err)
	}
	return inFlight(spans), made, cached, nil
}

// inFlight is the length of the union of spans: the time at least one of
// them was under way.
func inFlight(spans []span) time.Duration {
	slices.SortFunc(spans, func(a, b span) int { return a.start.Compare(b.start) })
	var total time.Duration
	var cur span
	for i, s := range spans {
		switch {
		case i == 0:
			cur = s
		case s.start.After(cur.end):
			total += cur.end.Sub(cur.start)
			cur = s
		case s.end.After(cur.end):
			cur.end = s.end
		}
	}
	if len(spans) > 0 {
		total += cur.end.Sub(cur.start)
	}
	return total
}
