package temporal

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/sotlabs/sot/blob"
)

// Names of the workflow and activity that drive a whole run on a worker.
const (
	DriveWorkflowName = "sot.drive"
	ActivityDrive     = "sot.drive.command"
)

// DriveInput starts a run whose protocol runs on a worker: the command
// that started it, given again, in a copy of its project.
type DriveInput struct {
	// Command is the scenario ("review", "ask", "debate") and Args its
	// arguments, every path in them relative to Dir.
	Command string   `json:"command"`
	Args    []string `json:"args"`
	// Dir is the directory the command was started in, relative to the
	// project's top (slash-separated; "." for the top).
	Dir string `json:"dir"`
	// Project is the blob.Tree of the project's files.
	Project blob.Ref `json:"project"`
	// Heartbeat is how long the worker driving the run may be silent
	// before another takes the run over (default DefaultHeartbeat).
	Heartbeat time.Duration `json:"heartbeat,omitempty"`
	// Interactive says that the user follows the run on a terminal: the
	// command may ask them (UpdateAsk), each question waiting AskTimeout
	// (default DefaultAskTimeout) for its answer.
	Interactive bool          `json:"interactive,omitempty"`
	AskTimeout  time.Duration `json:"ask_timeout,omitempty"`
	// Mirror names the project for the workers (hex): a worker keeps its
	// copy of it between runs and writes only what changed (see mirror).
	// Empty: a fresh copy each run.
	Mirror string `json:"mirror,omitempty"`
	// Stdin, when set, is what the command reads on its standard input
	// (an argument "-"), by reference.
	Stdin blob.Ref `json:"stdin,omitempty"`
}

