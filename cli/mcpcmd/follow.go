package mcpcmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/internal/lazyre"
	"github.com/sotlabs/sot/internal/plainfile"
)

// Wait waits until the job ends or ctx is done, calling progress whenever
// the command printed a line of progress.
func (js *Jobs) Wait(ctx context.Context, id string, progress func(Progress)) (Job, error) {
	j, done, err := js.Get(id)
	if err != nil {
		return Job{}, err
	}
	var off int64
	var last Progress
	look := func() {
		if progress == nil {
			return
		}
		pr, n := js.progress(id, off, last)
		off = n
		if pr != last {
			last = pr
			progress(pr)
		}
	}
	t := time.NewTicker(js.poll)
	defer t.Stop()
	for {
		look()
		if done == nil && j.State != JobRunning {
			return j, nil
		}
		select {
		case <-ctx.Done():
			return j, ctx.Err()
		case <-done:
			look()
			j, _, err = js.Get(id)
			return j, err
		case <-t.C:
			if done == nil {
				// A run another process left: it is over when its lock is free.
				if j, err = js.refresh(id); err != nil {
					return j, err
				}
			}
		}
	}
}

// progressLine finds a status line's counts.
var progressLine = lazyre.New(`\((\d+) of (\d+) calls done`)

// progress reads the job's log from off and returns the last progress it
// holds (prev when none) and the offset read to.
func (js *Jobs) progress(id string, off int64, prev Progress) (Progress, int64) {
	f, err := js.dir.OpenFile(id+".log", os.O_RDONLY, 0)
	if err != nil {
		return prev, off
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return prev, off
	}
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	// Only whole lines: the rest is read again next time.
	end := bytes.LastIndexByte(b, '\n')
	if end < 0 {
		return prev, off
	}
	for _, line := range bytes.Split(b[:end], []byte("\n")) {
		if m := progressLine.Re().FindSubmatch(line); m != nil {
			prev.Done, _ = strconv.Atoi(string(m[1]))
			prev.Total, _ = strconv.Atoi(string(m[2]))
		}
		if len(bytes.TrimSpace(line)) > 0 {
			prev.Line = string(bytes.TrimSpace(line))
		}
	}
	return prev, off + int64(end) + 1
}

// Log returns the last n bytes of a job's output.
func (js *Jobs) Log(id string, n int64) string {
	f, err := js.dir.OpenFile(id+".log", os.O_RDONLY, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > n {
		f.Seek(fi.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// Cancel stops a running job as Ctrl-C stops a run: its finished calls
// are in its journal, and it is not resumed by a later server.
func (js *Jobs) Cancel(id string) (Job, error) {
	js.mu.Lock()
	p, ok := js.live[id]
	if ok && p.job.State == JobRunning {
		p.job.State = JobCancelled
		j := p.job
		js.mu.Unlock()
		js.save(j)
		// The whole group: the command and anything it started.
		interrupt(p.cmd.Process.Pid, true)
		return j, nil
	}
	js.mu.Unlock()
	j, err := js.refresh(id)
	if err != nil {
		return j, err
	}
	if j.State != JobRunning {
		return j, fmt.Errorf("run %s is not running (%s)", id, j.State)
	}
	// A run a server before this one started: its process is known by
	// the lock it holds on its run directory.
	if pid := js.lockHolder(j); pid > 0 {
		interrupt(pid, false)
	}
	j.State = JobCancelled
	return j, js.save(j)
}

// lockHolder is the process that holds the job's run lock, 0 when none.
func (js *Jobs) lockHolder(j Job) int {
	dir := filepath.Join(js.top, j.Dir)
	if !run.Running(dir) {
		return 0
	}
	b, err := plainfile.ReadOwn(filepath.Join(dir, run.LockFile))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(string(bytes.TrimSpace(b)))
	return pid
}

// refresh reads a job this server does not follow and settles the state
// of one whose process is gone: a job whose run holds no lock any more
// ended, or was interrupted, without a server to see it.
func (js *Jobs) refresh(id string) (Job, error) {
	j, err := js.load(id)
	if err != nil || j.State != JobRunning {
		return j, err
	}
	if js.lockHolder(j) > 0 {
		return j, nil // under way
	}
	if b, err := js.dir.ReadFile(id + exitSuffix); err == nil {
		if code, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			j.PID, j.Ended, j.Exit, j.State = 0, time.Now().UTC(), &code, JobDone
			if code == 130 {
				j.State = JobInterrupted
			}
			return j, js.save(j)
		}
	}
	if j.PID > 0 && ours(j.PID, j.ID) {
		return j, nil // starting, before it took its lock, or ending, before it wrote its exit code
	}
	j.PID, j.Ended = 0, time.Now().UTC()
	if l, ok := js.listed(j); ok && (l.State == run.StatusFinished || l.State == run.StatusPartial) {
		j.State = JobDone
	} else {
		j.State = JobInterrupted
	}
	return j, js.save(j)
}

// Resume starts again, from their journals, the jobs a server before this
// one left unfinished (stopped with it, or cut off by its crash), and
// returns their ids.
func (js *Jobs) Resume() ([]string, error) {
	ids, err := js.ids()
	if err != nil {
		return nil, err
	}
	var resumed []string
	for _, id := range ids {
		j, err := js.refresh(id)
		if err != nil || j.State != JobInterrupted {
			continue
		}
		if _, err := js.start(j); err != nil {
			return resumed, err
		}
		resumed = append(resumed, id)
	}
	return resumed, nil
}

// Interrupt stops every job this server runs, as Ctrl-C would: a later
// server resumes them. It waits until they have ended.
func (js *Jobs) Interrupt() {
	js.mu.Lock()
	var waits []chan struct{}
	for _, p := range js.live {
		if p.job.State == JobRunning {
			p.job.State = JobInterrupted
			interrupt(p.cmd.Process.Pid, true)
			waits = append(waits, p.done)
		}
	}
	js.mu.Unlock()
	for _, w := range waits {
		<-w
	}
}

// List returns every job of the project, newest first.
func (js *Jobs) List() ([]Job, error) {
	ids, err := js.ids()
	if err != nil {
		return nil, err
	}
	var out []Job
	for _, id := range ids {
		j, _, err := js.Get(id)
		if err == nil {
			out = append(out, j)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Created.After(out[b].Created) })
	return out, nil
}

func (js *Jobs) ids() ([]string, error) {
	entries, err := os.ReadDir(js.dir.Path())
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok && idPattern.Re().MatchString(id) && e.Type().IsRegular() {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// Once runs sot with args to its end (a dry run) and returns what it
// printed on standard output; a failure returns what it said on stderr.
func (js *Jobs) Once(ctx context.Context, args []string) (string, error) {
	cmd := exec.CommandContext(ctx, js.exe, args...)
	cmd.Dir = js.top
	cmd.Env = append(os.Environ(), js.env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		if msg := lastSaid(errOut.String()); msg != "" {
			return "", errors.New(msg)
		}
		return "", err
	}
	return out.String(), nil
}
