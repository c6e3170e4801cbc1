package middleware

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

func TestJournalReplaysFinishedCalls(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run", "journal.jsonl")
	p, srv := backend(t, llmtest.Config{})
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	var answers []string
	for i := range 3 {
		answers = append(answers, complete(t, j.Wrap(p), ask(i)).Text)
	}
	complete(t, j.Wrap(p), ask(0)) // the same request twice in one run
	j.Close()

	j2, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	if loaded, _, _ := j2.Stats(); loaded != 4 {
		t.Fatalf("loaded %d records, want 4", loaded)
	}
	before := srv.Count()
	for i := range 3 {
		r := complete(t, j2.Wrap(p), ask(i))
		if r.Source != llm.SourceJournal || r.Text != answers[i] {
			t.Errorf("call %d: source %q text %q; want the journaled answer", i, r.Source, r.Text)
		}
	}
	complete(t, j2.Wrap(p), ask(0))
	if srv.Count() != before {
		t.Errorf("%d calls were paid for twice", srv.Count()-before)
	}
	complete(t, j2.Wrap(p), ask(0)) // a third ask(0) was never journaled
	if srv.Count() != before+1 {
		t.Error("a call beyond the journal must go to the provider")
	}
}

// A journal opened up to a time keeps the records made before it and cuts
// the rest from the file: a workflow's code run again in the same process
// gets those calls from the workflow's history, as the first time, and
// records them anew, once.
func TestJournalOpenedBeforeATime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run", "journal.jsonl")
	p, srv := backend(t, llmtest.Config{})
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	complete(t, j.Wrap(p), ask(0))
	began := time.Now()
	complete(t, j.Wrap(p), ask(1))
	j.Close()
	kept, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first := kept[:bytes.IndexByte(kept, '\n')+1]

	j2, err := OpenJournalBefore(path, began)
	if err != nil {
		t.Fatal(err)
	}
	if loaded, _, _ := j2.Stats(); loaded != 1 {
		t.Errorf("loaded %d records, want the one made before", loaded)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, first) {
		t.Errorf("the journal holds %q after opening, want only the first record", got)
	}
	calls := srv.Count()
	if r := complete(t, j2.Wrap(p), ask(0)); r.Source != llm.SourceJournal {
		t.Errorf("the record made before was not replayed: source %q", r.Source)
	}
	complete(t, j2.Wrap(p), ask(1))
	j2.Close()
	if srv.Count() != calls+1 {
		t.Errorf("%d calls after opening, want the one cut from the journal", srv.Count()-calls)
	}
	j3, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j3.Close()
	if loaded, _, _ := j3.Stats(); loaded != 2 {
		t.Errorf("the journal holds %d records, want each call once", loaded)
	}
}

func TestCreateJournalStartsAfresh(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	path := filepath.Join(dir, "journal.jsonl")
	p, srv := backend(t, llmtest.Config{})
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	complete(t, j.Wrap(p), ask(1))
	j.Close()

	// The state file must be on disk before the first new record.
	state := filepath.Join(dir, "state.json")
	j2 := CreateJournal(path, func() error { return os.WriteFile(state, []byte("{}"), 0o600) })
	before := srv.Count()
	r := complete(t, j2.Wrap(p), ask(1))
	if r.Source == llm.SourceJournal || srv.Count() != before+1 {
		t.Error("a created journal replayed a record of the journal it replaced")
	}
	if _, err := os.Stat(state); err != nil {
		t.Errorf("prepare did not run before the first record: %v", err)
	}
	j2.Close()
	j3, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j3.Close()
	if loaded, _, _ := j3.Stats(); loaded != 1 {
		t.Errorf("the new journal holds %d records, want only its own 1", loaded)
	}
}

func TestCreateJournalReportsPrepareFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	p, _ := backend(t, llmtest.Config{})
	j := CreateJournal(path, func() error { return errors.New("disk full") })
	defer j.Close()
	if _, err := j.Wrap(p).Complete(context.Background(), ask(1)); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("err = %v; a call that cannot be journaled must fail with the reason", err)
	}
}

func TestJournalRecoversFromATornWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	p, _ := backend(t, llmtest.Config{})
	j, _ := OpenJournal(path)
	complete(t, j.Wrap(p), ask(1))
	j.Close()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"v":1,"key":"abc","respo`) // killed mid-write
	f.Close()

	j2, err := OpenJournal(path)
	if err != nil {
		t.Fatalf("a torn tail must not block the re-run: %v", err)
	}
	if loaded, _, _ := j2.Stats(); loaded != 1 {
		t.Errorf("loaded %d, want 1", loaded)
	}
	complete(t, j2.Wrap(p), ask(2))
	j2.Close()
	b, _ := os.ReadFile(path)
	if lines := strings.Count(string(b), "\n"); lines != 2 || strings.Contains(string(b), "respo\n") {
		t.Errorf("journal after repair:\n%s", b)
	}
}

