package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/sotlabs/sot/internal/corpusgen"
	"github.com/sotlabs/sot/internal/temporaltest"
	"github.com/sotlabs/sot/llm/llmtest"
)

// A review with --executor temporal against a real dev server: two `sot
// worker` processes make its calls, one is killed with SIGKILL while calls
// are under way, and the other finishes the review. Its synthesis is the
// local run's; the model was asked every call the local run made, and
// only calls the killed worker had in flight were asked twice.
func TestReviewOnTemporalSurvivesAKilledWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	addr := temporaltest.Start(t)
	repo := gitRepo(t)
	args := []string{"review", "--seed", "42", "--perspectives", "none", "--no-cache"}

	local := llmtest.NewServer(llmtest.Config{Latency: 50 * time.Millisecond})
	defer local.Close()
	if out, err := sotCmd(repo, local, append(args, "--output-dir", "out-local")...).CombinedOutput(); err != nil {
		t.Fatalf("local run: %v\n%s", err, out)
	}
	want := requestKeys(local)

	// The workers' and the client's configuration: the dev server, a
	// queue of the test's own, a blob store they share, and a heartbeat
	// short enough to notice the dead worker quickly.
	temporalConfig(t, repo, addr, "e2e")
	srv := llmtest.NewServer(llmtest.Config{Latency: 400 * time.Millisecond})
	defer srv.Close()
	var workers []*exec.Cmd
	var logs []*output
	for i := range 2 {
		w, log := startWorker(t, repo, srv, "--identity", fmt.Sprint("w", i), "--concurrency", "3")
		workers, logs = append(workers, w), append(logs, log)
	}
	client, out := startSot(t, repo, srv, append(args, "--executor", "temporal", "--output-dir", "out-temporal")...)
	waitForRequests(t, srv, 2, out, logs[0])
	if err := workers[0].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(client, 3*time.Minute); err != nil {
		t.Fatalf("the review on Temporal: %v\n%s\nworker 1:\n%s", err, out.String(), logs[1].String())
	}
	if !bytes.Contains(out.Bytes(), []byte("the run is workflow sot-drive-review-")) {
		t.Errorf("the client did not say which workflow runs its calls:\n%s", out.String())
	}
	if a, b := synthesis(t, filepath.Join(repo, "out-local")), synthesis(t, filepath.Join(repo, "out-temporal")); a != b {
		t.Errorf("the synthesis on Temporal differs from the local run's:\n--- local\n%s\n--- temporal\n%s", a, b)
	}
	// Only a call in flight on the killed worker (at most its
	// concurrency, 3) is sent again; every answered call is paid once.
	paidOnce(t, want, srv, 3)
}

// startSot starts sot in dir with args, its output gathered.
func startSot(t *testing.T, dir string, srv *llmtest.Server, args ...string) (*exec.Cmd, *output) {
	t.Helper()
	cmd := sotCmd(dir, srv, args...)
	var out output
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out
}

// waitForRequests waits (a minute at most) until the fake model has seen
// n requests; logs are shown if it never does.
func waitForRequests(t *testing.T, srv *llmtest.Server, n int, logs ...*output) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for len(srv.Requests()) < n {
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, l := range logs {
				b.WriteString(l.String() + "\n")
			}
			t.Fatalf("fewer than %d calls reached the model in a minute:\n%s", n, b.String())
		}
		time.Sleep(10 * time.Millisecond) // polling, not synchronisation
	}
}

// waitExit waits for cmd, killing it after limit.
func waitExit(cmd *exec.Cmd, limit time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		return fmt.Errorf("not finished after %v", limit)
	}
}

