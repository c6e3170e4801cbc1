package run

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sotlabs/sot/engine"
)

type payload struct {
	Mode   string            `json:"mode"`
	Models map[string]string `json:"models"`
	Lenses []string          `json:"lenses,omitempty"`
}

var testKey = []byte("0123456789abcdef0123456789abcdef0123456789abcdef")

var testLayout = Layout{
	Owns:    func(name string) bool { return strings.HasPrefix(name, "OUT-") || name == "result.json" },
	Outputs: []string{"result.json"},
}

func openTest(t *testing.T, dir string) *Dir {
	t.Helper()
	d, err := Open("", dir, testLayout, testKey)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// A record keeps the engine's fields around the scenario's payload, in one
// JSON object, and reads back the same, signed by the user's key.
func TestStateRoundTrip(t *testing.T) {
	created := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		payload any
		want    string
	}{
		{"payload", &payload{Mode: "society", Models: map[string]string{"security": "openai:m"}},
			`{"run_id":"rabc","nonce":"n","seed":7,"created":"2026-11-24T08:00:00Z","mode":"society","models":{"security":"openai:m"},"written":["OUT-A.md"]}`},
		{"no payload", nil,
			`{"run_id":"rabc","nonce":"n","seed":7,"created":"2026-11-24T08:00:00Z","written":["OUT-A.md"]}`},
		{"empty payload", &struct{}{},
			`{"run_id":"rabc","nonce":"n","seed":7,"created":"2026-11-24T08:00:00Z","written":["OUT-A.md"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := State{RunID: "rabc", Nonce: "n", Seed: 7, Created: created, Payload: tt.payload, Written: []string{"OUT-A.md"}}
			b, err := json.Marshal(st)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("got  %s\nwant %s", b, tt.want)
			}
			dir := t.TempDir()
			d := openTest(t, dir)
			if err := d.Save(st); err != nil {
				t.Fatal(err)
			}
			var p payload
			got := d.State(&p)
			if !got.Authentic {
				t.Fatal("the record sot signed does not check out")
			}
			if got.RunID != "rabc" || got.Nonce != "n" || got.Seed != 7 || !got.Created.Equal(created) || !slices.Equal(got.Written, st.Written) {
				t.Errorf("read back %+v", got)
			}
			if pp, ok := tt.payload.(*payload); ok {
				if diff := cmp.Diff(*pp, p); diff != "" {
					t.Errorf("payload (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// A reader that does not know the payload (the engine adding a written
// file) writes it back byte for byte, and the record still checks out for
// the scenario that does.
func TestRecordWrittenKeepsThePayload(t *testing.T) {
	dir := t.TempDir()
	d := openTest(t, dir)
	p := &payload{Mode: "society", Models: map[string]string{"b": "x", "a": "y"}, Lenses: []string{"premortem"}}
	if err := d.Save(State{RunID: "rabc", Nonce: "n", Payload: p}); err != nil {
		t.Fatal(err)
	}
	if err := d.RecordWritten([]string{filepath.Join(dir, "OUT-A.md"), "OUT-A.md", "OUT-B.md"}); err != nil {
		t.Fatal(err)
	}
	var got payload
	st := d.State(&got)
	if !st.Authentic {
		t.Fatal("the record no longer checks out")
	}
	if diff := cmp.Diff(*p, got); diff != "" {
		t.Errorf("payload (-want +got):\n%s", diff)
	}
	if want := []string{"OUT-A.md", "OUT-B.md"}; !slices.Equal(st.Written, want) {
		t.Errorf("written %v, want %v", st.Written, want)
	}
}

// A record is the user's only under the user's key and only as written:
// another key, an edited payload, a missing signature and a signature
// moved from its place are all foreign.
func TestStateAuthenticity(t *testing.T) {
	dir := t.TempDir()
	d := openTest(t, dir)
	if err := d.Save(State{RunID: "rabc", Nonce: "n", Payload: &payload{Models: map[string]string{"security": "openai:m"}}}); err != nil {
		t.Fatal(err)
	}
	signed, _ := os.ReadFile(filepath.Join(dir, StateFile))
	var mac struct{ MAC string }
	json.Unmarshal(signed, &mac)
	tests := []struct {
		name string
		b    []byte
		key  []byte
		want bool
	}{
		{"as written", signed, testKey, true},
		{"another key", signed, []byte("another key, another user, 32 bytes+"), false},
		{"no key", signed, nil, false},
		{"edited payload", bytes.Replace(signed, []byte("openai:m"), []byte("command:touch x"), 1), testKey, false},
		{"edited nonce", bytes.Replace(signed, []byte(`"nonce": "n"`), []byte(`"nonce": "m"`), 1), testKey, false},
		{"no signature", bytes.Replace(signed, []byte(`"mac"`), []byte(`"cam"`), 1), testKey, false},
		{"signature moved", []byte(`{"mac":"` + mac.MAC + `","run_id":"rabc","nonce":"n","seed":0,"created":"0001-01-01T00:00:00Z","models":{"security":"openai:m"}}`), testKey, false},
		{"not JSON", []byte("run_id: rabc"), testKey, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseState(tt.b, &payload{}, tt.key).Authentic; got != tt.want {
				t.Errorf("authentic = %v, want %v", got, tt.want)
			}
		})
	}
}

// The id recipe is fixed: runs written before keep their ids, so a re-run
// finds their journals.
func TestIDRecipe(t *testing.T) {
	id := NewID("sot-run-v1")
	id.Add("society", "diff")
	id.Add("a.go", "package a\n")
	if got, want := id.String(), "r"+hexPrefix("sot-run-v1\x00society\x00diff\x00a.go\x00package a\n\x00"); got != want {
		t.Errorf("id %s, want %s", got, want)
	}
	if Seed("rabc") != Seed("rabc") || Seed("rabc") == Seed("rabd") || Seed("rabc") < 0 {
		t.Error("the seed is not a stable, non-negative function of the id")
	}
}

// A directory holding files sot did not write, or a symlink, is refused
// with the field that chose it; one holding only a run's files is taken.
func TestCheck(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		link  bool
		bad   string
	}{
		{"empty", nil, false, ""},
		{"a run's files", []string{StateFile, JournalFile, "OUT-A.md", "result.json", "x.tmp"}, false, ""},
		{"a lock alone", []string{LockFile}, false, ""},
		{"a foreign file", []string{"main.go", "OUT-A.md"}, false, "main.go"},
		{"scenario names without a run's mark", []string{"OUT-A.md"}, false, "OUT-A.md"},
		{"a symlink", nil, true, "symlinks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tt.files {
				os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644)
			}
			if tt.link {
				os.Symlink("/etc/passwd", filepath.Join(dir, "OUT-A.md"))
			}
			err := Check("", dir, testLayout)
			if tt.bad == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ue *engine.UserError
			if !errors.As(err, &ue) || ue.Field != "output_dir" || !strings.Contains(err.Error(), tt.bad) {
				t.Fatalf("err = %v, want a user error on output_dir citing %s", err, tt.bad)
			}
		})
	}
}

// A different run clears what the earlier one wrote and the scenario's
// outputs, and nothing else; the same run keeps its files.
func TestClearStale(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"OUT-A.md", "OUT-MINE.md", "result.json", JournalFile, "notes.txt"} {
		os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644)
	}
	d := openTest(t, dir)
	if err := d.Save(State{RunID: "rold", Written: []string{"OUT-A.md", "../escape", "notes.txt"}}); err != nil {
		t.Fatal(err)
	}
	if old, err := d.ClearStale("rold"); err != nil || old != "" {
		t.Fatalf("the same run: old %q, err %v", old, err)
	}
	old, err := d.ClearStale("rnew")
	if err != nil || old != "rold" {
		t.Fatalf("old %q, err %v", old, err)
	}
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := []string{".gitignore", "OUT-MINE.md", "notes.txt", StateFile}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}

// The runs of a project are listed newest first, with their payloads;
// directories without a record, and symlinks, are not runs.
func TestList(t *testing.T) {
	top := t.TempDir()
	for i, id := range []string{"rold", "rnew"} {
		dir := filepath.Join(top, "runs", id)
		d := openTest(t, dir)
		if err := d.Save(State{RunID: id, Created: time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC), Payload: &payload{Mode: id}}); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(top, "runs", "empty"), 0o755)
	os.Symlink(filepath.Join(top, "runs", "rold"), filepath.Join(top, "runs", "link"))
	entries, err := List(top, []string{filepath.Join("runs", "*")}, func() any { return &payload{} }, testKey)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Dir+" "+e.State.Payload.(*payload).Mode)
		if !e.State.Authentic || e.Running {
			t.Errorf("%s: authentic %v, running %v", e.Dir, e.State.Authentic, e.Running)
		}
	}
	if want := []string{filepath.Join("runs", "rnew") + " rnew", filepath.Join("runs", "rold") + " rold"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
