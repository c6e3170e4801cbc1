package temporal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/sotlabs/sot/blob"
	"github.com/sotlabs/sot/internal/temporaltest"
)

// envDriveProgram makes this test binary the program a Driver runs.
const envDriveProgram = "SOT_DRIVE_TEST_PROGRAM"

func TestMain(m *testing.M) {
	if os.Getenv(envDriveProgram) == "1" {
		os.Exit(driveProgram(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// driveProgram stands in for sot on a worker: it reads input.txt in its
// directory and writes out/result.txt; with --slow it waits for Ctrl-C
// and writes out/partial.txt, exiting 130, as an interrupted run does.
func driveProgram(args []string) int {
	if len(args) < 2 || args[0] != "review" || args[1] != "--executor=temporal" || os.Getenv(EnvDriveWorkflow) == "" {
		fmt.Fprintf(os.Stderr, "unexpected invocation %q (%s=%q)\n", args, EnvDriveWorkflow, os.Getenv(EnvDriveWorkflow))
		return 2
	}
	in, err := os.ReadFile("input.txt")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_ = os.MkdirAll("out", 0o755)
	if slices.Contains(args, "--ask") {
		// Ask the user following the run, as a review's trade-off does.
		c, err := client.Dial(client.Options{HostPort: os.Getenv("SOT_TEST_TEMPORAL"), Logger: quiet{}})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer c.Close()
		// The run is the workflow of its own, as sot's is: the question
		// is an activity of it, which asks through the drive workflow.
		h := &Host{Client: c, Calls: "no-calls", Drive: os.Getenv(EnvDriveWorkflow), Identity: "drive-program"}
		var answer string
		err = h.Run(context.Background(), func(context.Context) error {
			var err error
			answer, err = h.Ask("Which way?", []string{"left", "right"})
			return err
		})
		if errors.Is(err, ErrUnanswered) {
			answer = "nobody answered"
		} else if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		_ = os.WriteFile(filepath.Join("out", "answer.txt"), []byte(answer+" (asked: "+os.Getenv(EnvDriveAsk)+")"), 0o644)
		return 0
	}
	if slices.Contains(args, "-") {
		// Standard input, as `sot debate -` reads it.
		data, _ := io.ReadAll(os.Stdin)
		_ = os.WriteFile(filepath.Join("out", "stdin.txt"), data, 0o644)
		return 0
	}
	for i := range 3 {
		fmt.Fprintf(os.Stderr, "line %d\n", i+1)
	}
	if slices.Contains(args, "--slow") {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt)
		_ = os.WriteFile(filepath.Join("out", "started.txt"), nil, 0o644)
		select {
		case <-sig:
			_ = os.WriteFile(filepath.Join("out", "partial.txt"), []byte("half of "+string(in)), 0o644)
			fmt.Fprintln(os.Stderr, "interrupted")
			return 130
		case <-time.After(time.Minute):
			return 1
		}
	}
	_ = os.WriteFile(filepath.Join("out", "result.txt"), []byte(strings.ToUpper(string(in))), 0o644)
	fmt.Println("done:", strings.Join(args[2:], " "))
	return 0
}

// driveEnv is a dev server, a blob store holding a small project, and a
// worker whose Driver runs this test binary as its program.
type driveEnv struct {
	c       client.Client
	blobs   *blob.Dir
	queue   string
	addr    string
	project blob.Ref
	work    string
}

func newDriveEnv(t *testing.T) *driveEnv {
	t.Helper()
	addr := temporaltest.Start(t)
	c, err := client.Dial(client.Options{HostPort: addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	blobs, err := blob.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { blobs.Close() })
	top := t.TempDir()
	if err := os.WriteFile(filepath.Join(top, "input.txt"), []byte("the project"), 0o644); err != nil {
		t.Fatal(err)
	}
	ref, _, err := blob.PutTree(context.Background(), blobs, top, []string{"input.txt"}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := &driveEnv{c: c, blobs: blobs, addr: addr, queue: "drive-" + strings.ReplaceAll(t.Name(), "/", "-"), project: ref, work: t.TempDir()}
	w := worker.New(c, e.queue, worker.Options{})
	RegisterDriveWorkflow(w)
	dw := NewDriveWorker(c, e.queue, &Driver{Blobs: blobs, Program: exe, Work: e.work, Env: append(os.Environ(), envDriveProgram+"=1", "SOT_TEST_TEMPORAL="+addr), Identity: "driver-1"}, worker.Options{})
	for _, w := range []worker.Worker{w, dw} {
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
	}
	return e
}

func (e *driveEnv) start(t *testing.T, id string, args ...string) client.WorkflowRun {
	t.Helper()
	return e.startWith(t, id, DriveInput{Command: "review", Args: args, Dir: ".", Project: e.project, Heartbeat: 2 * time.Second})
}

func (e *driveEnv) startWith(t *testing.T, id string, in DriveInput) client.WorkflowRun {
	t.Helper()
	run, err := e.c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: id, TaskQueue: e.queue}, DriveWorkflowName, in)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// fileOf returns the bytes of path among files.
func (e *driveEnv) fileOf(t *testing.T, files []blob.Entry, path string) string {
	t.Helper()
	for _, f := range files {
		if f.Path == path {
			b, err := e.blobs.Get(context.Background(), f.Ref)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	t.Fatalf("the run sent back no %s (it sent %v)", path, files)
	return ""
}

// A driven command that reads standard input ("-") reads what the
// starting command sent with the run.
func TestDriveGivesTheCommandItsStandardInput(t *testing.T) {
	e := newDriveEnv(t)
	ref, err := e.blobs.Put(context.Background(), []byte("a passage read from a pipe"))
	if err != nil {
		t.Fatal(err)
	}
	var out DriveOutput
	in := DriveInput{Command: "review", Args: []string{"-"}, Dir: ".", Project: e.project, Stdin: ref}
	if err := e.startWith(t, "sot-drive-stdin", in).Get(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	if got := e.fileOf(t, out.Files, "out/stdin.txt"); out.Exit != 0 || got != "a passage read from a pipe" {
		t.Errorf("exit %d; the command read %q on standard input", out.Exit, got)
	}
}

// A driven run's command runs on the worker in a copy of the project, and
// what it wrote, printed and exited with comes back; the copy is removed.
func TestDriveRunsTheCommandInACopyOfTheProject(t *testing.T) {
	e := newDriveEnv(t)
	var out DriveOutput
	if err := e.start(t, "sot-drive-test", "--seed", "1").Get(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Exit != 0 || out.Worker != "driver-1" {
		t.Fatalf("exit %d on %q, want 0 on driver-1", out.Exit, out.Worker)
	}
	if got := e.fileOf(t, out.Files, "out/result.txt"); got != "THE PROJECT" {
		t.Errorf("out/result.txt is %q", got)
	}
	if len(out.Files) != 1 {
		t.Errorf("the run sent back %d files, want only what it wrote: %v", len(out.Files), out.Files)
	}
	stdout, _ := e.blobs.Get(context.Background(), out.Stdout)
	stderr, _ := e.blobs.Get(context.Background(), out.Stderr)
	if string(stdout) != "done: --seed 1\n" || !slices.Equal(Lines(stderr), []string{"line 1", "line 2", "line 3"}) {
		t.Errorf("stdout %q, stderr %q", stdout, stderr)
	}
	if left, _ := os.ReadDir(e.work); len(left) != 0 {
		t.Errorf("the worker left the project's copy behind: %v", left)
	}
	if _, err := e.blobs.Kept(context.Background(), DriveKept("sot-drive-test")); err != nil {
		t.Errorf("the outcome was not kept by name: %v", err)
	}
}

// A driven run cancelled from outside (sot runs --cancel) stops its
// command as Ctrl-C does; the command's partial result and exit code are
// kept, for the client to write back.
func TestDriveCancelledKeepsThePartialResult(t *testing.T) {
	e := newDriveEnv(t)
	run := e.start(t, "sot-drive-cancel", "--slow")
	deadline := time.Now().Add(time.Minute)
	for !started(e.work) {
		if time.Now().After(deadline) {
			t.Fatal("the command never started")
		}
		time.Sleep(20 * time.Millisecond) // polling, not synchronisation
	}
	if err := Cancel(context.Background(), e.c, "sot-drive-cancel"); err != nil {
		t.Fatal(err)
	}
	var out DriveOutput
	err := run.Get(context.Background(), &out)
	var cancelled *sdktemporal.CanceledError
	if err != nil && !errors.As(err, &cancelled) {
		t.Fatalf("the cancelled run ended with %v", err)
	}
	kept, kerr := e.blobs.Kept(context.Background(), DriveKept("sot-drive-cancel"))
	if kerr != nil || DecodeDrive(kept, &out) != nil {
		t.Fatalf("no outcome kept for the cancelled run: %v", kerr)
	}
	if out.Exit != 130 {
		t.Errorf("the cancelled command exited %d, want 130 as after Ctrl-C", out.Exit)
	}
	if got := e.fileOf(t, out.Files, "out/partial.txt"); got != "half of the project" {
		t.Errorf("out/partial.txt is %q", got)
	}
}

// started reports whether a command under work wrote out/started.txt.
func started(work string) bool {
	found := false
	_ = filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "started.txt" {
			found = true
		}
		return nil
	})
	return found
}

// recordDriveHistory writes the history of a driven run to testdata/name,
// for TestReplayCommittedHistory.
func recordDriveHistory(t *testing.T, name string) {
	e := newDriveEnv(t)
	if err := e.start(t, "sot-drive-history").Get(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	bin, err := temporaltest.Binary()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "workflow", "show", "--workflow-id", "sot-drive-history", "--address", e.addr, "--output", "json").Output()
	if err != nil {
		t.Fatalf("temporal workflow show: %v", err)
	}
	if err := os.WriteFile(filepath.Join("testdata", name), out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// quiet is a Temporal logger that says nothing.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}

// A driven command asks its user through the workflow: the question is
// listed to the client that follows the run, and its answer, signalled
// back, is the command's. A question nobody answers in time is answered
// by nobody, and the command goes on.
func TestDrivenRunAsksItsUser(t *testing.T) {
	e := newDriveEnv(t)
	ctx := context.Background()
	in := DriveInput{Command: "review", Args: []string{"--ask"}, Dir: ".", Project: e.project, Heartbeat: 2 * time.Second, Interactive: true}
	run := e.startWith(t, "sot-drive-ask", in)
	var waiting []Question
	deadline := time.Now().Add(time.Minute)
	for len(waiting) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the question never reached the workflow")
		}
		time.Sleep(50 * time.Millisecond) // polling, as a following client does
		if v, err := e.c.QueryWorkflow(ctx, "sot-drive-ask", "", QueryQuestions); err == nil {
			_ = v.Get(&waiting)
		}
	}
	if waiting[0].Text != "Which way?" || !slices.Equal(waiting[0].Choices, []string{"left", "right"}) {
		t.Fatalf("the question listed is %+v", waiting[0])
	}
	if err := e.c.SignalWorkflow(ctx, "sot-drive-ask", "", SignalAnswer, Answer{ID: waiting[0].ID, Choice: "right"}); err != nil {
		t.Fatal(err)
	}
	var out DriveOutput
	if err := run.Get(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if got := e.fileOf(t, out.Files, "out/answer.txt"); got != "right (asked: 1)" {
		t.Errorf("the command got %q, want the user's answer", got)
	}

	in.AskTimeout = time.Second
	if err := e.startWith(t, "sot-drive-unanswered", in).Get(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if got := e.fileOf(t, out.Files, "out/answer.txt"); got != "nobody answered (asked: 1)" {
		t.Errorf("an unanswered question gave the command %q", got)
	}
}

// A client of the queue may not point the worker's command outside the
// copy of its project.
func TestDriveArgsStayInTheProject(t *testing.T) {
	for _, c := range []struct {
		dir  string
		args []string
		ok   bool
	}{
		{".", []string{"--output-dir=out", "notes/a.md", "what is ../ for?"}, true},
		{"sub", []string{"--sources", "../notes"}, true},
		{".", []string{"--output-dir=/home/worker/.ssh"}, false},
		{".", []string{"--config", "/etc/sot.yaml"}, false},
		{"sub", []string{"../../outside"}, false},
		{".", []string{"--", "../x"}, false},
	} {
		err := confined(c.dir, c.args)
		if (err == nil) != c.ok {
			t.Errorf("confined(%q, %q) = %v", c.dir, c.args, err)
		}
	}
}

// Tidy removes the project copies a killed worker left behind, and only
// those old enough.
func TestDriverTidy(t *testing.T) {
	work := t.TempDir()
	old, recent := filepath.Join(work, "old"), filepath.Join(work, "recent")
	for _, d := range []string{old, recent} {
		if err := os.MkdirAll(filepath.Join(d, "src"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	(&Driver{Work: work}).Tidy(7 * 24 * time.Hour)
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("the old copy is still there")
	}
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("the recent copy was removed: %v", err)
	}
}