// paidOnce checks the calls the fake model answered against a local run's
// (want): every one of them was made, none other, and at most again were
// made twice (the calls a killed worker had in flight). A request the
// killed worker was sending may arrive cut short; the calls that count are
// those the model answered.
func paidOnce(t *testing.T, want map[string]int, srv *llmtest.Server, again int) {
	t.Helper()
	got := keysOf(answered(srv))
	twice := 0
	for k, n := range got {
		if want[k] == 0 {
			t.Errorf("the model answered a call the local run never made: %.300q", k[max(0, len(k)-300):])
		}
		// A run may ask the same thing more than once (identical
		// summaries): only calls past the local run's count were paid
		// twice.
		twice += max(0, n-max(want[k], 1))
	}
	for k := range want {
		if got[k] == 0 {
			t.Errorf("a call of the local run was never made on Temporal: %.300q", k[max(0, len(k)-300):])
		}
	}
	if twice > again {
		for k, n := range got {
			if n > want[k] {
				t.Logf("made %d times, %d locally: %.160q", n, want[k], k[max(0, len(k)-160):])
			}
		}
		t.Errorf("%d calls were made twice; want at most the %d the killed worker could have had in flight", twice, again)
	}
}

// requestKeys counts the requests a fake model saw, by what they asked.
func requestKeys(s *llmtest.Server) map[string]int { return keysOf(s.Requests()) }

// answered are the requests a fake model answered (200), leaving out one
// a killed worker was still sending or had in flight.
func answered(s *llmtest.Server) []llmtest.Recorded {
	var out []llmtest.Recorded
	for _, r := range s.Requests() {
		if r.Status == 200 {
			out = append(out, r)
		}
	}
	return out
}

// keysOf counts requests by what they asked.
func keysOf(reqs []llmtest.Recorded) map[string]int {
	n := map[string]int{}
	for _, r := range reqs {
		k := r.System
		for _, m := range r.Messages {
			k += "\x00" + m.Text
		}
		n[k]++
	}
	return n
}

// Ctrl-C detaches a run on Temporal: the calls it had sent finish on the
// worker, and the same command, run again, joins the workflow and is
// answered them without asking the model again. sot runs --temporal lists
// the workflow, and --cancel refuses an id that is not sot's.
func TestReviewOnTemporalDetachesAndJoins(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	addr := temporaltest.Start(t)
	repo := gitRepo(t)
	// The executor comes from the user's configuration this time, not
	// from --executor.
	temporalConfig(t, repo, addr, "detach", "  kind: temporal")
	srv := llmtest.NewServer(llmtest.Config{Latency: 600 * time.Millisecond})
	defer srv.Close()
	_, wlog := startWorker(t, repo, srv, "--concurrency", "20")

	args := []string{"review", "--seed", "7", "--perspectives", "none", "--no-cache", "--output-dir", "out"}
	first, out1 := startSot(t, repo, srv, args...)
	waitForRequests(t, srv, 1, out1, wlog)
	_ = first.Process.Signal(os.Interrupt)
	if err := first.Wait(); err == nil {
		t.Fatalf("the interrupted run exited 0:\n%s", out1.String())
	}
	sent := len(srv.Requests())

	second := sotCmd(repo, srv, args...)
	if out, err := second.CombinedOutput(); err != nil {
		t.Fatalf("the run again: %v\n%s", err, out)
	}
	again := 0
	for _, n := range requestKeys(srv) {
		again += n - 1
	}
	if again != 0 {
		t.Errorf("%d calls were asked twice (the first process had sent %d before Ctrl-C); the second run should be answered them by the workflow", again, sent)
	}

	list, err := sotCmd(repo, srv, "runs", "--temporal", "--all", "--json").CombinedOutput()
	if err != nil || !bytes.Contains(list, []byte(`"workflow_id": "sot-drive-review-`)) {
		t.Errorf("sot runs --temporal --all: %v\n%s", err, list)
	}
	if out, err := sotCmd(repo, srv, "runs", "--cancel", "payments-nightly").CombinedOutput(); err == nil || !bytes.Contains(out, []byte("not the id of a sot workflow")) {
		t.Errorf("sot runs --cancel of another workflow: %v\n%s", err, out)
	}
}

var durationLine = regexp.MustCompile(`(?m)^- (?:Duration|Started): .*$`)

