package mcpcmd

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/internal/lazyre"
	"github.com/sotlabs/sot/internal/safedir"
)

// Where a job is.
const (
	JobRunning     = "running"     // its process is under way
	JobDone        = "done"        // its process ended by itself
	JobCancelled   = "cancelled"   // run_cancel stopped it; not resumed
	JobInterrupted = "interrupted" // the server stopped it; the next server resumes it
)

// exitSuffix names the file a job's command writes its exit code to.
const exitSuffix = ".exit"

// jobsDir is where the jobs of a project are kept, under its top.
var jobsDir = filepath.Join(".sot", "mcp", "jobs")

// Job is one run the server started: the sot command it runs and what
// became of it. Its record lives in .sot/mcp/jobs/<id>.json and the
// command's output in <id>.log beside it, so that a server started later
// (after a restart, or for a client that reconnects) finds it by id.
type Job struct {
	ID       string    `json:"run_id"`
	Scenario string    `json:"scenario"`
	Args     []string  `json:"args"`
	Dir      string    `json:"output_dir"` // the run's directory, relative to the top
	Created  time.Time `json:"created"`
	State    string    `json:"state"`
	PID      int       `json:"pid,omitempty"`
	// Exit is the command's exit code, when the server that started it
	// saw it end.
	Exit  *int      `json:"exit_code,omitempty"`
	Ended time.Time `json:"ended,omitzero"`
	// Starts counts the processes that ran the job: more than one when a
	// server resumed it after the last one was stopped.
	Starts int `json:"starts"`
}

// Progress is how far a running job is, from the lines its command
// prints: "(5 of 19 calls done".
type Progress struct {
	Done, Total int
	Line        string // the last line the command printed
}

// Jobs starts and follows the runs of one project, each in its own sot
// process, so that a run outlives the tool call (and the client) that
// started it, and a crash of one run cannot take the server down.
type Jobs struct {
	top  string
	exe  string
	env  []string
	dir  *safedir.Dir
	mu   sync.Mutex
	live map[string]*proc
	// onEnd is told of each job this server follows when it ends.
	onEnd func(Job)
	// listed finds a job's run as sot runs lists it.
	listed func(Job) (run.Listed, bool)
	// Poll is how often a job the server did not start (one a crashed
	// server left running) and a waiter's progress are looked at.
	poll time.Duration
}

// proc is a job this server follows.
type proc struct {
	job  Job
	cmd  *exec.Cmd
	done chan struct{} // closed when the job's state is final
}

// OpenJobs opens the job store of the project at top. exe is the sot
// executable runs are started with, and env what their environment gets
// besides the server's own.
func OpenJobs(top, exe string, env []string, listed func(Job) (run.Listed, bool)) (*Jobs, error) {
	d, err := safedir.Open(top, filepath.Join(top, jobsDir))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", jobsDir, err)
	}
	// The server's records are the user's, not the repository's: git
	// leaves them alone.
	if mcpDir, err := safedir.Open(top, filepath.Join(top, filepath.Dir(jobsDir))); err == nil {
		if f, err := mcpDir.OpenFile(".gitignore", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
			f.WriteString("*\n")
			f.Close()
		}
		mcpDir.Close()
	}
	return &Jobs{top: top, exe: exe, env: env, dir: d, live: map[string]*proc{}, listed: listed, poll: 200 * time.Millisecond}, nil
}

// Close closes the store; runs under way go on.
func (js *Jobs) Close() error { return js.dir.Close() }

// newID names a new job: its scenario and random hex.
func newID(scenario string) string {
	b := make([]byte, 5)
	rand.Read(b)
	return scenario + "-" + hex.EncodeToString(b)
}

// idPattern is what a job id looks like; anything else is refused before
// it names a file.
var idPattern = lazyre.New(`^(review|ask|debate)-[0-9a-f]{10}$`)

// Start starts a job: sot with args, writing into dir (relative to the
// top), which args must name as the run's output directory.
func (js *Jobs) Start(id, scenario string, args []string, dir string) (Job, error) {
	j := Job{ID: id, Scenario: scenario, Args: args, Dir: dir, Created: time.Now().UTC()}
	p, err := js.start(j)
	if err != nil {
		return Job{}, err
	}
	return p.job, nil
}

func (js *Jobs) start(j Job) (*proc, error) {
	log, err := js.dir.OpenFile(j.ID+".log", os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	// The command writes its exit code beside the record, so that a
	// server started after this one is gone still learns how it ended.
	js.dir.Remove(j.ID + exitSuffix)
	cmd := exec.Command(js.exe, j.Args...)
	cmd.Dir = js.top
	cmd.Env = append(append(os.Environ(), js.env...), cmdutil.ExitFileEnv+"="+js.exitFile(j.ID))
	cmd.Stdin = nil
	// The command's output goes to its log file itself, so it can go on
	// writing when this server is gone; its own process group keeps a
	// Ctrl-C meant for the client from reaching it.
	cmd.Stdout, cmd.Stderr = log, log
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", j.Scenario, err)
	}
	j.State, j.PID, j.Exit, j.Ended = JobRunning, cmd.Process.Pid, nil, time.Time{}
	j.Starts++
	p := &proc{job: j, cmd: cmd, done: make(chan struct{})}
	js.mu.Lock()
	js.live[j.ID] = p
	js.mu.Unlock()
	if err := js.save(j); err != nil {
		cmd.Process.Kill()
	}
	go js.wait(p)
	return p, nil
}

// wait records how a job's process ended.
func (js *Jobs) wait(p *proc) {
	err := p.cmd.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
		if c, ok := signalled(ee); ok {
			code = c
		}
	} else if err != nil {
		code = -1
	}
	js.mu.Lock()
	j := &p.job
	j.Exit, j.Ended, j.PID = &code, time.Now().UTC(), 0
	switch j.State {
	case JobCancelled, JobInterrupted:
	default:
		j.State = JobDone
	}
	saved := *j
	js.mu.Unlock()
	js.save(saved)
	close(p.done)
	if js.onEnd != nil {
		js.onEnd(saved)
	}
}

// save writes a job's record.
func (js *Jobs) save(j Job) error {
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	return js.dir.WriteFile(j.ID+".json", append(b, '\n'), 0o644)
}

// load reads a job's record.
func (js *Jobs) load(id string) (Job, error) {
	if !idPattern.Re().MatchString(id) {
		return Job{}, fmt.Errorf("%q is not a run id of this server (run ids look like review-0123456789)", id)
	}
	b, err := js.dir.ReadFile(id + ".json")
	if errors.Is(err, fs.ErrNotExist) {
		return Job{}, fmt.Errorf("no run %s in this project", id)
	}
	if err != nil {
		return Job{}, err
	}
	var j Job
	if err := json.Unmarshal(b, &j); err != nil {
		return Job{}, fmt.Errorf("the record of run %s is damaged: %w", id, err)
	}
	if j.ID != id {
		return Job{}, fmt.Errorf("the record of run %s names another run", id)
	}
	return j, nil
}

// Get returns a job and, while it runs under this server, its channel
// closed when it ends (nil for a job that is over or that another process
// follows).
func (js *Jobs) Get(id string) (Job, <-chan struct{}, error) {
	js.mu.Lock()
	p, ok := js.live[id]
	if ok {
		j := p.job
		js.mu.Unlock()
		return j, p.done, nil
	}
	js.mu.Unlock()
	j, err := js.load(id)
	return j, nil, err
}

// exitFile is the absolute path of the file job id's command writes its
// exit code to.
func (js *Jobs) exitFile(id string) string {
	p := filepath.Join(js.dir.Path(), id+exitSuffix)
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
