package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sotlabs/sot/internal/temporaltest"
	"github.com/sotlabs/sot/llm/llmtest"
)

// A review on Temporal outlives the machine that started it: the
// starting command is killed with SIGKILL, then so is the worker driving
// the run; the other worker takes the run over and finishes it, without
// asking the model again what it had answered. The same command, run
// again, follows the run to its end and writes the local run's
// synthesis into the project.
func TestReviewDrivenOnTemporalOutlivesItsMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	addr := temporaltest.Start(t)
	repo := gitRepo(t)
	args := []string{"review", "--seed", "11", "--perspectives", "none", "--no-cache"}

	local := llmtest.NewServer(llmtest.Config{Latency: 50 * time.Millisecond})
	defer local.Close()
	if out, err := sotCmd(repo, local, append(args, "--output-dir", "out-local")...).CombinedOutput(); err != nil {
		t.Fatalf("local run: %v\n%s", err, out)
	}
	want := requestKeys(local)

	temporalConfig(t, repo, addr, "drive")
	srv := llmtest.NewServer(llmtest.Config{Latency: 700 * time.Millisecond})
	defer srv.Close()
	workers := startWorkerPair(t, repo, srv)
	driven := append(args, "--executor", "temporal", "--output-dir", "out")
	client, out := startSot(t, repo, srv, driven...)
	waitForRequests(t, srv, 2, out)

	// The machine that started the run is gone...
	if err := client.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = client.Wait()
	if !regexp.MustCompile(`workflow sot-drive-review-[0-9a-f]+`).MatchString(out.String()) {
		t.Errorf("the command did not say which workflow drives its run:\n%s", out.String())
	}
	// ... and so is the worker that drove it.
	driver := killDriver(t, workers, "review")
	other := map[string]string{"w0": "w1", "w1": "w0"}[driver]

	// The same command, from the project, follows the run to its end.
	again := sotCmd(repo, srv, driven...)
	log, err := again.CombinedOutput()
	if err != nil {
		t.Fatalf("following the run again: %v\n%s\n%s:\n%s", err, log, other, workers[other].log)
	}
	if !strings.Contains(workers[other].log.String(), "driving review") {
		t.Errorf("worker %s never took the run over:\n%s", other, workers[other].log)
	}
	// The run is the workflow of its own; the command the other worker
	// drives takes it up from that workflow's history.
	if !bytes.Contains(log, []byte("taking the run up from the history of workflow sot-drive-review-")) {
		t.Errorf("the run was not taken up from its workflow's history:\n%s", log)
	}
	if a, b := synthesis(t, filepath.Join(repo, "out-local")), synthesis(t, filepath.Join(repo, "out")); a != b {
		t.Errorf("the synthesis of the driven run differs from the local run's:\n--- local\n%s\n--- driven\n%s", a, b)
	}
	if !bytes.Contains(log, []byte("from 9 specialist(s)")) || !bytes.Contains(log, []byte("wrote out/REVIEW-SYNTHESIS.md")) {
		t.Errorf("the command does not print the review's summary:\n%s", log)
	}
	// Only a call in flight on the killed worker (at most its
	// concurrency, 4) is asked twice.
	paidOnce(t, want, srv, 4)

	// The run's record and journal came back signed for this user: the
	// run resumes locally without a call.
	before := len(srv.Requests())
	if out, err := sotCmd(repo, srv, append(args, "--output-dir", "out")...).CombinedOutput(); err != nil {
		t.Fatalf("the driven run, resumed locally: %v\n%s", err, out)
	}
	if n := len(srv.Requests()) - before; n != 0 {
		t.Errorf("resuming the driven run locally made %d calls; its journal came back with it", n)
	}
}

// sot runs --prune-blobs removes from the blob store what no run used for
// the age given, and refuses an age a run under way could still need.
func TestPruneBlobs(t *testing.T) {
	repo := gitRepo(t)
	blobs := filepath.Join(repo, ".cache", "blobs")
	temporalConfigBlobs(t, repo, "127.0.0.1:1", "prune", blobs)
	old := filepath.Join(blobs, "kept", "answer-old")
	recent := filepath.Join(blobs, "kept", "answer-recent")
	for _, p := range []string{old, recent} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	out, err := sotCmd(repo, srv, "runs", "--prune-blobs", "7d").CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("removed 1 objects")) {
		t.Fatalf("sot runs --prune-blobs 7d: %v\n%s", err, out)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("the old record is still there")
	}
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("the recent record was removed: %v", err)
	}
	out, err = sotCmd(repo, srv, "runs", "--prune-blobs", "30m").CombinedOutput()
	if code := exitCode(err); code != 2 || !bytes.Contains(out, []byte("longer than your longest run")) {
		t.Errorf("--prune-blobs 30m exited %d:\n%s", code, out)
	}
}