// fromScript writes files of a testscript's archive into dir.
func fromScript(t *testing.T, dir, script string, names ...string) {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("testdata", "script", script))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if !slices.Contains(names, f.Name) && !slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, "/") && strings.HasPrefix(f.Name, n) }) {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// temporalConfig writes the user's configuration of a test: the dev server
// at addr, a queue of its own and a blob store in the repository's cache.
func temporalConfig(t *testing.T, repo, addr, queue string, extra ...string) {
	t.Helper()
	temporalConfigBlobs(t, repo, addr, queue, filepath.Join(repo, ".cache", "blobs"), extra...)
}

// temporalConfigBlobs is temporalConfig with the blob store given; extra
// are more lines of the executor section.
func temporalConfigBlobs(t *testing.T, repo, addr, queue, blobs string, extra ...string) {
	t.Helper()
	cfgDir := filepath.Join(repo, ".config", "sot")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("executor:\n  address: %s\n  task_queue: %s\n  blobs: %s\n  heartbeat: 2s\n", addr, queue, blobs)
	for _, l := range extra {
		conf += l + "\n"
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "config.yaml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startWorker starts a `sot worker` for the test; it is killed when the
// test ends.
func startWorker(t *testing.T, repo string, srv *llmtest.Server, args ...string) (*exec.Cmd, *output) {
	t.Helper()
	w := sotCmd(repo, srv, append([]string{"worker"}, args...)...)
	var log output
	w.Stdout, w.Stderr = &log, &log
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Process.Kill(); _ = w.Wait() })
	return w, &log
}

// A debate with branches on Temporal writes the local run's dialectic log
// and debate.json, and the model is asked each of its calls once.
func TestDebateOnTemporalMatchesLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	addr := temporaltest.Start(t)
	repo, cfg, args, local := localDebate(t)
	temporalConfig(t, repo, addr, "debate")
	srv := llmtest.NewServer(cfg)
	defer srv.Close()
	// sot doctor checks the executor: with no worker on the queue it says
	// to start one; with one, the model checks are made by it (their
	// requests reach the model through the worker).
	out, err := sotCmd(repo, srv, "doctor", "--executor", "temporal").CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("no sot worker is taking work from it")) || !bytes.Contains(out, []byte("start `sot worker`")) {
		t.Errorf("sot doctor with no worker: %v\n%s", err, out)
	}
	_, wlog := startWorker(t, repo, srv, "--identity", "doctor-w")
	asked := len(srv.Requests())
	deadline := time.Now().Add(30 * time.Second)
	for {
		// This fake model answers no JSON, so the structured check fails
		// whoever makes it; what counts is that the worker made it.
		out, _ = sotCmd(repo, srv, "doctor", "--executor", "temporal").CombinedOutput()
		if bytes.Contains(out, []byte("worker(s)")) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond) // the worker is not polling yet
	}
	if !bytes.Contains(out, []byte("1 worker(s) (doctor-w)")) || len(srv.Requests()) == asked {
		t.Errorf("sot doctor with a worker did not send its checks through it:\n%s", out)
	}
	before := len(srv.Requests()) // the doctor's
	if out, err := sotCmd(repo, srv, append(args, "--executor", "temporal", "--output-dir", "out-temporal")...).CombinedOutput(); err != nil {
		t.Fatalf("debate on Temporal: %v\n%s\nworker:\n%s", err, out, wlog.String())
	}
	for _, name := range []string{"dialectic-log.md", "branch-2.md"} {
		a, _ := os.ReadFile(filepath.Join(repo, "out-local", name))
		b, _ := os.ReadFile(filepath.Join(repo, "out-temporal", name))
		// When the run started and how long it took are the lines that may differ.
		a, b = durationLine.ReplaceAll(a, nil), durationLine.ReplaceAll(b, nil)
		if len(a) == 0 || string(a) != string(b) {
			t.Errorf("%s on Temporal differs from the local run's (%d and %d bytes)", name, len(a), len(b))
		}
	}
	debated := srv.Requests()[before:]
	want, got := requestKeys(local), keysOf(debated)
	if len(got) != len(want) || len(debated) != len(local.Requests()) {
		t.Errorf("the model was asked %d calls (%d distinct) on Temporal, %d (%d distinct) locally", len(debated), len(got), len(local.Requests()), len(want))
	}

	// A passage read from standard input goes with the run to the worker.
	poem, err := os.ReadFile(filepath.Join(repo, "poem.txt"))
	if err != nil {
		t.Fatal(err)
	}
	piped := sotCmd(repo, srv, "debate", "--rounds", "1", "--branch-rounds", "1", "--no-cache", "--executor", "temporal", "--output-dir", "out-stdin", "-")
	piped.Stdin = bytes.NewReader(poem)
	out, err = piped.CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("runs here")) || !bytes.Contains(out, []byte("drives it")) {
		t.Fatalf("a debate of standard input on Temporal: %v\n%s", err, out)
	}
	if log, _ := os.ReadFile(filepath.Join(repo, "out-stdin", "dialectic-log.md")); len(log) == 0 {
		t.Error("the debate of standard input wrote no dialectic log")
	}
}

