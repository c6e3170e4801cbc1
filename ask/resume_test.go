//go:build unix

package ask

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/prompt"
)

// labelOf names a request the server received by the label its call has
// in the journal (ask/map/A1, ask/debate, ask/reduce, ask/reduce/again),
// from what the prompt holds: the source a map call reads, the step's
// schema, and the check's reasons on the reduce step's second attempt.
func labelOf(t *testing.T, rec llmtest.Recorded, readings []Reading) string {
	t.Helper()
	switch rec.SchemaName {
	case mapSchemaName:
		var ids []string
		for _, r := range readings {
			if strings.Contains(rec.System, "\n# Source "+prompt.Quote(r.Title)+"\n") {
				ids = append(ids, r.ID)
			}
		}
		if len(ids) != 1 {
			t.Fatalf("a map call reading %v; want one reading:\n%s", ids, rec.System)
		}
		return "ask/map/" + ids[0]
	case debateSchemaName:
		return "ask/debate"
	case reduceSchemaName:
		if strings.Contains(rec.LastUser(), "# Your previous answer failed the check") {
			return "ask/reduce/again"
		}
		return "ask/reduce"
	}
	t.Fatalf("a request of no step of ask (schema %q)", rec.SchemaName)
	return ""
}

// labelsOf are the labels of requests, in the order they arrived.
func labelsOf(t *testing.T, recs []llmtest.Recorded, readings []Reading) []string {
	t.Helper()
	var out []string
	for _, r := range recs {
		out = append(out, labelOf(t, r, readings))
	}
	return out
}