// A debate with branches, driven on Temporal, whose driving worker is
// killed with SIGKILL halfway: the other worker takes it over and writes
// the local run's dialectic log and branches, and a call the killed worker
// had answered is not asked again.
func TestDebateDrivenOnTemporalSurvivesAKilledDriver(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	addr := temporaltest.Start(t)
	repo, cfg, args, local := localDebate(t)
	want := requestKeys(local)

	temporalConfig(t, repo, addr, "debate-drive")
	cfg.Latency = 150 * time.Millisecond
	srv := llmtest.NewServer(cfg)
	defer srv.Close()
	workers := startWorkerPair(t, repo, srv)
	client, out := startSot(t, repo, srv, append(args, "--executor", "temporal", "--output-dir", "out")...)
	// Halfway: the main debate and some of the branches are answered.
	waitForRequests(t, srv, len(local.Requests())/2, out)
	driver := killDriver(t, workers, "debate")
	if err := waitExit(client, 3*time.Minute); err != nil {
		t.Fatalf("the driven debate: %v\n%s", err, out)
	}
	if !strings.Contains(out.String(), "took the run over from "+driver) {
		t.Errorf("the command following the run did not say that another worker took it over:\n%s", out)
	}
	if !strings.Contains(out.String(), "taking the run up from the history of workflow sot-drive-debate-") {
		t.Errorf("the debate was not taken up from its workflow's history:\n%s", out)
	}
	for _, name := range []string{"dialectic-log.md", "branch-2.md", "debate.json"} {
		a, _ := os.ReadFile(filepath.Join(repo, "out-local", name))
		b, _ := os.ReadFile(filepath.Join(repo, "out", name))
		a, b = durationLine.ReplaceAll(a, nil), durationLine.ReplaceAll(b, nil)
		if name == "debate.json" {
			a, b = jsonTimes.ReplaceAll(a, nil), jsonTimes.ReplaceAll(b, nil)
		}
		if len(a) == 0 || string(a) != string(b) {
			t.Errorf("%s of the driven debate differs from the local run's (%d and %d bytes)", name, len(a), len(b))
		}
	}
	paidOnce(t, want, srv, 4)
}

// jsonTimes are the members of a run's JSON that say when it ran.
var jsonTimes = regexp.MustCompile(`"(?:started|finished|created|duration_ms|wall_ms|elapsed_ms)":\s*("[^"]*"|[0-9.]+),?`)

// A worker that makes one call at a time still drives a run and makes
// its calls: the runs it drives come from a queue of their own, so the
// run waiting on its calls never holds the one slot the calls need.
func TestDrivenRunOnAWorkerOfOneCallSlot(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	addr := temporaltest.Start(t)
	repo := gitRepo(t)
	temporalConfig(t, repo, addr, "one-slot")
	srv := llmtest.NewServer(llmtest.Config{Latency: 20 * time.Millisecond})
	defer srv.Close()
	_, wlog := startWorker(t, repo, srv, "--concurrency", "1", "--drives", "1")
	cmd := sotCmd(repo, srv, "review", "--seed", "2", "--perspectives", "none", "--specialists", "security,testing", "--no-cache", "--executor", "temporal", "--output-dir", "out")
	var out output
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(cmd, 2*time.Minute); err != nil {
		t.Fatalf("the review on a worker of one call slot: %v\n%s\nworker:\n%s", err, out.String(), wlog)
	}
	if _, err := os.Stat(filepath.Join(repo, "out", "REVIEW-SYNTHESIS.md")); err != nil {
		t.Fatalf("no synthesis came back: %v\n%s", err, out.String())
	}

	// Another change reviewed into the same directory, by one specialist
	// fewer: the new outputs replace the earlier run's, and the files
	// only the earlier run wrote are gone, as after a local run.
	if err := os.WriteFile(filepath.Join(repo, "app.go"), []byte("package app\n\nfunc Add(a, b int) int {\n\treturn b + a\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"review", "--seed", "2", "--perspectives", "none", "--specialists", "security", "--no-cache"}
	if out, err := sotCmd(repo, srv, append(args, "--output-dir", "out-local", "--executor", "local")...).CombinedOutput(); err != nil {
		t.Fatalf("the local review: %v\n%s", err, out)
	}
	if out, err := sotCmd(repo, srv, append(args, "--output-dir", "out", "--executor", "temporal")...).CombinedOutput(); err != nil {
		t.Fatalf("the second driven review: %v\n%s", err, out)
	}
	if a, b := synthesis(t, filepath.Join(repo, "out-local")), synthesis(t, filepath.Join(repo, "out")); a != b {
		t.Errorf("the second driven review left other outputs than a local run's:\n--- local\n%s\n--- driven\n%s", a, b)
	}
	if a, b := names(t, filepath.Join(repo, "out-local")), names(t, filepath.Join(repo, "out")); !slices.Equal(a, b) {
		t.Errorf("the second driven review's directory holds %q; a local run's %q", b, a)
	}
}

// names lists the files of dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// worker is a `sot worker` a test started, and what it printed.
type worker struct {
	proc *os.Process
	log  *output
}

// startWorkerPair starts workers w0 and w1, four calls wide each.
func startWorkerPair(t *testing.T, repo string, srv *llmtest.Server) map[string]worker {
	t.Helper()
	workers := map[string]worker{}
	for _, id := range []string{"w0", "w1"} {
		w, log := startWorker(t, repo, srv, "--identity", id, "--concurrency", "4")
		workers[id] = worker{w.Process, log}
	}
	return workers
}

// killDriver kills with SIGKILL the worker that says it drives the
// command's run, and returns its identity.
func killDriver(t *testing.T, workers map[string]worker, command string) string {
	t.Helper()
	for id, w := range workers {
		if strings.Contains(w.log.String(), "driving "+command) {
			if err := w.proc.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			return id
		}
	}
	t.Fatalf("no worker says it drives the %s:\nw0:\n%s\nw1:\n%s", command, workers["w0"].log, workers["w1"].log)
	return ""
}