// localDebate makes a repository with the debate script's passage and
// answers, and runs the debate of it with branches in this process into
// out-local: the run a debate on Temporal must match. It returns the
// repository, the fake model's configuration, the debate's arguments and
// the fake model the local run asked.
func localDebate(t *testing.T) (repo string, cfg llmtest.Config, args []string, local *llmtest.Server) {
	t.Helper()
	repo = gitRepo(t)
	fromScript(t, repo, "debate.txtar", "answers.yaml", "poem.txt")
	cfg, err := llmtest.LoadConfig(filepath.Join(repo, "answers.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	args = []string{"debate", "--rounds", "1", "--branch-rounds", "1", "--no-cache", "poem.txt"}
	local = llmtest.NewServer(cfg)
	t.Cleanup(local.Close)
	if out, err := sotCmd(repo, local, append(args, "--output-dir", "out-local")...).CombinedOutput(); err != nil {
		t.Fatalf("local debate: %v\n%s", err, out)
	}
	return repo, cfg, args, local
}

// A question over a corpus on Temporal, its requests and answers kept in
// an S3-compatible bucket (served over HTTP on loopback), writes the local
// run's answer, and the model is asked each of its calls once.
func TestAskOnTemporalMatchesLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	addr := temporaltest.Start(t)
	repo := gitRepo(t)
	fromScript(t, repo, "ask.txtar", "answers.yaml", ".sot/corpus/")
	cfg, err := llmtest.LoadConfig(filepath.Join(repo, "answers.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"ask", "--no-cache", "What did we decide about the billing migration?"}
	local := llmtest.NewServer(cfg)
	defer local.Close()
	if out, err := sotCmd(repo, local, append(args, "--output-dir", "out-local")...).CombinedOutput(); err != nil {
		t.Fatalf("local ask: %v\n%s", err, out)
	}
	bucket := s3mem.New()
	if err := bucket.CreateBucket("sot-blobs"); err != nil {
		t.Fatal(err)
	}
	s3 := httptest.NewServer(gofakes3.New(bucket).Server())
	defer s3.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "example-secret-0123456789")
	temporalConfigBlobs(t, repo, addr, "ask", "s3://sot-blobs/runs?tls=false&region=us-east-1&endpoint="+strings.TrimPrefix(s3.URL, "http://"))
	srv := llmtest.NewServer(cfg)
	defer srv.Close()
	startWorker(t, repo, srv)
	startWorker(t, repo, srv)
	if out, err := sotCmd(repo, srv, append(args, "--executor", "temporal", "--output-dir", "out-temporal")...).CombinedOutput(); err != nil {
		t.Fatalf("ask on Temporal: %v\n%s", err, out)
	}
	a, _ := os.ReadFile(filepath.Join(repo, "out-local", "ANSWER.md"))
	b, _ := os.ReadFile(filepath.Join(repo, "out-temporal", "ANSWER.md"))
	if len(a) == 0 || string(a) != string(b) {
		t.Errorf("ANSWER.md on Temporal differs from the local run's (%d and %d bytes)", len(a), len(b))
	}
	if n, m := len(srv.Requests()), len(local.Requests()); n != m || m == 0 {
		t.Errorf("the model was asked %d calls on Temporal, %d locally", n, m)
	}
	if objects, _ := bucket.ListBucket("sot-blobs", &gofakes3.Prefix{}, gofakes3.ListBucketPage{}); objects == nil || len(objects.Contents) == 0 {
		t.Error("nothing went through the bucket")
	}
}

// A run whose workflow is cancelled (sot runs --cancel) stops as Ctrl-C
// stops it: exit 130, saying why and which command resumes it; that
// command then finishes the run in a new workflow.
func TestReviewOnTemporalCancelled(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	addr := temporaltest.Start(t)
	repo := gitRepo(t)
	temporalConfig(t, repo, addr, "cancel")
	srv := llmtest.NewServer(llmtest.Config{Latency: 3 * time.Second})
	defer srv.Close()
	startWorker(t, repo, srv)
	args := []string{"review", "--seed", "3", "--perspectives", "none", "--no-cache", "--executor", "temporal", "--output-dir", "out"}
	client, out := startSot(t, repo, srv, args...)
	waitForRequests(t, srv, 1, out)
	list, err := sotCmd(repo, srv, "runs", "--temporal", "--json", "--executor", "temporal").Output()
	if err != nil {
		t.Fatal(err)
	}
	id := regexp.MustCompile(`"workflow_id": "(sot-[^"]+)"`).FindSubmatch(list)
	if id == nil {
		t.Fatalf("sot runs --temporal lists no running workflow:\n%s", list)
	}
	if out, err := sotCmd(repo, srv, "runs", "--cancel", string(id[1])).CombinedOutput(); err != nil {
		t.Fatalf("sot runs --cancel: %v\n%s", err, out)
	}
	err = client.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("the cancelled run exited %v, want 130:\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "was cancelled") || !strings.Contains(out.String(), "Resume with: sot review") {
		t.Errorf("the cancelled run does not say why or how to resume:\n%s", out.String())
	}
	if out, err := sotCmd(repo, srv, args...).CombinedOutput(); err != nil {
		t.Fatalf("the resumed run: %v\n%s", err, out)
	}
}

// A question over 1,000 generated notes on Temporal, made by two workers
// 16 calls wide, one of them killed with SIGKILL after a hundred calls:
// the other finishes it, ANSWER.md is the local run's, every call of the
// local run was made, and only calls the killed worker had in flight (at
// most 16) were made twice.
func TestAskOfAThousandSourcesSurvivesAKilledWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes over a generated corpus")
	}
	addr := temporaltest.Start(t, "history.maxInFlightUpdates=32")
	top := project(t, 1_000)
	cfg := llmtest.Config{Latency: 30 * time.Millisecond, Rules: []llmtest.Rule{{Respond: respond}}}
	local := llmtest.NewServer(cfg)
	defer local.Close()
	args := []string{"ask", "--max-sources=1000", "--no-cache", corpusgen.Question}
	if out, err := sotCmd(top, local, append(args, "--concurrency", "16", "--output-dir", "out-local")...).CombinedOutput(); err != nil {
		t.Fatalf("local ask: %v\n%s", err, out)
	}
	want := requestKeys(local)

	temporalConfig(t, top, addr, "thousand", "  max_in_flight: 32")
	srv := llmtest.NewServer(cfg)
	defer srv.Close()
	w0, _ := startWorker(t, top, srv, "--identity", "w0", "--concurrency", "16")
	startWorker(t, top, srv, "--identity", "w1", "--concurrency", "16")
	client, out := startSot(t, top, srv, append(args, "--executor", "temporal", "--output-dir", "out-temporal")...)
	waitForRequests(t, srv, 100, out)
	if err := w0.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(client, 5*time.Minute); err != nil {
		t.Fatalf("the ask on Temporal: %v\n%s", err, out.String())
	}
	a, _ := os.ReadFile(filepath.Join(top, "out-local", "ANSWER.md"))
	b, _ := os.ReadFile(filepath.Join(top, "out-temporal", "ANSWER.md"))
	if len(a) == 0 || string(a) != string(b) {
		t.Errorf("ANSWER.md on Temporal differs from the local run's (%d and %d bytes)", len(a), len(b))
	}
	paidOnce(t, want, srv, 16)
	// The question's large steps went as child workflows of the run's.
	bin, err := temporaltest.Binary()
	if err != nil {
		t.Fatal(err)
	}
	list, err := exec.Command(bin, "workflow", "count", "--address", addr, "--query", "WorkflowType='sot.calls'").CombinedOutput()
	if n := regexp.MustCompile(`Total: (\d+)`).FindSubmatch(list); err != nil || n == nil || string(n[1]) == "0" {
		t.Errorf("no batch of the question's calls went as a child workflow: %v\n%s", err, list)
	}
}

