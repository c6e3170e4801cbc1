package middleware

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sotlabs/sot/internal/safedir"
	"github.com/sotlabs/sot/llm"
)

// journalVersion is written into every record.
const journalVersion = 1

// record is one line of a journal: one finished call.
type record struct {
	V        int           `json:"v"`
	Key      string        `json:"key"`
	Label    string        `json:"label,omitempty"`
	Model    string        `json:"model"`
	At       time.Time     `json:"at"`
	Response *llm.Response `json:"response"`
	// FromCache marks an answer the response cache gave: replaying it
	// replays no spending.
	FromCache bool `json:"from_cache,omitempty"`
}

// entry is a recorded answer waiting to be replayed.
type entry struct {
	resp      *llm.Response
	model     string
	fromCache bool
}

// Journal is a run's append-only log of finished calls, one JSON line each,
// written before the answer is handed on and fsynced before any later call
// is sent (see Wrap). Opening an existing journal loads
// its records, so that re-running an interrupted run replays every call that
// had finished instead of paying for it again.
type Journal struct {
	path string
	// before, when set, is when the records kept at opening end.
	before time.Time
	// ready is closed once the file can take records; openErr is set if
	// it cannot (CreateJournal prepares the file in the background).
	ready   chan struct{}
	openErr error

	mu      sync.Mutex
	f       *os.File
	pending map[string][]entry // answers not yet replayed, by request key
	// recorded counts the answers of each request key the file held when
	// it was opened.
	recorded map[string]int
	loaded   int
	written  int
	replays  int
	// paid is the usage, per model, of the replayed answers a provider was
	// paid for when they were first made (cache answers excluded).
	paid      map[string]llm.Usage
	paidCalls int

	// Group commit: records written (seq) and records known durable
	// (synced). One fsync covers every record written before it started.
	synced  sync.Cond
	seq     uint64
	durable uint64
	syncing bool
	syncErr error // the first error a sync met; no record is durable after it
}

// OpenJournal opens or creates the journal at path. A torn last line (a crash
// in the middle of a write) is dropped; any other damage is an error. The
// journal lives in a run's directory, which may lie in a repository someone
// else wrote: a symlink at path, or a journal directory that is one, is
// refused rather than followed (see safedir).
func OpenJournal(path string) (*Journal, error) { return OpenJournalBefore(path, time.Time{}) }

