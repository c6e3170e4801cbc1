//go:build unix

package debate

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sotlabs/sot/debate/graph"
	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/llm/llmtest"
)

// The environment of the child process TestGraphResumeAfterSIGKILL kills.
const (
	graphChildEnv = "SOT_DEBATE_GRAPH_CRASH_CHILD"
	graphTopEnv   = "SOT_DEBATE_GRAPH_CRASH_TOP"
	graphURLEnv   = "SOT_DEBATE_GRAPH_CRASH_URL"
	graphCacheEnv = "SOT_DEBATE_GRAPH_CRASH_CACHE"
)

// graphCrashOptions are the options of the graph run both the child and
// the test make: the same passages, the same key behind the nonces.
func graphCrashOptions(t *testing.T, top, url, cache, name string) *Options {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", cache)
	o := graphOptions(t, top, url, nil, filepath.Join(top, name+".json"), 0)
	o.OutputDir = filepath.Join(top, name)
	return o
}

// TestGraphResumeChild is the process TestGraphResumeAfterSIGKILL runs and
// kills.
func TestGraphResumeChild(t *testing.T) {
	if os.Getenv(graphChildEnv) != "1" {
		t.Skip("the child process of TestGraphResumeAfterSIGKILL")
	}
	o := graphCrashOptions(t, os.Getenv(graphTopEnv), os.Getenv(graphURLEnv), os.Getenv(graphCacheEnv), "g")
	if _, err := DebateAll(t.Context(), graphPassages(t), o, GraphHooks{}); err != nil {
		t.Fatal(err)
	}
	t.Log("the child finished its passages; it should have been killed first")
}

// graphCrashCases are the calls the child is killed during, each with the
// nodes the graph file holds at the kill.
var graphCrashCases = []struct {
	name  string
	slow  func(r *llmtest.Recorded) bool
	nodes int
}{
	// Every classification of the second passage's nodes is held: they
	// are sent in one step, and one left free could reach the server
	// after the kill's snapshot and be journaled before the kill.
	{"classifying the second passage's nodes", func(r *llmtest.Recorded) bool {
		return r.SchemaName == "argument_node" && strings.Contains(r.LastUser(), "Passage: hope.txt\n")
	}, 2},
	// Every judgement of the second passage's nodes is held, whatever
	// the earlier node: one left free (a node of the same passage) could
	// finish after the kill's snapshot and be journaled before the kill.
	{"judging the second passage's nodes, after they were saved", func(r *llmtest.Recorded) bool {
		return r.SchemaName == "argument_edge" && strings.Contains(r.LastUser(), "Node A (new), from the passage hope.txt\n")
	}, 4},
	{"a turn of the third passage", func(r *llmtest.Recorded) bool {
		return strings.Contains(r.System, "Fly buzz") && strings.Contains(r.LastUser(), "Give The Symbolist's turn.")
	}, 4},
}

// journalRecords counts the whole records of the journals under dir.
func journalRecords(t *testing.T, dir string) int {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*", run.JournalFile))
	n := 0
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			sc := bufio.NewScanner(bytes.NewReader(b[:i+1]))
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			for sc.Scan() {
				n++
			}
		}
	}
	return n
}