func TestJournalRefusesDamageInTheMiddle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	os.WriteFile(path, []byte("not json\n{\"v\":1}\n"), 0o600)
	if _, err := OpenJournal(path); err == nil || !strings.Contains(err.Error(), "journal.jsonl:1 is damaged") {
		t.Errorf("err = %v", err)
	}
}

func TestJournalHoldsNoSecrets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	p, _ := backend(t, llmtest.Config{})
	j, _ := OpenJournal(path)
	complete(t, j.Wrap(p), ask(1))
	j.Close()
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), testKey) {
		t.Error("the API key reached the journal")
	}
}

// The usage of replayed answers counts toward the run's spending, except
// answers the response cache gave, which nobody paid for.
func TestJournalReplayedUsage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	paid := llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		return &llm.Response{Text: "paid", Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}}, nil
	})
	cached := llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		return &llm.Response{Text: "cached", Usage: llm.Usage{InputTokens: 7}, Source: llm.SourceCache}, nil
	})
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	complete(t, j.Wrap(paid), ask(0))
	complete(t, j.Wrap(paid), ask(1))
	complete(t, j.Wrap(cached), ask(2))
	if calls, _ := j.ReplayedUsage(); calls != 0 {
		t.Errorf("%d replayed calls before any replay", calls)
	}
	j.Close()

	j2, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	for i := range 3 {
		complete(t, j2.Wrap(paid), ask(i))
	}
	calls, byModel := j2.ReplayedUsage()
	want := llm.Usage{InputTokens: 200, OutputTokens: 20}
	if calls != 2 || len(byModel) != 1 || byModel[ask(0).Model] != want {
		t.Errorf("replayed %d paid calls, usage %+v; want 2 and %+v under %s", calls, byModel, want, ask(0).Model)
	}
}

// A journal is never opened through a symlink: a link committed into a
// run's directory under the journal's name, or a run directory that is a
// link, is refused, and the file it points to is neither truncated nor
// appended to, nor created.
func TestJournalRefusesSymlinks(t *testing.T) {
	const precious = "the victim's own bytes\n"
	open := map[string]func(path string) error{
		"open": func(path string) error {
			j, err := OpenJournal(path)
			if err == nil {
				j.Close()
			}
			return err
		},
		"create": func(path string) error {
			j := CreateJournal(path, nil)
			defer j.Close()
			return j.Ready()
		},
	}
	for how, do := range open {
		for _, link := range []string{"journal.jsonl", "run"} {
			t.Run(how+" through "+link, func(t *testing.T) {
				base := t.TempDir()
				victimDir := t.TempDir()
				victim := filepath.Join(victimDir, "journal.jsonl")
				os.WriteFile(victim, []byte(precious), 0o600)
				run := filepath.Join(base, "run")
				if link == "run" {
					os.Symlink(victimDir, run)
				} else {
					os.Mkdir(run, 0o755)
					os.Symlink(victim, filepath.Join(run, link))
				}
				err := do(filepath.Join(run, "journal.jsonl"))
				if err == nil || !strings.Contains(err.Error(), "is a symlink to "+victimDir) {
					t.Errorf("err = %v; want the journal refused, naming the link", err)
				}
				if b, _ := os.ReadFile(victim); string(b) != precious {
					t.Errorf("the file behind the link now holds %q", b)
				}
			})
		}
	}
}

// A journal is read in batches of lines; wherever a batch ends, the
// records come back in file order, a torn tail is dropped, and a bad line
// with anything after it is damage, named by its line number.
func TestJournalReadsAcrossBatches(t *testing.T) {
	line := func(key, text string) string {
		b, err := json.Marshal(record{V: journalVersion, Key: key, Model: "openai:gpt-4.1", Response: &llm.Response{Text: text}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	whole := line("a", "1") + line("b", "2") + line("a", "3")
	cases := []struct {
		name, journal string
		want          []string // the texts read, in order
		wantOff       int
		damaged       string
	}{
		{"whole", whole, []string{"1", "2", "3"}, len(whole), ""},
		{"torn tail", whole + `{"v":1,"key":"c","respo`, []string{"1", "2", "3"}, len(whole), ""},
		{"bad last line", whole + "{\"v\":1}\n", []string{"1", "2", "3"}, len(whole), ""},
		{"bad line, then a record", line("a", "1") + "not json\n" + line("b", "2"), nil, 0, ":2 is damaged"},
		{"bad line, then a torn tail", whole + "not json\n" + `{"v":1,"ke`, nil, 0, ":4 is damaged"},
	}
	for _, batch := range []int{1, 100, loadBatch} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/batch %d", c.name, batch), func(t *testing.T) {
				var got []string
				off, err := readRecords(strings.NewReader(c.journal), "journal.jsonl", int64(len(c.journal)), batch, func(r *record) bool {
					got = append(got, r.Response.Text)
					return true
				})
				if c.damaged != "" {
					if err == nil || !strings.Contains(err.Error(), "journal.jsonl"+c.damaged) {
						t.Errorf("err = %v; want line %s named", err, c.damaged)
					}
					return
				}
				if err != nil || off != int64(c.wantOff) || !slices.Equal(got, c.want) {
					t.Errorf("read %q up to %d (err %v); want %q up to %d", got, off, err, c.want, c.wantOff)
				}
			})
		}
	}
}