// OpenJournalBefore opens the journal at path as OpenJournal does, keeping
// only the records made before the time given (all of them for the zero
// time): the rest are cut from the file. A run that is the workflow of a
// durable executor opens its journal so when its code runs again in the
// same process: what the workflow's own calls recorded comes again from
// the workflow's history, as it did the first time, and is recorded anew.
func OpenJournalBefore(path string, before time.Time) (*Journal, error) {
	f, err := openJournalFile(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	j := newJournal(path)
	j.before = before
	j.f = f
	close(j.ready)
	good, err := j.load()
	if err != nil {
		f.Close()
		return nil, err
	}
	// Cut a torn tail so the next record starts on a fresh line.
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, fmt.Errorf("repair journal %s: %w", path, err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

func newJournal(path string) *Journal {
	j := &Journal{path: path, ready: make(chan struct{}), pending: map[string][]entry{}, paid: map[string]llm.Usage{}}
	j.synced.L = &j.mu
	return j
}

// CreateJournal starts an empty journal at path, discarding any journal
// there, without making its caller wait for the disk: in the background the
// file is created or truncated, then prepare (if set) runs, for whatever
// must be on disk before the first record, such as the caller's own record
// of the run. Append waits for both and fails with their error.
func CreateJournal(path string, prepare func() error) *Journal {
	j := newJournal(path)
	go func() {
		defer close(j.ready)
		f, err := openJournalFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC)
		if err != nil {
			j.openErr = fmt.Errorf("create journal: %w", err)
			return
		}
		j.mu.Lock()
		j.f = f
		j.mu.Unlock()
		if prepare != nil {
			j.openErr = prepare()
		}
	}()
	return j
}

// openJournalFile opens the journal file at path, creating its directory
// if needed, and never through a symlink.
func openJournalFile(path string, flag int) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create journal directory: %w", err)
	}
	d, err := safedir.Open("", filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.OpenFile(filepath.Base(path), flag, 0o600)
}

// load reads every complete record and returns the offset after the last one.
func (j *Journal) load() (int64, error) {
	size := int64(-1)
	if info, err := j.f.Stat(); err == nil {
		size = info.Size()
	}
	return readRecords(j.f, j.path, size, loadBatch, func(rec *record) bool {
		if !j.before.IsZero() && !rec.At.Before(j.before) {
			return false
		}
		j.pending[rec.Key] = append(j.pending[rec.Key], entry{rec.Response, rec.Model, rec.FromCache})
		if j.recorded == nil {
			j.recorded = map[string]int{}
		}
		j.recorded[rec.Key]++
		j.loaded++
		return true
	})
}

// Path is where the journal lives.
func (j *Journal) Path() string { return j.path }

// Ready waits until the journal is open (and a created journal's prepare
// step has run) and returns what went wrong, if anything.
func (j *Journal) Ready() error {
	<-j.ready
	return j.openErr
}

// Stats reports how many records were loaded at open, written since, and
// replayed instead of being sent again.
func (j *Journal) Stats() (loaded, written, replayed int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.loaded, j.written, j.replays
}

// Recorded is how many answers to requests of key the journal held when
// it was opened, replayed or not: the first call of key this process
// sends past them is the run's Recorded(key)+1st. A durable executor
// numbers a run's identical calls so, across processes.
func (j *Journal) Recorded(key string) int {
	if j == nil {
		return 0
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.recorded[key]
}

// take returns a recorded answer for key, if one is left.
func (j *Journal) take(key string) (*llm.Response, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	q := j.pending[key]
	if len(q) == 0 {
		return nil, false
	}
	j.pending[key] = q[1:]
	j.replays++
	if e := q[0]; !e.fromCache {
		j.paid[e.model] = j.paid[e.model].Add(e.resp.Usage)
		j.paidCalls += providerCalls(e.resp)
	}
	return q[0].resp, true
}

// providerCalls is how many provider calls a recorded answer cost: two
// when the schema check asked again (Response.Calls), as the meter counts
// them, so a resumed run's figures are an uninterrupted run's.
func providerCalls(r *llm.Response) int { return max(r.Calls, 1) }

// LoadedUsage counts the provider calls of the recorded answers a provider was paid for when they
// were made (cache answers excluded), with their usage per model: what the
// run spent before this process.
func (j *Journal) LoadedUsage() (calls int, byModel map[string]llm.Usage) {
	j.mu.Lock()
	defer j.mu.Unlock()
	byModel = map[string]llm.Usage{}
	for _, q := range j.pending {
		for _, e := range q {
			if !e.fromCache {
				calls += providerCalls(e.resp)
				byModel[e.model] = byModel[e.model].Add(e.resp.Usage)
			}
		}
	}
	for model, u := range j.paid {
		byModel[model] = byModel[model].Add(u)
	}
	return calls + j.paidCalls, byModel
}

// ReplayedUsage counts the answers replayed so far that a provider was paid
// for when they were first made, with their usage per model: what the run
// spent before this process on the calls it did not repeat.
func (j *Journal) ReplayedUsage() (calls int, byModel map[string]llm.Usage) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.paidCalls, maps.Clone(j.paid)
}

// Append writes one record and waits until it is on disk. Concurrent
// appends share one fsync (group commit), so a parallel run does not queue
// behind the disk.
func (j *Journal) Append(req *llm.Request, resp *llm.Response) error {
	if err := j.write(req.Key(), req, resp); err != nil {
		return err
	}
	return j.settle()
}

// write writes one record, of the request whose key is key, and has it
// synced in the background: it is in the file, and survives the process,
// once write returns; settle waits until it is on disk too.
func (j *Journal) write(key string, req *llm.Request, resp *llm.Response) error {
	<-j.ready
	if j.openErr != nil {
		return j.openErr
	}
	b, err := json.Marshal(record{V: journalVersion, Key: key, Label: req.Label, Model: req.Model, At: time.Now().UTC(), Response: resp,
		FromCache: resp.Source == llm.SourceCache})
	if err != nil {
		return err
	}
	b = append(b, '\n')
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return errors.New("journal is closed")
	}
	if _, err := j.f.Write(b); err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	j.seq++
	j.written++
	if !j.syncing {
		j.syncing = true
		go j.syncAll()
	}
	return nil
}

