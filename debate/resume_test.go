//go:build unix

package debate

import (
	"bufio"
	"bytes"
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
)

// journaled returns the labels of the whole records of a journal, in the
// order they were written; a torn last line is not counted.
func journaled(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.LastIndexByte(b, '\n')
	if i < 0 {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b[:i+1]))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var rec struct {
			Label string `json:"label"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("journal %s: %v", path, err)
		}
		out = append(out, rec.Label)
	}
	return out
}

// sameSet reports whether a and b hold the same labels, each once.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b) && len(slices.Compact(a)) == len(b)
}

// The environment of the child process TestResumeAfterSIGKILL kills.
const (
	crashChildEnv = "SOT_DEBATE_CRASH_CHILD"
	crashTopEnv   = "SOT_DEBATE_CRASH_TOP"
	crashURLEnv   = "SOT_DEBATE_CRASH_URL"
	crashCacheEnv = "SOT_DEBATE_CRASH_CACHE"
)

// crashOptions are the options of the debate both the child process and
// the test run: the same passage, with the same key behind the nonce.
func crashOptions(t *testing.T, top, url, cache string, rec *recorder) *Options {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", cache)
	o := testOptionsIn(t, top, url, rec)
	o.Rounds = 2
	crashSetup(o)
	return o
}

// crashSetup adds what later parts of the debate need to crashOptions.
var crashSetup = func(*Options) {}

// TestResumeChild is the process TestResumeAfterSIGKILL runs and kills.
func TestResumeChild(t *testing.T) {
	if os.Getenv(crashChildEnv) != "1" {
		t.Skip("the child process of TestResumeAfterSIGKILL")
	}
	o := crashOptions(t, os.Getenv(crashTopEnv), os.Getenv(crashURLEnv), os.Getenv(crashCacheEnv), nil)
	p, err := Prepare(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Execute(t.Context(), p, o); err != nil {
		t.Fatal(err)
	}
	t.Log("the child finished its debate; it should have been killed first")
}

// resumeCases are the calls TestResumeAfterSIGKILL kills the child during.
var resumeCases = []string{"debate/main/turn/03", "debate/main/turn/05/summary", "debate/question/materialist-historian", "debate/branch/2/turn/02", "debate/branch/3/synthesis", "debate/final"}

// A debate killed with SIGKILL while a call is in flight resumes when the
// same command runs again: the second run sends exactly the calls that had
// not finished, never one the journal holds, and ends with the result an
// uninterrupted run has.
//
// The kill is timed by conditions, not by the clock: one call is answered
// only after ten minutes, and the child is killed once that call has
// reached the server and the journal holds exactly the other calls of its
// step and of every step before it (of the whole run, for a summary, which
// holds back no step). Nothing else can be sent until the slow call ends,
// so what the journal holds at the kill is known exactly.
func TestResumeAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for _, slowLabel := range resumeCases {
		t.Run(filepath.Base(filepath.Dir(slowLabel))+"-"+filepath.Base(slowLabel), func(t *testing.T) {
			top := testProject(t)
			rec := &recorder{}
			var slowOn sync.Mutex
			slow := false
			srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: func(r *llmtest.Recorded) llmtest.Reply {
				rep := responder(r)
				slowOn.Lock()
				defer slowOn.Unlock()
				if slow && rec.label(r) == slowLabel {
					rep.Latency = 10 * time.Minute
				}
				return rep
			}}}})
			defer srv.Close()
			cache := t.TempDir()
			o := crashOptions(t, top, srv.OpenAIBaseURL(), cache, rec)
			run.Key()

			// An uninterrupted run into another directory: the calls a
			// whole run makes, step by step, and its result.
			ref := *o
			ref.OutputDir = filepath.Join(top, "reference")
			_, want := runDebate(t, &ref)
			if err := want.Verdict(); err != nil {
				t.Fatalf("the uninterrupted run: %v", err)
			}
			var all, upTo []string
			at := 0
			for _, st := range want.Result.Steps {
				labels := append(slices.Clone(st.Calls), st.Riders...)
				all = append(all, labels...)
				if slices.Contains(labels, slowLabel) {
					at = st.N
				}
			}
			if at == 0 {
				t.Fatalf("no step made %s: %+v", slowLabel, want.Result.Steps)
			}
			// A slow call holds back every step after its own; a slow
			// summary holds back nothing (it runs detached from the steps),
			// so at the kill every other call of the run has finished.
			until := want.Result.Steps[:at]
			if strings.HasSuffix(slowLabel, "/summary") {
				until = want.Result.Steps
			}
			for _, st := range until {
				for _, l := range append(slices.Clone(st.Calls), st.Riders...) {
					if l != slowLabel {
						upTo = append(upTo, l)
					}
				}
			}
			p, err := Prepare(t.Context(), o)
			if err != nil {
				t.Fatal(err)
			}
			journal := filepath.Join(p.OutputDir, run.JournalFile)

			slowOn.Lock()
			slow = true
			slowOn.Unlock()
			before := len(srv.Requests())
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			child := exec.Command(exe, "-test.run=^TestResumeChild$", "-test.v")
			child.Env = append(os.Environ(), crashChildEnv+"=1", crashTopEnv+"="+top, crashURLEnv+"="+srv.OpenAIBaseURL(), crashCacheEnv+"="+cache)
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

			var sent, inFlight, done []string
			deadline := time.Now().Add(60 * time.Second)
			for {
				sent, inFlight = nil, nil
				for _, r := range srv.Requests()[before:] {
					l := rec.label(&r)
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
			if _, err := os.Stat(filepath.Join(p.OutputDir, JSONFile)); err == nil {
				t.Fatalf("the child finished before the kill; nothing was tested:\n%s", log)
			}
			if done = journaled(t, journal); !sameSet(done, upTo) {
				t.Fatalf("journaled at the kill: %v, want %v", done, upTo)
			}

			// The same debate again, in this process, answered at once.
			slowOn.Lock()
			slow = false
			slowOn.Unlock()
			before = len(srv.Requests())
			_, got := runDebate(t, o)
			var resent []string
			for _, r := range srv.Requests()[before:] {
				l := rec.label(&r)
				if slices.Contains(done, l) {
					t.Errorf("%s was journaled before the kill but was sent again", l)
				}
				resent = append(resent, l)
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
			if u := got.Result.Usage; u.Replayed != len(done) || u.Calls != len(all) {
				t.Errorf("re-run usage: %d replayed of %d calls; want %d of %d", u.Replayed, u.Calls, len(done), len(all))
			}
			if err := got.Verdict(); err != nil {
				t.Errorf("the resumed debate: %v", err)
			}
			type whole struct {
				Main     Phase
				Branches []*Branch
				Final    string
				Steps    []Step
			}
			w, _ := json.MarshalIndent(whole{want.Result.Main, want.Result.Branches, want.Result.Final, want.Result.Steps}, "", "  ")
			g, _ := json.MarshalIndent(whole{got.Result.Main, got.Result.Branches, got.Result.Final, got.Result.Steps}, "", "  ")
			if !bytes.Equal(w, g) {
				t.Errorf("the resumed debate differs from the uninterrupted one:\n--- want\n%s\n--- got\n%s", w, g)
			}
			if after := journaled(t, journal); !sameSet(after, all) {
				t.Errorf("after the re-run the journal holds %v, want %v", after, all)
			}
		})
	}
}