// journaled returns the labels of the whole records of a journal, in the
// order they were written; a torn last line (a write under way) is not
// counted.
func journaled(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	} else {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var rec struct {
			Label string `json:"label"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("journal %s: %v: %s", path, err, sc.Bytes())
		}
		out = append(out, rec.Label)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// step orders the labels of a question's calls by the step that makes
// them: the map calls, the debate, the reduce step and its second attempt.
func step(label string) int {
	switch {
	case strings.HasPrefix(label, "ask/map/"):
		return 0
	case label == "ask/debate":
		return 1
	case label == "ask/reduce":
		return 2
	}
	return 3
}

// sameSet reports whether a and b hold the same labels, each once.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b) && len(slices.Compact(a)) == len(b)
}

// The environment of the child process TestAskResumeAfterSIGKILL kills.
const (
	crashChildEnv = "SOT_ASK_CRASH_CHILD"
	crashTopEnv   = "SOT_ASK_CRASH_TOP"
	crashURLEnv   = "SOT_ASK_CRASH_URL"
	crashCacheEnv = "SOT_ASK_CRASH_CACHE"
)

// crashOptions are the options of the question both the child process and
// the test ask: the same question over the same corpus, with the same key
// behind the run's nonce (the user's cache directory), so both make the
// same run with the same prompts.
func crashOptions(t *testing.T, top, url, cache string) *Options {
	t.Helper()
	o := testOptions(t, top, url)
	t.Setenv("XDG_CACHE_HOME", cache) // testOptions set one of its own
	o.Debate = true                   // map, debate, reduce: three dependent steps
	return o
}

// TestAskResumeChild is the process TestAskResumeAfterSIGKILL runs and
// kills: it asks the question against the parent's llmtest server, in the
// parent's project. Run on its own it does nothing.
func TestAskResumeChild(t *testing.T) {
	if os.Getenv(crashChildEnv) != "1" {
		t.Skip("the child process of TestAskResumeAfterSIGKILL")
	}
	o := crashOptions(t, os.Getenv(crashTopEnv), os.Getenv(crashURLEnv), os.Getenv(crashCacheEnv))
	ctx := context.Background()
	p, err := Prepare(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Execute(ctx, p, o); err != nil {
		t.Fatal(err)
	}
	t.Log("the child finished its question; it should have been killed first")
}

// A question killed with SIGKILL while a call is in flight resumes when
// the same question is asked again: the second run sends exactly the calls
// that had not finished, never one whose answer the journal holds, replays
// every journaled call, and writes the answer an uninterrupted run writes.
//
// The kill is timed by conditions, not by the clock: one call (a map call,
// or the reduce step) is answered only after ten minutes, and the child is
// killed once the slow call has reached the server and the journal holds
// exactly the other calls of its step and of the steps before it. No other
// call can start until the slow one ends, so at that moment the child can
// do nothing but wait, and what the journal holds is known exactly.
func TestAskResumeAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for _, tc := range []struct {
		name string
		slow llmtest.Rule // matches the call in flight at the kill
	}{
		{"during map", llmtest.Rule{System: "pilot shipped"}},
		{"during reduce", llmtest.Rule{System: reduceSystem[:strings.Index(reduceSystem, "{weights}")]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := testCorpus(t)
			fast := llmtest.Config{Rules: []llmtest.Rule{{Respond: responder}}}
			srv := llmtest.NewServer(fast)
			defer srv.Close()
			cache := t.TempDir()
			o := crashOptions(t, top, srv.OpenAIBaseURL(), cache)
			run.Key() // made now, read by the child and by the re-run
			ctx := context.Background()

			// An uninterrupted run into another directory: the calls a
			// whole run makes, and the answer it writes.
			ref := *o
			ref.OutputDir = filepath.Join(top, "reference")
			rp, err := Prepare(ctx, &ref)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Execute(ctx, rp, &ref)
			if err != nil {
				t.Fatal(err)
			}
			if want.Answer.Partial() || want.Answer.Debate == nil || len(want.Answer.Sentences) == 0 {
				t.Fatalf("the uninterrupted run: missing %v, debate %v, %d sentence(s)", want.Answer.Missing, want.Answer.Debate, len(want.Answer.Sentences))
			}
			all := labelsOf(t, srv.Requests(), rp.Readings)
			if !sameSet(all, journaled(t, filepath.Join(rp.OutputDir, run.JournalFile))) {
				t.Fatalf("the uninterrupted run sent %v and journaled %v", all, journaled(t, filepath.Join(rp.OutputDir, run.JournalFile)))
			}

			p, err := Prepare(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			if p.RunID != rp.RunID || p.Nonce != rp.Nonce {
				t.Fatalf("the same question is another run: %s/%s, %s/%s", p.RunID, p.Nonce, rp.RunID, rp.Nonce)
			}
			journal := filepath.Join(p.OutputDir, run.JournalFile)

			// The child asks the question; the slow call never finishes.
			// When it is killed, the journal must hold exactly the other
			// calls of the slow call's step and of the steps before it.
			slow := tc.slow
			slowLabel := ""
			for _, r := range srv.Requests() {
				if strings.Contains(r.System, slow.System) {
					slowLabel = labelOf(t, r, rp.Readings)
				}
			}
			var upTo []string
			for _, l := range all {
				if l != slowLabel && step(l) <= step(slowLabel) {
					upTo = append(upTo, l)
				}
			}
			if slowLabel == "" || len(upTo) == 0 {
				t.Fatalf("the slow rule matches %q of %v", slowLabel, all)
			}
			slow.Latency, slow.Respond = 10*time.Minute, responder
			srv.SetConfig(llmtest.Config{Rules: []llmtest.Rule{slow, {Respond: responder}}})
			before := len(srv.Requests())
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			child := exec.Command(exe, "-test.run=^TestAskResumeChild$", "-test.v")
			// The child is killed before it can remove its temporary
			// directories: they go in one of this test's, which is removed.
			child.Env = append(os.Environ(), crashChildEnv+"=1", crashTopEnv+"="+top, crashURLEnv+"="+srv.OpenAIBaseURL(), crashCacheEnv+"="+cache, "TMPDIR="+t.TempDir())
			var out bytes.Buffer
			child.Stdout, child.Stderr = &out, &out
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- child.Wait() }()
			var once sync.Once
			stop := func() string {
				once.Do(func() {
					child.Process.Signal(syscall.SIGKILL)
					<-exited
				})
				return out.String()
			}
			t.Cleanup(func() { stop() })

			// Wait until the slow call is at the server and every other call
			// of its step and the steps before it is journaled.
			var inFlight, sent, done []string
			deadline := time.Now().Add(60 * time.Second)
			for {
				sent, inFlight = nil, nil
				for _, r := range srv.Requests()[before:] {
					l := labelOf(t, r, p.Readings)
					sent = append(sent, l)
					if r.Status == 0 {
						inFlight = append(inFlight, l)
					}
				}
				done = journaled(t, journal)
				if slices.Contains(sent, slowLabel) && sameSet(done, upTo) {
					break
				}
				select {
				case err := <-exited:
					exited <- err
					t.Fatalf("the child ended before the kill (%v):\n%s", err, out.String())
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("the child never got to the slow call (sent %v, journaled %v):\n%s", sent, done, stop())
				}
				time.Sleep(5 * time.Millisecond) // polling, not synchronisation
			}
			if len(inFlight) != 1 || inFlight[0] != slowLabel {
				t.Fatalf("in flight at the kill: %v, want only %s", inFlight, slowLabel)
			}
			log := stop()
			if _, err := os.Stat(filepath.Join(p.OutputDir, AnswerFile)); err == nil {
				t.Fatalf("the child wrote the answer before the kill; nothing was tested:\n%s", log)
			}
			if done = journaled(t, journal); !sameSet(done, upTo) {
				t.Fatalf("journaled at the kill: %v, want %v", done, upTo)
			}
			t.Logf("killed with %v journaled and %s in flight", done, slowLabel)

			// The same question again, in this process, with a provider that
			// answers at once.
			srv.SetConfig(fast)
			before = len(srv.Requests())
			p2, err := Prepare(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			if p2.RunID != p.RunID || p2.Nonce != p.Nonce {
				t.Fatalf("the re-run is another run: %s/%s, %s/%s", p2.RunID, p2.Nonce, p.RunID, p.Nonce)
			}
			got, err := Execute(ctx, p2, o)
			if err != nil {
				t.Fatal(err)
			}
			resent := labelsOf(t, srv.Requests()[before:], p2.Readings)
			for _, l := range resent {
				if slices.Contains(done, l) {
					t.Errorf("%s was journaled before the kill but was sent again", l)
				}
			}
			var rest []string
			for _, l := range all {
				if !slices.Contains(done, l) {
					rest = append(rest, l)
				}
			}
			if !sameSet(resent, rest) {
				t.Errorf("the re-run sent %v; want exactly the calls that had not finished, %v", resent, rest)
			}
			if !slices.Contains(resent, slowLabel) {
				t.Errorf("the re-run did not send %s, the call in flight at the kill", slowLabel)
			}
			if u := got.Answer.Usage; u.Replayed != len(done) || u.Calls != len(all) {
				t.Errorf("re-run usage: %d replayed of %d calls; want the %d journaled calls replayed of %d", u.Replayed, u.Calls, len(done), len(all))
			}
			if err := got.Verdict(); err != nil {
				t.Errorf("the resumed answer: %v", err)
			}
			type whole struct {
				Evidence  []Evidence
				Debate    *Debate
				Sentences []Sentence
				Dropped   []Dropped
				Missing   []Missing
				Conflicts json.RawMessage
			}
			w, _ := json.MarshalIndent(whole{want.Answer.Evidence, want.Answer.Debate, want.Answer.Sentences, want.Answer.Dropped, want.Answer.Missing, want.Answer.Conflicts}, "", "  ")
			g, _ := json.MarshalIndent(whole{got.Answer.Evidence, got.Answer.Debate, got.Answer.Sentences, got.Answer.Dropped, got.Answer.Missing, got.Answer.Conflicts}, "", "  ")
			if !bytes.Equal(w, g) {
				t.Errorf("the resumed answer differs from the uninterrupted one:\n--- want\n%s\n--- got\n%s", w, g)
			}
			if _, err := os.Stat(filepath.Join(p.OutputDir, AnswerFile)); err != nil {
				t.Error(err)
			}
			if after := journaled(t, journal); !sameSet(after, all) {
				t.Errorf("after the re-run the journal holds %v, want %v", after, all)
			}
		})
	}
}

// A partial run: one source's reading fails for good (the provider
// answers 500, and no retry is allowed). The answer is still written from
// the other readings; the outcome's verdict is a *PartialError; answer.json
// lists the missing reading with its error and ANSWER.md has a Missing
// section naming it. When the provider recovers, the same question sends
// the failed reading again, replays every reading that had succeeded
// (none of them is sent again), and completes the answer.
func TestAskPartialRun(t *testing.T) {
	top := testCorpus(t)
	failing := llmtest.Config{Rules: []llmtest.Rule{{System: "pilot shipped", Fault: llmtest.Fault500}, {Respond: responder}}}
	srv := llmtest.NewServer(failing)
	defer srv.Close()
	o := testOptions(t, top, srv.OpenAIBaseURL())
	o.Config.Retries = 0
	o.Debate = true
	ctx := context.Background()

	p, err := Prepare(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	var retro Reading
	for _, r := range p.Readings {
		if r.Title == "Q3 retro" {
			retro = r
		}
	}
	if retro.ID == "" || len(p.Readings) < 3 {
		t.Fatalf("the plan does not read the retro and two more sources: %+v", p.Readings)
	}
	out, err := Execute(ctx, p, o)
	if err != nil {
		t.Fatalf("a partial answer is an answer: %v", err)
	}
	var pe *PartialError
	if err := out.Verdict(); !errors.As(err, &pe) || pe.Missing != 1 {
		t.Fatalf("verdict %v (%T), want a *PartialError with one part missing", err, err)
	}
	first := srv.Requests()
	var failed []llmtest.Recorded
	for _, r := range first {
		if r.Status == 500 {
			failed = append(failed, r)
		}
	}
	if len(failed) != 1 || labelOf(t, failed[0], p.Readings) != "ask/map/"+retro.ID {
		t.Fatalf("failed requests %v, want the retro's map call once (no retry)", labelsOf(t, failed, p.Readings))
	}
	if len(out.Answer.Sentences) == 0 {
		t.Errorf("the partial answer has no sentence; the other readings should carry it")
	}

	// answer.json lists the missing reading with its error.
	b, err := os.ReadFile(filepath.Join(p.OutputDir, AnswerJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var aj struct {
		Missing []struct{ Step, What, Error string } `json:"missing"`
		Answers []struct{ ID string }                `json:"answers"`
	}
	if err := json.Unmarshal(b, &aj); err != nil {
		t.Fatal(err)
	}
	what := retro.ID + " (Q3 retro)"
	if len(aj.Missing) != 1 || aj.Missing[0].Step != "map" || aj.Missing[0].What != what || !strings.Contains(aj.Missing[0].Error, "500") {
		t.Errorf("answer.json missing: %+v, want the map step of %s with its 500", aj.Missing, what)
	}
	if len(aj.Answers) != len(p.Readings)-1 {
		t.Errorf("answer.json has %d answers, want the %d readings that succeeded", len(aj.Answers), len(p.Readings)-1)
	}
	md, err := os.ReadFile(filepath.Join(p.OutputDir, AnswerFile))
	if err != nil {
		t.Fatal(err)
	}
	_, missing, ok := strings.Cut(string(md), "\n## Missing\n")
	if !ok || !strings.Contains(string(md), "**Partial answer:**") {
		t.Fatalf("ANSWER.md has no Missing section or no partial banner:\n%s", md)
	}
	missing, _, _ = strings.Cut(missing, "\n## ")
	if !strings.Contains(missing, "- map, "+what+": ") {
		t.Errorf("ANSWER.md's Missing section does not name %s:\n%s", what, missing)
	}
	succeeded := map[string]bool{}
	for _, r := range first {
		if r.Status == 200 {
			succeeded[string(r.Body)] = true
		}
	}

	// The provider recovers: the same question sends the failed reading
	// again and nothing that succeeded.
	srv.SetConfig(llmtest.Config{Rules: []llmtest.Rule{{Respond: responder}}})
	p2, err := Prepare(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if p2.RunID != p.RunID {
		t.Fatalf("the same question is another run: %s, %s", p2.RunID, p.RunID)
	}
	out2, err := Execute(ctx, p2, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := out2.Verdict(); err != nil {
		t.Errorf("after the provider recovered: %v (missing %+v)", err, out2.Answer.Missing)
	}
	second := srv.Requests()[len(first):]
	var maps []string
	for _, r := range second {
		l := labelOf(t, r, p2.Readings)
		if succeeded[string(r.Body)] {
			t.Errorf("%s had succeeded but was sent again", l)
		}
		if strings.HasPrefix(l, "ask/map/") {
			maps = append(maps, l)
			if !bytes.Equal(r.Body, failed[0].Body) {
				t.Errorf("%s was sent again, not as the failed call was", l)
			}
		}
	}
	if !slices.Equal(maps, []string{"ask/map/" + retro.ID}) {
		t.Errorf("the re-run read %v again, want only the failed reading %s", maps, retro.ID)
	}
	if u := out2.Answer.Usage; u.Replayed != len(p.Readings)-1 {
		t.Errorf("the re-run replayed %d call(s), want the %d readings that had succeeded", u.Replayed, len(p.Readings)-1)
	}
	a := out2.Answer
	if len(a.Evidence) != len(p.Readings) || a.Debate == nil || len(a.Debate.Tensions) != 1 || len(a.Sentences) != 2 {
		t.Errorf("the completed answer: %d answers, debate %+v, %d sentences", len(a.Evidence), a.Debate, len(a.Sentences))
	}
	md, err = os.ReadFile(filepath.Join(p.OutputDir, AnswerFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(md), "## Missing") || strings.Contains(string(md), "Partial answer") {
		t.Errorf("ANSWER.md still says the answer is partial:\n%s", md)
	}
}