// DriveOutput is what the driven command came to.
type DriveOutput struct {
	// Exit is the command's exit code, as the same command would have
	// exited where it was started.
	Exit int `json:"exit"`
	// Stdout and Stderr are its output, by reference.
	Stdout blob.Ref `json:"stdout,omitempty"`
	Stderr blob.Ref `json:"stderr,omitempty"`
	// Files are the files the command wrote or changed in the project,
	// Trusted where the worker vouches for a run record it signed.
	Files []blob.Entry `json:"files,omitempty"`
	// Removed are the files of the project the command removed (an
	// earlier run's outputs it cleared), slash paths relative to its top.
	Removed []string `json:"removed,omitempty"`
	// Worker is the identity of the worker that drove the run to its end,
	// and Attempt which attempt it was (more than 1 when a worker died).
	Worker  string `json:"worker,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
}

// DriveProgress is what the driving activity heartbeats: its last lines
// of the command's standard error, numbered from 1, so a client that
// follows the run prints each line once.
type DriveProgress struct {
	Worker string   `json:"worker"`
	Next   int      `json:"next"` // the number of the line after Lines
	Lines  []string `json:"lines,omitempty"`
}

// progressLines is how many of the last lines a heartbeat carries.
const progressLines = 40

// DriveWorkflow runs one command on a worker (ActivityDrive) and returns
// what it came to. A worker that dies stops heartbeating, and another
// worker runs the command again on the same project: every call the
// first had made is answered by the run's call workflow (RunWorkflow)
// without being paid again, as when a command is resumed. Cancelling the
// workflow interrupts the command as Ctrl-C does, and its partial result
// is still returned.
func DriveWorkflow(ctx workflow.Context, in DriveInput) (DriveOutput, error) {
	hb := in.Heartbeat
	if hb <= 0 {
		hb = DefaultHeartbeat
	}
	st := Status{Run: in.Command + " (driven on a worker)"}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Status, error) { return st, nil }); err != nil {
		return DriveOutput{}, err
	}
	if err := questions(ctx, in.AskTimeout); err != nil {
		return DriveOutput{}, err
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           DriveQueue(workflow.GetInfo(ctx).TaskQueueName),
		StartToCloseTimeout: 7 * 24 * time.Hour,
		HeartbeatTimeout:    hb,
		WaitForCancellation: true,
		RetryPolicy: &sdktemporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: 30 * time.Second, MaximumAttempts: 10},
	})
	var out DriveOutput
	err := workflow.ExecuteActivity(actx, ActivityDrive, in).Get(actx, &out)
	st.Done = true
	if err != nil {
		return out, err
	}
	return out, nil
}

// Driver runs the commands of driven runs on a worker.
type Driver struct {
	// Blobs holds the projects and outputs, shared with the clients.
	Blobs Store
	// Program is the sot executable the worker runs the command with.
	Program string
	// Work is where projects are copied to, one directory per run.
	Work string
	// Env is the command's environment (the worker's, with its keys).
	Env []string
	// Identity names the worker.
	Identity string
	// Sign, when set, signs again a run record the client vouched for
	// (blob.Entry.Trusted) with this worker's key, and Signed says
	// whether a record the command wrote carries this worker's signature.
	Sign   func(data []byte) ([]byte, bool)
	Signed func(data []byte) bool
	// Log, when set, is told of each run the worker begins to drive.
	Log func(string)
	// Keep names the directories of a project a kept copy keeps as the
	// worker's runs left them (the corpus index, which describes the
	// copy's own files) rather than as the client sent them.
	Keep func(dir string) bool
	// Skip leaves directories of the project out of the outputs sent back
	// (sot's own scratch space).
	Skip func(dir string) bool
	// Cancel, when set, cancels a workflow: a cancelled drive cancels the
	// workflow of the command's run (ProtocolID), which stops as a
	// cancelled run and says so. Without it, or when it fails, the
	// command is interrupted as by Ctrl-C.
	Cancel func(ctx context.Context, workflowID string) error
}

// EnvDriveWorkflow names, in the driven command's environment, the
// workflow that drives it: its calls go to a call workflow named after
// it, so that a command run again by another worker joins the same one.
const EnvDriveWorkflow = "SOT_DRIVE_WORKFLOW"

// Drive is the activity: copy the project, run the command in it,
// heartbeating its progress, and send back what it wrote.
func (d *Driver) Drive(ctx context.Context, in DriveInput) (DriveOutput, error) {
	info := activity.GetInfo(ctx)
	wid := info.WorkflowExecution.ID
	if !slices.Contains([]string{"review", "ask", "debate"}, in.Command) {
		return DriveOutput{}, sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf("%q is not a command a worker drives", in.Command), "bad_command", nil)
	}
	if !validDir(in.Dir) {
		return DriveOutput{}, sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf("%q is not a directory inside the project", in.Dir), "bad_dir", nil)
	}
	if err := confined(in.Dir, in.Args); err != nil {
		return DriveOutput{}, sdktemporal.NewNonRetryableApplicationError(err.Error(), "bad_args", nil)
	}
	tree, err := blob.GetTree(ctx, d.Blobs, in.Project)
	if errors.Is(err, blob.ErrNotFound) {
		return DriveOutput{}, sdktemporal.NewNonRetryableApplicationError(
			"the project is not in this worker's blob store: every worker and client of a task queue must share executor.blobs ("+err.Error()+")", "no_blob", err)
	}
	if err != nil {
		return DriveOutput{}, err
	}
	d.log("driving %s (workflow %s, attempt %d)", in.Command, wid, info.Attempt)
	copyStart := time.Now()
	var top string
	m, mirrored := openMirror(d.Work, in.Mirror)
	if mirrored {
		defer m.close()
		top = m.dir
		n, err := m.sync(ctx, d.Blobs, tree, d.Keep)
		if err != nil {
			return DriveOutput{}, fmt.Errorf("bring the project's copy up to date: %w", err)
		}
		d.log("brought the project's kept copy up to date (%d of %d files written) in %v", n, len(tree.Files), time.Since(copyStart).Round(time.Millisecond))
	} else {
		sum := sha256.Sum256([]byte(wid))
		top = filepath.Join(d.Work, fmt.Sprintf("%x", sum[:8]))
		if err := os.RemoveAll(top); err != nil {
			return DriveOutput{}, err
		}
		defer os.RemoveAll(top)
		if err := blob.Materialize(ctx, d.Blobs, tree, top); err != nil {
			return DriveOutput{}, fmt.Errorf("copy the project: %w", err)
		}
		d.log("copied the project (%d files) in %v", len(tree.Files), time.Since(copyStart).Round(time.Millisecond))
	}
	for _, e := range tree.Files {
		if !e.Trusted || d.Sign == nil {
			continue
		}
		p := filepath.Join(top, filepath.FromSlash(e.Path))
		data, err := os.ReadFile(p)
		if err != nil {
			return DriveOutput{}, err
		}
		if signed, ok := d.Sign(data); ok {
			if err := os.WriteFile(p, signed, 0o600); err != nil {
				return DriveOutput{}, err
			}
		}
	}
	if mirrored {
		m.begin(tree)
	}
	cmd := exec.Command(d.Program, append([]string{in.Command, "--executor=temporal"}, in.Args...)...)
	cmd.Dir = filepath.Join(top, filepath.FromSlash(in.Dir))
	if err := os.MkdirAll(cmd.Dir, 0o700); err != nil {
		return DriveOutput{}, err
	}
	cmd.Env = append(slices.Clone(d.Env), EnvDriveWorkflow+"="+wid, "NO_COLOR=1")
	if in.Interactive {
		cmd.Env = append(cmd.Env, EnvDriveAsk+"=1")
	}
	if in.Stdin != "" {
		data, err := d.Blobs.Get(ctx, in.Stdin)
		if err != nil {
			return DriveOutput{}, fmt.Errorf("the command's standard input: %w", err)
		}
		cmd.Stdin = bytes.NewReader(data)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	errs := &lines{}
	cmd.Stderr = errs
	if err := startTied(cmd); err != nil {
		return DriveOutput{}, fmt.Errorf("run %s: %w", d.Program, err)
	}
	runStart := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	every := info.HeartbeatTimeout / 4
	if every <= 0 || every > 5*time.Second {
		every = 5 * time.Second
	}
	if every < 200*time.Millisecond {
		every = 200 * time.Millisecond
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	beat := func() { activity.RecordHeartbeat(ctx, errs.progress(d.Identity)) }
	beat()
	var werr error
	interrupted := false
wait:
	for {
		select {
		case werr = <-done:
			break wait
		case <-tick.C:
			beat()
		case <-ctx.Done():
			if !interrupted {
				// Cancelled: stop the command as Ctrl-C does, so that it
				// writes its partial result, then send that back.
				interrupted = true
				if d.Cancel == nil || d.Cancel(context.WithoutCancel(ctx), ProtocolID(wid)) != nil {
					interrupt(cmd)
				}
			}
			select {
			case werr = <-done:
				break wait
			case <-time.After(time.Minute):
				_ = cmd.Process.Kill()
			}
		}
	}
	exit := 0
	if werr != nil {
		var ee *exec.ExitError
		if !errors.As(werr, &ee) {
			return DriveOutput{}, fmt.Errorf("run %s: %w", d.Program, werr)
		}
		exit = ee.ExitCode()
		if exit < 0 {
			exit = 130
		}
	}
	d.log("the command ended with exit %d after %v", exit, time.Since(runStart).Round(time.Millisecond))
	backStart := time.Now()
	// What the command wrote goes back, in a context of its own: a
	// cancelled run's partial result is sent as a finished one's is.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
	defer cancel()
	out := DriveOutput{Exit: exit, Worker: d.Identity, Attempt: int(info.Attempt)}
	if out.Stdout, err = d.Blobs.Put(sctx, stdout.Bytes()); err != nil {
		return DriveOutput{}, err
	}
	if out.Stderr, err = d.Blobs.Put(sctx, errs.all()); err != nil {
		return DriveOutput{}, err
	}
	var changed []string
	if mirrored {
		changed, err = m.changed(tree, d.Skip)
	} else {
		changed, err = blob.Changed(top, tree, d.Skip, nil)
	}
	if err != nil {
		return DriveOutput{}, fmt.Errorf("find what the command wrote: %w", err)
	}
	_, back, err := blob.PutTree(sctx, d.Blobs, top, changed, 0, func(p string, data []byte) bool {
		return path.Base(p) == "run.json" && d.Signed != nil && d.Signed(data)
	})
	if err != nil {
		return DriveOutput{}, fmt.Errorf("send back what the command wrote: %w", err)
	}
	out.Files = back.Files
	if out.Removed, err = blob.Removed(top, tree, d.Skip); err != nil {
		return DriveOutput{}, fmt.Errorf("find what the command removed: %w", err)
	}
	d.log("sent back %d files in %v", len(out.Files), time.Since(backStart).Round(time.Millisecond))
	if mirrored {
		if err := m.record(); err != nil {
			d.log("the project's kept copy will be written afresh next time: %v", err)
		}
	}
	// Kept by name as well, for a client that finds the workflow
	// cancelled, whose result Temporal does not keep.
	kept, err := json.Marshal(out)
	if err != nil {
		return DriveOutput{}, err
	}
	if err := d.Blobs.Keep(sctx, DriveKept(wid), kept); err != nil {
		return DriveOutput{}, err
	}
	return out, nil
}

// DriveKept is the name a driven run's outcome is kept under.
func DriveKept(workflowID string) string {
	sum := sha256.Sum256([]byte(workflowID))
	return fmt.Sprintf("drive-%x", sum[:16])
}

// DecodeDrive reads a kept DriveOutput.
func DecodeDrive(data []byte, out *DriveOutput) error { return json.Unmarshal(data, out) }

// confined refuses arguments that name a place outside the copy of the
// project the command runs in (an absolute path, or one that climbs out
// of it from dir): a client of the queue chooses what the worker's
// command reads and writes only inside that copy.
func confined(dir string, args []string) error {
	for _, a := range args {
		if a == "--" {
			continue
		}
		if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "-") {
			a = v
		}
		if a == "" || strings.HasPrefix(a, "-") {
			continue
		}
		if filepath.IsAbs(a) || strings.HasPrefix(a, "/") || strings.HasPrefix(a, `\`) {
			return fmt.Errorf("the argument %q is an absolute path: a driven run's paths are relative to its project", a)
		}
		if strings.Contains(a, "..") {
			p := path.Clean(path.Join(dir, filepath.ToSlash(a)))
			if p == ".." || strings.HasPrefix(p, "../") {
				return fmt.Errorf("the argument %q leads out of the project", a)
			}
		}
	}
	return nil
}

// log tells d.Log, if set.
func (d *Driver) log(format string, v ...any) {
	if d.Log != nil {
		d.Log(fmt.Sprintf(format, v...))
	}
}

// Tidy removes the copies of projects that a worker killed while it
// drove their runs left in d.Work, once they are older than age.
func (d *Driver) Tidy(age time.Duration) {
	entries, err := os.ReadDir(d.Work)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Name() == "mirrors" {
			continue
		}
		if fi, err := e.Info(); err == nil && e.IsDir() && time.Since(fi.ModTime()) > age {
			_ = os.RemoveAll(filepath.Join(d.Work, e.Name()))
		}
	}
	// A kept copy no run used for as long, whose record was last written
	// then, unless a run holds it now.
	mirrors := filepath.Join(d.Work, "mirrors")
	entries, _ = os.ReadDir(mirrors)
	for _, e := range entries {
		key, ok := strings.CutSuffix(e.Name(), ".lock")
		if !ok {
			continue
		}
		fi, err := os.Stat(filepath.Join(mirrors, key+".json"))
		if err == nil && time.Since(fi.ModTime()) <= age {
			continue
		}
		if m, ok := openMirror(d.Work, key); ok {
			_ = os.RemoveAll(m.dir)
			_ = os.Remove(m.manifest)
			m.close()
		}
	}
}

// validDir accepts "." or a clean relative slash path.
func validDir(p string) bool {
	return p == "." || (p != "" && !strings.HasPrefix(p, "/") && path.Clean(p) == p && p != ".." && !strings.HasPrefix(p, "../") && !strings.Contains(p, "\\"))
}

// lines gathers a command's standard error and numbers its lines.
type lines struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	partial []byte
	last    []string
	n       int
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.last = append(l.last, string(l.partial[:i]))
		l.partial = l.partial[i+1:]
		l.n++
		if len(l.last) > progressLines {
			l.last = l.last[len(l.last)-progressLines:]
		}
	}
	return len(p), nil
}

func (l *lines) progress(worker string) DriveProgress {
	l.mu.Lock()
	defer l.mu.Unlock()
	return DriveProgress{Worker: worker, Next: l.n + 1, Lines: slices.Clone(l.last)}
}

func (l *lines) all() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.buf.Bytes())
}

// Lines splits a command's standard error as DriveProgress numbers it.
func Lines(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

var _ io.Writer = (*lines)(nil)