// A run moves between executors through its journal: a review started
// locally and interrupted with Ctrl-C is resumed with --executor temporal,
// where a worker makes only the calls the local run had not finished, and
// its synthesis is an uninterrupted local run's.
func TestReviewMovesFromLocalToTemporal(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	addr := temporaltest.Start(t)
	repo := gitRepo(t)
	srv := llmtest.NewServer(llmtest.Config{Latency: 200 * time.Millisecond, LatencyJitter: time.Second})
	defer srv.Close()
	args := []string{"review", "--seed", "5", "--perspectives", "none", "--no-cache", "--specialists", "security,testing,performance,maintainability"}

	if out, err := sotCmd(repo, srv, append(args, "--output-dir", "out-local")...).CombinedOutput(); err != nil {
		t.Fatalf("the local run: %v\n%s", err, out)
	}
	want := synthesis(t, filepath.Join(repo, "out-local"))
	local := keysOf(answered(srv))
	// The moved run talks to a model server of its own, whose requests are
	// its alone.
	srv = llmtest.NewServer(llmtest.Config{Latency: 200 * time.Millisecond, LatencyJitter: time.Second})
	defer srv.Close()

	// Started locally, stopped with Ctrl-C once a call is journaled.
	moved := append(args, "--output-dir", "out")
	first, log := startSot(t, repo, srv, moved...)
	waitForJournaledCall(t, filepath.Join(repo, "out", "journal.jsonl"))
	first.Process.Signal(os.Interrupt)
	if code := exitCode(first.Wait()); code != 130 {
		t.Fatalf("the interrupted local run exited %d, want 130:\n%s", code, log)
	}
	journaled, _ := os.ReadFile(filepath.Join(repo, "out", "journal.jsonl"))

	// Resumed on Temporal.
	temporalConfig(t, repo, addr, "moved")
	startWorker(t, repo, srv)
	if out, err := sotCmd(repo, srv, append(moved, "--executor", "temporal")...).CombinedOutput(); err != nil {
		t.Fatalf("the run resumed on Temporal: %v\n%s", err, out)
	}
	if got := synthesis(t, filepath.Join(repo, "out")); got != want {
		t.Errorf("the synthesis of the moved run differs from the local run's:\n--- local\n%s\n--- moved\n%s", want, got)
	}
	notPaidAgain(t, srv, journaled)
	for k := range keysOf(answered(srv)) {
		if local[k] == 0 {
			t.Errorf("the moved run made a call the local run never made: %.200q", k[max(0, len(k)-200):])
		}
	}
}

// output gathers what a process the test started writes, for the test
// to read while it still writes.
type output struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

func (o *output) Bytes() []byte { return []byte(o.String()) }
