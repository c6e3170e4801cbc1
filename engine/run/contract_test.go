package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/middleware"
	"github.com/sotlabs/sot/llm/stack"
)

// The tests in this file pin what a scenario relies on when it calls the
// package's entry points: Begin, Dir.OpenJournal, ListOf and Entry.Status.

// userKey gives the test a user cache directory of its own and returns the
// key Begin and ListOf sign and check records with there.
func userKey(t testing.TB) []byte {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir()) // where macOS keeps its user cache
	key := Key()
	if key == nil {
		t.Fatal("no user key could be made")
	}
	return key
}

// fakeModels starts the fake model server.
func fakeModels(t *testing.T) *llmtest.Server {
	t.Helper()
	srv := llmtest.NewServer(llmtest.Config{})
	t.Cleanup(srv.Close)
	return srv
}

// newStack builds the provider stack a scenario hands Begin, talking to
// srv over real HTTP with no response cache, so that every call not
// answered from the journal reaches the server.
func newStack(t *testing.T, srv *llmtest.Server) *stack.Stack {
	t.Helper()
	cfg := config.Defaults()
	p := cfg.Providers["openai"]
	p.BaseURL = srv.OpenAIBaseURL()
	cfg.Providers["openai"] = p
	cfg.Cache.Disabled = true
	st, err := stack.New(&cfg, stack.Options{Getenv: func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-test-run-0123456789"
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// question is call n of a run.
func question(n int) *llm.Request {
	return &llm.Request{Model: "openai:gpt-4.1", Label: "contract/" + string(rune('a'+n)),
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "question " + string(rune('a'+n))}}}
}

func ask1(t *testing.T, p llm.Provider, req *llm.Request) *llm.Response {
	t.Helper()
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// paid is an answer a provider was paid for, with its usage.
func paid(in, out int) *llm.Response {
	return &llm.Response{Text: "answer", Usage: llm.Usage{InputTokens: in, OutputTokens: out}}
}

// writeRun records st in dir under key, as a run does, and journals the
// answers, each to question i, through the run's journal.
func writeRun(t testing.TB, top, dir string, key []byte, st State, answers ...*llm.Response) {
	t.Helper()
	d, err := Open(top, dir, testLayout, key)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	j, err := d.OpenJournal(st, false)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := j.Ready(); err != nil {
		t.Fatal(err)
	}
	for i, a := range answers {
		if err := j.Append(question(i), a); err != nil {
			t.Fatal(err)
		}
	}
}

// forge edits a run's record on disk, as a repository could ship it: its
// signature no longer matches.
func forge(t *testing.T, dir, old, replacement string) {
	t.Helper()
	path := filepath.Join(dir, StateFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s does not hold %q:\n%s", path, old, b)
	}
	if err := os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(replacement), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// A new run's directory is created, marked ignored by git, holds the run's
// signed record once its journal is ready, and is locked until Close.
func TestBeginStartsANewRun(t *testing.T) {
	key := userKey(t)
	srv := fakeModels(t)
	top := t.TempDir()
	dir := filepath.Join(top, ".sot", "answers", "rnew")
	created := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	st := newStack(t, srv)
	d, j, old, err := Begin(top, dir, testLayout, "an answer", State{RunID: "rnew", Nonce: "n1", Seed: 7, Created: created,
		Payload: &payload{Mode: "society"}}, false, st)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	defer st.Close()
	if old != "" {
		t.Errorf("old = %q for a new directory; nothing was cleared", old)
	}
	if st.Journal != j {
		t.Error("the stack was not handed the run's journal")
	}
	if err := j.Ready(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ignoreFile)); err != nil || string(b) != "*\n" {
		t.Errorf(".gitignore = %q (%v); want \"*\" so the run's files are never committed", b, err)
	}
	var p payload
	rec := ParseState(mustRead(t, filepath.Join(dir, StateFile)), &p, key)
	if !rec.Authentic || rec.RunID != "rnew" || rec.Nonce != "n1" || rec.Seed != 7 || !rec.Created.Equal(created) || p.Mode != "society" {
		t.Errorf("run.json reads back %+v, payload %+v; want the state Begin was given, signed with the user's key", rec, p)
	}
	if !exists(filepath.Join(dir, JournalFile)) {
		t.Error("no journal was created")
	}
	resp := ask1(t, st, question(0))
	if resp.Source != llm.SourceLive || srv.Count() != 1 {
		t.Errorf("the first call came from %q with %d calls sent; want it sent", resp.Source, srv.Count())
	}
	if calls, _, _ := middleware.JournalUsage(filepath.Join(dir, JournalFile)); calls != 1 {
		t.Errorf("the journal records %d calls, want the 1 made", calls)
	}
	if lockHeld := Running(dir); !lockHeld && lockWorks(t) {
		t.Error("the run's lock is not held while it runs")
	}
	d.Close()
	if Running(dir) {
		t.Error("the lock is still held after Close")
	}
}

// lockWorks reports whether this platform has a run lock at all.
func lockWorks(t *testing.T) bool {
	t.Helper()
	d := openTest(t, t.TempDir())
	unlock, err := d.Lock("a test")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	return Running(d.Path())
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A second Begin in a directory resumes the same run, replaying what its
// journal holds, and starts over otherwise: when asked to (fresh), when the
// directory holds another run, whose files it clears and names, and when
// the record there is not the user's, whatever id it claims.
func TestBeginResumesOrStartsOver(t *testing.T) {
	first := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	second := first.Add(time.Hour)
	tests := []struct {
		name string
		// tamper changes the first run's record on disk before the second
		// Begin, given the run's directory.
		tamper func(t *testing.T, dir string)
		id     string // the second run's id
		fresh  bool
		// wantOld is what Begin says it cleared; wantReplay whether the
		// first run's call is answered from its journal.
		wantOld     string
		wantReplay  bool
		wantCreated time.Time
		// outputs is whether the first run's outputs are "kept" or
		// "cleared"; "" leaves them unchecked (a fresh run of the same id
		// rewrites them as it goes).
		outputs string
	}{
		{name: "the same run resumes", id: "rone", wantReplay: true, wantCreated: first, outputs: "kept"},
		{name: "fresh starts the same run over", id: "rone", fresh: true, wantCreated: second},
		{name: "another run's directory", id: "rtwo", wantOld: "rone", wantCreated: second, outputs: "cleared"},
		{name: "another run's directory, fresh", id: "rtwo", fresh: true, wantOld: "rone", wantCreated: second, outputs: "cleared"},
		{name: "a record edited on disk", id: "rone", wantOld: "rone", wantCreated: second, outputs: "cleared",
			tamper: func(t *testing.T, dir string) { forge(t, dir, `"mode": "first"`, `"mode": "forged"`) }},
		{name: "a record signed with another user's key", id: "rone", wantOld: "rone", wantCreated: second, outputs: "cleared",
			tamper: func(t *testing.T, dir string) {
				d, err := Open("", dir, testLayout, []byte("another user's key, of 32 bytes or more"))
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				var p payload
				st := d.State(&p)
				st.Payload, st.Created = &payload{Mode: "forged"}, first.Add(-time.Hour)
				if err := d.Save(st); err != nil {
					t.Fatal(err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := userKey(t)
			srv := fakeModels(t)
			top := t.TempDir()
			dir := filepath.Join(top, "out")

			st := newStack(t, srv)
			d, _, _, err := Begin(top, dir, testLayout, "an answer", State{RunID: "rone", Nonce: "n", Created: first, Payload: &payload{Mode: "first"}}, false, st)
			if err != nil {
				t.Fatal(err)
			}
			answer := ask1(t, st, question(0)).Text
			for _, f := range []string{"result.json", "OUT-A.md"} {
				if err := d.WriteFile(f, []byte("first run\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.RecordWritten([]string{"OUT-A.md"}); err != nil {
				t.Fatal(err)
			}
			st.Close()
			d.Close()
			if tt.tamper != nil {
				tt.tamper(t, dir)
			}
			sent := srv.Count()

			st2 := newStack(t, srv)
			d2, j2, old, err := Begin(top, dir, testLayout, "an answer", State{RunID: tt.id, Nonce: "n", Created: second, Payload: &payload{Mode: "second"}}, tt.fresh, st2)
			if err != nil {
				t.Fatal(err)
			}
			defer d2.Close()
			defer st2.Close()
			if old != tt.wantOld {
				t.Errorf("old = %q, want %q", old, tt.wantOld)
			}
			resp := ask1(t, st2, question(0))
			replayed := resp.Source == llm.SourceJournal && srv.Count() == sent
			if replayed != tt.wantReplay {
				t.Errorf("the first run's call replayed: %v (source %q, %d sent again); want %v", replayed, resp.Source, srv.Count()-sent, tt.wantReplay)
			}
			if tt.wantReplay && resp.Text != answer {
				t.Errorf("replayed %q, want the journaled %q", resp.Text, answer)
			}
			if err := j2.Ready(); err != nil {
				t.Fatal(err)
			}
			var p payload
			rec := ParseState(mustRead(t, filepath.Join(dir, StateFile)), &p, key)
			if !rec.Authentic || rec.RunID != tt.id || p.Mode != "second" || !rec.Created.Equal(tt.wantCreated) {
				t.Errorf("run.json: authentic %v, id %s, mode %q, created %v; want %s signed, mode \"second\", created %v",
					rec.Authentic, rec.RunID, p.Mode, rec.Created, tt.id, tt.wantCreated)
			}
			if tt.outputs != "" {
				for _, f := range []string{"result.json", "OUT-A.md"} {
					if got, want := exists(filepath.Join(dir, f)), tt.outputs == "kept"; got != want {
						t.Errorf("%s there: %v, want %v", f, got, want)
					}
				}
			}
			switch {
			case tt.outputs == "kept" && !slices.Contains(rec.Written, "OUT-A.md"):
				t.Errorf("written %v; the same run's record keeps the files it wrote", rec.Written)
			case tt.outputs == "cleared" && len(rec.Written) > 0:
				t.Errorf("written %v; a new run has written nothing yet", rec.Written)
			}
		})
	}
}

// Begin refuses a directory it must not write into with a user error that
// says what to do, and touches nothing: not the stack, not a symlink's
// target.
func TestBeginRefuses(t *testing.T) {
	tests := []struct {
		name string
		// setup prepares the project at top and returns the directory to
		// Begin in.
		setup func(t *testing.T, top string) string
		// want is in the error, telling the user what to do.
		want  string
		field bool // the error names the setting that chose the directory
	}{
		{name: "a symlink inside", field: true, want: "remove them, or name a new or empty directory",
			setup: func(t *testing.T, top string) string {
				dir := filepath.Join(top, "out")
				os.MkdirAll(dir, 0o755)
				os.Symlink(filepath.Join(top, "elsewhere"), filepath.Join(dir, JournalFile))
				return dir
			}},
		{name: "the directory is a symlink", field: true, want: "remove the link, or name a directory whose path holds none",
			setup: func(t *testing.T, top string) string {
				os.MkdirAll(filepath.Join(top, "elsewhere"), 0o755)
				os.Symlink(filepath.Join(top, "elsewhere"), filepath.Join(top, "out"))
				return filepath.Join(top, "out")
			}},
		{name: "a symlink on the way", field: true, want: "on the way to the output directory",
			setup: func(t *testing.T, top string) string {
				os.MkdirAll(filepath.Join(top, "elsewhere"), 0o755)
				os.Symlink(filepath.Join(top, "elsewhere"), filepath.Join(top, "sot"))
				return filepath.Join(top, "sot", "runs", "rone")
			}},
		{name: "files sot did not write", field: true, want: "name a new or empty directory",
			setup: func(t *testing.T, top string) string {
				os.WriteFile(filepath.Join(top, "main.go"), []byte("package main\n"), 0o644)
				return top
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			userKey(t)
			top := t.TempDir()
			dir := tt.setup(t, top)
			st := newStack(t, fakeModels(t))
			d, _, _, err := Begin(top, dir, testLayout, "an answer", State{RunID: "rone"}, false, st)
			if err == nil {
				d.Close()
				t.Fatalf("Begin in %s succeeded; want it refused", dir)
			}
			var ue *engine.UserError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want) || tt.field && ue.Field != "output_dir" {
				t.Errorf("err = %v; want a user error on output_dir saying %q", err, tt.want)
			}
			if st.Journal != nil {
				t.Error("a refused run handed the stack a journal")
			}
			if entries, _ := os.ReadDir(filepath.Join(top, "elsewhere")); len(entries) > 0 {
				t.Errorf("Begin wrote through the symlink: %d files in its target", len(entries))
			}
			if exists(filepath.Join(top, ignoreFile)) {
				t.Error("Begin marked the project's top ignored by git")
			}
		})
	}
}

// While one run holds a directory, a second Begin there is refused, saying
// to wait or use another directory, and the first run goes on unharmed.
func TestBeginRefusesARunUnderWay(t *testing.T) {
	if !lockWorks(t) {
		t.Skip("no run lock on this platform")
	}
	userKey(t)
	srv := fakeModels(t)
	top := t.TempDir()
	dir := filepath.Join(top, "out")
	st := newStack(t, srv)
	d, _, _, err := Begin(top, dir, testLayout, "an answer", State{RunID: "rone"}, false, st)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	defer st.Close()
	ask1(t, st, question(0))

	for _, id := range []string{"rone", "rtwo"} {
		st2 := newStack(t, srv)
		_, _, _, err := Begin(top, dir, testLayout, "an answer", State{RunID: id}, true, st2)
		if !errors.Is(err, ErrRunInProgress) || !engine.IsUserError(err) || !strings.Contains(err.Error(), "wait for it to finish, or use another --output-dir") {
			t.Errorf("Begin of %s while a run holds the directory: %v; want ErrRunInProgress saying what to do", id, err)
		}
		if st2.Journal != nil {
			t.Errorf("the refused Begin of %s handed its stack a journal", id)
		}
	}
	if calls, _, _ := middleware.JournalUsage(filepath.Join(dir, JournalFile)); calls != 1 {
		t.Errorf("the running run's journal holds %d calls after the refusals, want its 1", calls)
	}
	if rec := d.State(nil); rec.RunID != "rone" || !rec.Authentic {
		t.Errorf("the running run's record became %+v", rec)
	}
}

// OpenJournal resumes the same run's journal, tolerating a record torn by
// a crash, and starts an empty one for a fresh or a different run; damage
// in the middle is refused with what to do about it.
func TestOpenJournal(t *testing.T) {
	first := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	second := first.Add(time.Hour)
	tests := []struct {
		name string
		// tail is appended to the first run's journal of two records.
		tail  string
		id    string
		fresh bool
		// wantErr, when set, is in the error; otherwise wantLoaded records
		// are loaded and the record's creation time is wantCreated.
		wantErr     string
		wantLoaded  int
		wantCreated time.Time
	}{
		{name: "the same run", id: "rone", wantLoaded: 2, wantCreated: first},
		{name: "a torn last line", tail: `{"v":1,"key":"k","model":"openai:gpt-4.1","respo`, id: "rone", wantLoaded: 2, wantCreated: first},
		{name: "fresh", id: "rone", fresh: true, wantLoaded: 0, wantCreated: second},
		{name: "a different run", id: "rtwo", wantLoaded: 0, wantCreated: second},
		{name: "damage in the middle", tail: "not a record\n" + `{"v":1}` + "\n", id: "rone", wantErr: "move it aside to start the run afresh"},
		{name: "damage in the middle, fresh", tail: "not a record\n" + `{"v":1}` + "\n", id: "rone", fresh: true, wantLoaded: 0, wantCreated: second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeRun(t, "", dir, testKey, State{RunID: "rone", Created: first, Payload: &payload{Mode: "first"}}, paid(10, 1), paid(20, 2))
			path := filepath.Join(dir, JournalFile)
			if tt.tail != "" {
				f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(tt.tail)
				f.Close()
			}

			d := openTest(t, dir)
			j, err := d.OpenJournal(State{RunID: tt.id, Created: second, Payload: &payload{Mode: "second"}}, tt.fresh)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v; want it to say %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Ready(); err != nil {
				t.Fatal(err)
			}
			if loaded, _, _ := j.Stats(); loaded != tt.wantLoaded {
				t.Errorf("loaded %d records, want %d", loaded, tt.wantLoaded)
			}
			var p payload
			if rec := d.State(&p); !rec.Authentic || rec.RunID != tt.id || p.Mode != "second" || !rec.Created.Equal(tt.wantCreated) {
				t.Errorf("record %+v; want %s, signed, created %v", rec, tt.id, tt.wantCreated)
			}
			// The next record lands on a line of its own, and the journal
			// opens again with every whole record.
			if err := j.Append(question(5), paid(30, 3)); err != nil {
				t.Fatal(err)
			}
			j.Close()
			b := mustRead(t, path)
			lines := strings.SplitAfter(string(b), "\n")
			if last := lines[len(lines)-1]; last != "" {
				t.Errorf("the journal ends in a line with no newline: %q", last)
			}
			for i, line := range lines[:len(lines)-1] {
				if !json.Valid([]byte(line)) {
					t.Errorf("journal line %d is not a whole record: %q", i+1, line)
				}
			}
			if len(lines)-1 != tt.wantLoaded+1 {
				t.Errorf("the journal holds %d lines, want %d", len(lines)-1, tt.wantLoaded+1)
			}
			j, err = d.OpenJournal(State{RunID: tt.id, Created: second}, false)
			if err != nil {
				t.Fatalf("the journal does not open again: %v", err)
			}
			defer j.Close()
			if loaded, _, _ := j.Stats(); loaded != tt.wantLoaded+1 {
				t.Errorf("reopened with %d records, want %d", loaded, tt.wantLoaded+1)
			}
		})
	}
}

// prices are the prices the listing tests use, in dollars per million
// tokens.
var prices = llm.PriceTable{"gpt-4.1": {Input: 2, CachedInput: 0.5, Output: 8}}

// Status says where a run is; a finished run's figures are its result's,
// an unfinished one's what its journal records, priced, leaving out
// answers the response cache gave.
func TestStatus(t *testing.T) {
	cached := paid(1000, 1000)
	cached.Source = llm.SourceCache
	repaired := paid(300, 30) // a structured answer mended with a second call
	repaired.Calls = 2
	tests := []struct {
		name        string
		answers     []*llm.Response
		tail        string // appended to the journal
		finished    *Finished
		running     bool
		forged      bool
		wantState   string
		wantMissing int
		wantCalls   int
		wantCost    float64
	}{
		{name: "finished", answers: []*llm.Response{paid(100, 10)}, finished: &Finished{Calls: 4, CostUSD: 0.25},
			wantState: StatusFinished, wantCalls: 4, wantCost: 0.25},
		{name: "partial", answers: []*llm.Response{paid(100, 10)}, finished: &Finished{Missing: 2, Calls: 3, CostUSD: 0.5},
			wantState: StatusPartial, wantMissing: 2, wantCalls: 3, wantCost: 0.5},
		{name: "interrupted", answers: []*llm.Response{paid(1000, 100), paid(2000, 200)},
			wantState: StatusInterrupted, wantCalls: 2, wantCost: (3000*2 + 300*8) / 1e6},
		{name: "failed before its result", answers: nil,
			wantState: StatusInterrupted},
		{name: "interrupted by a crash mid-write", answers: []*llm.Response{paid(1000, 100)}, tail: `{"v":1,"key":"k","respo`,
			wantState: StatusInterrupted, wantCalls: 1, wantCost: (1000*2 + 100*8) / 1e6},
		{name: "cache answers cost nothing", answers: []*llm.Response{paid(1000, 100), cached},
			wantState: StatusInterrupted, wantCalls: 1, wantCost: (1000*2 + 100*8) / 1e6},
		{name: "running", answers: []*llm.Response{paid(1000, 100)}, running: true,
			wantState: StatusRunning, wantCalls: 1, wantCost: (1000*2 + 100*8) / 1e6},
		{name: "running again after it finished", answers: []*llm.Response{paid(1000, 100)}, running: true, finished: &Finished{Calls: 9, CostUSD: 1},
			wantState: StatusRunning, wantCalls: 1, wantCost: (1000*2 + 100*8) / 1e6},
		{name: "not yours", answers: []*llm.Response{paid(1000, 100)}, forged: true, finished: &Finished{Calls: 9, CostUSD: 1},
			wantState: StatusForeign},
		{name: "a repaired answer counts its two calls", answers: []*llm.Response{repaired},
			wantState: StatusInterrupted, wantCalls: 2, wantCost: (300*2 + 30*8) / 1e6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := t.TempDir()
			dir := filepath.Join(top, "runs", "rone")
			writeRun(t, top, dir, testKey, State{RunID: "rone", Payload: &payload{Mode: "m"}}, tt.answers...)
			if tt.tail != "" {
				f, err := os.OpenFile(filepath.Join(dir, JournalFile), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(tt.tail)
				f.Close()
			}
			if tt.forged {
				forge(t, dir, `"mode": "m"`, `"mode": "n"`)
			}
			if tt.running {
				if !lockWorks(t) {
					t.Skip("no run lock on this platform")
				}
				unlock, err := openTest(t, dir).Lock("an answer")
				if err != nil {
					t.Fatal(err)
				}
				defer unlock()
			}
			entries, err := List(top, []string{filepath.Join("runs", "*")}, nil, testKey)
			if err != nil || len(entries) != 1 {
				t.Fatalf("listed %d runs (%v), want 1", len(entries), err)
			}
			state, missing, calls, cost := entries[0].Status(tt.finished, prices)
			got := []any{state, missing, calls, cost}
			want := []any{tt.wantState, tt.wantMissing, tt.wantCalls, tt.wantCost}
			if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("state, missing, calls, cost (-want +got):\n%s", diff)
			}
		})
	}
}

// ListOf lists a scenario's runs under every pattern, newest first, each
// as the scenario describes it with its state and spending; it skips what
// is not a run, and offers the command to resume only for the user's own
// runs.
func TestListOf(t *testing.T) {
	key := userKey(t)
	top := t.TempDir()
	day := func(d int) time.Time { return time.Date(2026, 3, d, 9, 0, 0, 0, time.UTC) }
	answers, debates := filepath.Join(".sot", "answers"), filepath.Join(".sot", "debates")
	runs := []struct {
		dir     string
		st      State
		answers []*llm.Response
		result  *Finished // written as the scenario's result.json
		forged  bool
	}{
		{dir: filepath.Join(answers, "rdone"), st: State{RunID: "rdone", Created: day(1), Payload: &payload{Mode: "what changed?"}},
			answers: []*llm.Response{paid(10, 1)}, result: &Finished{Calls: 5, CostUSD: 0.125}},
		{dir: filepath.Join(debates, "rpart"), st: State{RunID: "rpart", Created: day(2), Payload: &payload{Mode: "is it safe?"}},
			result: &Finished{Missing: 1, Calls: 2, CostUSD: 0.5}},
		{dir: filepath.Join(answers, "rhalf"), st: State{RunID: "rhalf", Created: day(3), Payload: &payload{Mode: "why?"}},
			answers: []*llm.Response{paid(1000, 100), paid(2000, 200)}},
		{dir: filepath.Join(answers, "rbare"), st: State{RunID: "rbare", Created: day(4)}},
		{dir: filepath.Join(answers, "rforged"), st: State{RunID: "rforged", Created: day(5), Payload: &payload{Mode: "forged"}},
			answers: []*llm.Response{paid(1000, 100)}, forged: true},
	}
	for _, r := range runs {
		writeRun(t, top, filepath.Join(top, r.dir), key, r.st, r.answers...)
		if r.result != nil {
			b, _ := json.Marshal(r.result)
			os.WriteFile(filepath.Join(top, r.dir, "result.json"), b, 0o644)
		}
		if r.forged {
			forge(t, filepath.Join(top, r.dir), `"mode": "forged"`, `"mode": "forged!"`)
		}
	}
	// Not runs: an empty directory, one whose record does not decode, a
	// file, a symlink to a run, and a run outside the patterns.
	os.MkdirAll(filepath.Join(top, answers, "empty"), 0o755)
	os.MkdirAll(filepath.Join(top, answers, "broken"), 0o755)
	os.WriteFile(filepath.Join(top, answers, "broken", StateFile), []byte("run_id: rbroken\n"), 0o644)
	os.WriteFile(filepath.Join(top, answers, "notes.txt"), []byte("x"), 0o644)
	os.Symlink(filepath.Join(top, answers, "rhalf"), filepath.Join(top, answers, "rlink"))
	writeRun(t, top, filepath.Join(top, ".sot", "reviews", "rother"), key, State{RunID: "rother", Created: day(9)})

	patterns := []string{filepath.Join(answers, "*"), filepath.Join(debates, "*")}
	describe := func(e Entry, p *payload) Described {
		if p == nil {
			t.Fatalf("%s: describe was given no payload", e.Dir)
		}
		d := Described{Material: p.Mode, Command: "sot ask " + e.State.RunID, Items: 3}
		if b, err := os.ReadFile(filepath.Join(e.Path(), "result.json")); err == nil {
			d.Finished = new(Finished)
			json.Unmarshal(b, d.Finished)
		}
		return d
	}
	list := func() []Listed {
		t.Helper()
		got, err := ListOf(top, patterns, prices, describe)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := []Listed{
		{ID: "rforged", Dir: filepath.Join(answers, "rforged"), Created: day(5), Material: "forged!", State: StatusForeign},
		{ID: "rbare", Dir: filepath.Join(answers, "rbare"), Created: day(4), State: StatusInterrupted, Resume: "sot ask rbare"},
		{ID: "rhalf", Dir: filepath.Join(answers, "rhalf"), Created: day(3), Material: "why?", State: StatusInterrupted,
			Calls: 2, CostUSD: (3000*2 + 300*8) / 1e6, Resume: "sot ask rhalf"},
		{ID: "rpart", Dir: filepath.Join(debates, "rpart"), Created: day(2), Material: "is it safe?", State: StatusPartial,
			Calls: 2, CostUSD: 0.5, Items: 3, Missing: 1, Resume: "sot ask rpart"},
		{ID: "rdone", Dir: filepath.Join(answers, "rdone"), Created: day(1), Material: "what changed?", State: StatusFinished,
			Calls: 5, CostUSD: 0.125, Items: 3, Resume: "sot ask rdone"},
	}
	got := list()
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("listing (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(got, list()); diff != "" {
		t.Errorf("a second listing differs from the first (-first +second):\n%s", diff)
	}

	// ListDir says of one run what ListOf says of it, reading that run
	// alone, wherever it is; a directory is taken as named, never as a
	// pattern, and what is not a run is not listed.
	for _, l := range got {
		one, ok := ListDir(top, l.Dir, prices, describe)
		if diff := cmp.Diff(l, one, cmpopts.EquateApprox(0, 1e-12)); !ok || diff != "" {
			t.Errorf("ListDir(%s): ok %v (-ListOf +ListDir):\n%s", l.Dir, ok, diff)
		}
	}
	if one, ok := ListDir(top, filepath.Join(top, ".sot", "reviews", "rother"), prices, describe); !ok || one.ID != "rother" || one.Dir != filepath.Join(".sot", "reviews", "rother") {
		t.Errorf("a run outside the patterns, named absolutely: %+v, %v", one, ok)
	}
	for _, dir := range []string{"empty", "broken", "notes.txt", "rlink", "*", "r*"} {
		if one, ok := ListDir(top, filepath.Join(answers, dir), prices, describe); ok {
			t.Errorf("%s is listed as a run: %+v", dir, one)
		}
	}
}

// Runs created at the same moment are listed in the same order every
// time: the patterns' order, then the directories' names.
func TestListOfTiesAreStable(t *testing.T) {
	key := userKey(t)
	top := t.TempDir()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for _, dir := range []string{"b/r2", "a/r3", "b/r1", "a/r4"} {
		id := filepath.Base(dir)
		writeRun(t, top, filepath.Join(top, dir), key, State{RunID: id, Created: at})
	}
	want := []string{"r1", "r2", "r3", "r4"}
	for range 3 {
		got, err := ListOf(top, []string{"b/*", "a/*"}, nil, func(Entry, *struct{}) Described { return Described{} })
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, l := range got {
			ids = append(ids, l.ID)
		}
		if !slices.Equal(ids, want) {
			t.Fatalf("listed %v, want %v", ids, want)
		}
	}
}