// A graph run killed with SIGKILL between nodes, or while a call is in
// flight, continues when the same command runs again: the passages the
// graph holds are not debated again, the one it was on replays its
// finished calls from its journal, no finished call is sent twice, and
// the graph comes out as an uninterrupted run's.
//
// The kill is timed by conditions, not by the clock: one call is answered
// only after ten minutes, and the child is killed once that call has
// reached the server and every other call it sent has finished and is in
// a journal. A call sent after the slow one is held as long, so nothing
// finishes between the last look and the kill.
func TestGraphResumeAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for _, tc := range graphCrashCases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			top := testProject(t)
			cache := t.TempDir()
			var mu sync.Mutex
			slow := false
			// Once the slow call has arrived, every call after it is held
			// as long: a call sent beside it (a branch of the same step)
			// cannot finish between the last look and the kill.
			held := map[string]bool{}
			srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: func(r *llmtest.Recorded) llmtest.Reply {
				rep := graphResponder(r)
				mu.Lock()
				defer mu.Unlock()
				if slow && (tc.slow(r) || len(held) > 0) {
					rep.Latency = 10 * time.Minute
					held[promptKey(r.System, r.LastUser())] = true
				}
				return rep
			}}}})
			isHeld := func(r *llmtest.Recorded) bool {
				mu.Lock()
				defer mu.Unlock()
				return held[promptKey(r.System, r.LastUser())]
			}
			defer srv.Close()
			keys := func(rs []llmtest.Recorded) map[string]int {
				m := map[string]int{}
				for _, r := range rs {
					m[promptKey(r.System, r.LastUser())]++
				}
				return m
			}

			// An uninterrupted run: every call once, and the graph.
			if _, err := DebateAll(t.Context(), graphPassages(t), graphCrashOptions(t, top, srv.OpenAIBaseURL(), cache, "reference"), GraphHooks{}); err != nil {
				t.Fatal(err)
			}
			all := keys(srv.Requests())
			want, err := os.ReadFile(filepath.Join(top, "reference.json"))
			if err != nil {
				t.Fatal(err)
			}

			mu.Lock()
			slow = true
			mu.Unlock()
			before := srv.Count()
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			child := exec.Command(exe, "-test.run=^TestGraphResumeChild$", "-test.v")
			child.Env = append(os.Environ(), graphChildEnv+"=1", graphTopEnv+"="+top, graphURLEnv+"="+srv.OpenAIBaseURL(), graphCacheEnv+"="+cache)
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

			deadline := time.Now().Add(60 * time.Second)
			var finished []llmtest.Recorded
			for {
				finished = nil
				inFlight, slowSeen := 0, false
				for _, r := range srv.Requests()[before:] {
					switch {
					case r.Status == 0 && tc.slow(&r):
						slowSeen = true
					case r.Status == 0 && isHeld(&r):
					case r.Status == 0:
						inFlight++
					default:
						finished = append(finished, r)
					}
				}
				if slowSeen && inFlight == 0 && journalRecords(t, filepath.Join(top, "g")) == len(finished) {
					break
				}
				select {
				case err := <-exited:
					exited <- err
					t.Fatalf("the child ended before the kill (%v):\n%s", err, out.String())
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("the child never got to the slow call:\n%s", stop())
				}
				time.Sleep(5 * time.Millisecond) // polling, not synchronisation
			}
			log := stop()
			if n := journalRecords(t, filepath.Join(top, "g")); n != len(finished) {
				t.Fatalf("%d calls finished and %d journaled at the kill:\n%s", len(finished), n, log)
			}
			g, err := graph.Load(filepath.Join(top, "g.json"))
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Nodes) != tc.nodes {
				t.Fatalf("the graph holds %d nodes at the kill, want %d", len(g.Nodes), tc.nodes)
			}

			// The same command again, in this process, answered at once.
			mu.Lock()
			slow = false
			mu.Unlock()
			mid := srv.Count()
			if _, err := DebateAll(t.Context(), graphPassages(t), graphCrashOptions(t, top, srv.OpenAIBaseURL(), cache, "g"), GraphHooks{}); err != nil {
				t.Fatal(err)
			}
			done := keys(finished)
			again := keys(srv.Requests()[mid:])
			for k := range again {
				if done[k] > 0 {
					t.Errorf("a call that had finished before the kill was sent again: %.120q", k)
				}
			}
			// Every call of an uninterrupted run was sent once, before the
			// kill or after it, the slow one (never finished) after it.
			for k := range all {
				if done[k]+again[k] != 1 {
					t.Errorf("a call was sent %d time(s) before the kill and %d after: %.120q", done[k], again[k], k)
				}
			}
			if len(done)+len(again) != len(all) {
				t.Errorf("%d calls before the kill and %d after, want %d in all", len(done), len(again), len(all))
			}
			got, err := os.ReadFile(filepath.Join(top, "g.json"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the resumed graph differs from an uninterrupted run's:\n%s\nwant\n%s", got, want)
			}
		})
	}
}