// syncAll syncs the file until every record written is on disk: one
// fsync covers every record written before it started (group commit).
func (j *Journal) syncAll() {
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.durable < j.seq && j.syncErr == nil {
		target, f := j.seq, j.f
		j.mu.Unlock()
		err := syncFile(f)
		j.mu.Lock()
		if err != nil {
			j.syncErr = fmt.Errorf("sync journal: %w", err)
			break
		}
		j.durable = target
	}
	j.syncing = false
	j.synced.Broadcast()
}

// syncFile syncs a journal's file; tests hold it back.
var syncFile = (*os.File).Sync

// settle waits until every record written so far is on disk, and returns
// the error a sync met, if any.
func (j *Journal) settle() error { return j.settleTo(j.writtenSeq()) }

// writtenSeq is the number of records written so far: a call that starts
// now is sent once that many are on disk (settleTo).
func (j *Journal) writtenSeq() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.seq
}

// settleTo waits until the first n records written are on disk, and
// returns the error a sync met, if any.
func (j *Journal) settleTo(n uint64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.durable < n && j.syncErr == nil {
		if !j.syncing {
			if j.f == nil {
				return errors.New("journal is closed")
			}
			j.syncing = true
			go j.syncAll()
		}
		j.synced.Wait()
	}
	return j.syncErr
}

// Close waits until every record is on disk, then closes the journal
// file; it returns the error a sync met, if any.
func (j *Journal) Close() error {
	<-j.ready
	serr := j.settle()
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.syncing {
		j.synced.Wait()
	}
	if j.f == nil {
		return serr
	}
	err := j.f.Close()
	j.f = nil
	return errors.Join(serr, err)
}

// Wrap replays recorded answers and records every new one before returning it.
// If the record cannot be written the call fails: an answer that is not
// journaled could be paid for twice.
//
// A record is written before its answer is returned, and synced to disk in
// the background; a call is sent only once every record written before it
// began is on disk: its provider builds the request meanwhile and waits
// as it sends (llm.Sending), or, if it does not, the call waits as it
// returns. So the run goes on (checks the answer, composes the next
// prompt, renders its outputs) while the disk syncs, and no call that
// could depend on an answer is paid for before that answer is on disk:
// a crash of the machine loses at most the answers of the last calls,
// with no later call built on them. Close waits for the last sync.
func (j *Journal) Wrap(next llm.Provider) llm.Provider {
	return llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		// The key of a prompt is a hash of all of it: computed once.
		key := req.Key()
		if r, ok := j.take(key); ok {
			r.Source = llm.SourceJournal
			return r, nil
		}
		// The call builds its request while the records before it are
		// synced; its provider waits for them as it sends (llm.Sending).
		before := j.writtenSeq()
		settled := func() error { return j.settleTo(before) }
		resp, err := next.Complete(llm.WithSendGate(ctx, settled), req)
		// A provider that sent without the gate, or whose sending it
		// stopped, is waited for here: a failed sync is the call's error.
		if serr := settled(); serr != nil {
			return nil, serr
		}
		if err != nil {
			return nil, err
		}
		if err := j.write(key, req, resp); err != nil {
			return nil, err
		}
		return resp, nil
	})
}