// An answer is handed on once its record is written, while the disk syncs
// it; the next call builds its request meanwhile and is sent only once
// that record is on disk, and Close waits for the last sync. A failed
// sync stops the next call and Close.
func TestJournalSyncsBeforeTheNextCall(t *testing.T) {
	release := make(chan struct{})
	syncing := make(chan struct{}, 8)
	fail := false
	defer func(f func(*os.File) error) { syncFile = f }(syncFile)
	syncFile = func(f *os.File) error {
		syncing <- struct{}{}
		<-release
		if fail {
			return errors.New("disk gone")
		}
		return f.Sync()
	}
	p, srv := backend(t, llmtest.Config{})
	j, err := OpenJournal(filepath.Join(t.TempDir(), "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	entered := make(chan struct{}, 8)
	w := j.Wrap(llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		entered <- struct{}{}
		return p.Complete(ctx, req)
	}))
	complete(t, w, ask(0)) // returns with its record written, not yet synced
	<-entered
	<-syncing
	if _, written, _ := j.Stats(); written != 1 {
		t.Fatalf("%d records written, want 1", written)
	}
	second := make(chan error, 1)
	go func() {
		_, err := w.Complete(context.Background(), ask(1))
		second <- err
	}()
	select {
	case <-entered: // it builds its request while the disk syncs
	case err := <-second:
		t.Fatalf("the next call returned while the first answer was not on disk (err %v)", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the next call did not start while the first answer was synced")
	}
	select {
	case err := <-second:
		t.Fatalf("the next call went while the first answer was not on disk (err %v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	if srv.Count() != 1 {
		t.Fatalf("%d requests reached the provider before the first record was synced, want 1", srv.Count())
	}
	release <- struct{}{} // the first record is on disk: the second call goes
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	<-syncing // the second record's sync
	closed := make(chan error, 1)
	go func() { closed <- j.Close() }()
	select {
	case <-closed:
		t.Fatal("Close returned before the last record was on disk")
	case <-time.After(50 * time.Millisecond):
	}
	fail = true
	release <- struct{}{}
	if err := <-closed; err == nil || !strings.Contains(err.Error(), "disk gone") {
		t.Errorf("Close after a failed sync: %v, want the sync's error", err)
	}
	if _, err := w.Complete(context.Background(), ask(2)); err == nil {
		t.Error("a call went after the journal failed to sync")
	}
}

// A provider that sends without the journal's gate (llm.Sending) is
// waited for as it returns: its answer is not handed on, nor recorded,
// before the records written ahead of it are on disk.
func TestJournalWaitsForAProviderWithoutTheGate(t *testing.T) {
	release := make(chan struct{})
	syncing := make(chan struct{}, 8)
	defer func(f func(*os.File) error) { syncFile = f }(syncFile)
	syncFile = func(f *os.File) error {
		syncing <- struct{}{}
		<-release
		return f.Sync()
	}
	j, err := OpenJournal(filepath.Join(t.TempDir(), "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	answered := make(chan string, 4)
	w := j.Wrap(llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		answered <- req.Label
		return &llm.Response{Text: "ok " + req.Label}, nil
	}))
	complete(t, w, ask(0))
	<-answered
	<-syncing
	second := make(chan error, 1)
	go func() {
		_, err := w.Complete(context.Background(), ask(1))
		second <- err
	}()
	select {
	case <-answered: // the provider ran: it had no gate to wait at
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not reach its provider while the record before it was synced")
	}
	select {
	case err := <-second:
		t.Fatalf("the call returned while the record before it was not on disk (err %v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	if _, written, _ := j.Stats(); written != 1 {
		t.Fatalf("%d records written before the first was on disk, want 1", written)
	}
	close(release)
	if err := <-second; err != nil {
		t.Fatal(err)
	}
}
