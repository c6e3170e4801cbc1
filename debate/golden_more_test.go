package debate

// What golden_test.go leaves unpinned of the generated golden debate, so
// that a change to the run machinery shows, here too, that it changed
// nothing a user sees or keeps on disk:
//
//   - the request of every model call (model, schema, temperature, max
//     tokens, system prompt and messages), as the provider received it,
//     with the label and journal key the stack gave it;
//   - the run id, the nonce and the run's default directory;
//   - the journal keys of every call: the keys its journal and the
//     response cache find answers by;
//   - run.json, whose MAC must verify under the user's key;
//   - of the replay of the committed run directory: that the debate finds
//     it under its run id, leaves run.json and the journal as they were,
//     and writes debate.json as the golden run did.
//
// The goldens are under testdata/golden/more; -update rewrites them with
// the others.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/stack"
)

const moreRegenerate = "go test ./debate -run Golden -update"

// moreDir holds the goldens of this file.
var moreDir = filepath.Join("testdata", "golden", "more")

// moreLog keeps every request the stack passes to the provider, below
// the journal: the calls sent, with the labels and shared prefixes the
// wire does not carry.
type moreLog struct {
	mu   sync.Mutex
	reqs []*llm.Request
}

func (l *moreLog) requests() []*llm.Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

// moreOptions are the options of the generated golden debate (see
// TestGolden), run in its default directory, with every request the stack
// sends kept in log.
func moreOptions(t *testing.T, top, baseURL string, log *moreLog) *Options {
	t.Helper()
	o := testOptionsIn(t, top, baseURL, nil)
	o.Rounds, o.BranchRounds, o.Now, o.Observers = 1, 1, goldenClock, "generate:3"
	inner := o.NewStack
	o.NewStack = func(journal string) (*stack.Stack, error) {
		st, err := inner(journal)
		if err != nil {
			return nil, err
		}
		next := st.Provider
		st.Provider = llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
			log.mu.Lock()
			log.reqs = append(log.reqs, req.Clone())
			log.mu.Unlock()
			return next.Complete(ctx, req)
		})
		return st, nil
	}
	return o
}

// TestGoldenMore runs the generated golden debate again and pins what
// TestGolden does not: its requests, plan, journal keys and run.json.
func TestGoldenMore(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Seed: 1, Rules: []llmtest.Rule{{Respond: generating}}})
	defer srv.Close()
	goldenKey(t)
	top := testProject(t)
	log := &moreLog{}
	p, out := runDebate(t, moreOptions(t, top, srv.OpenAIBaseURL(), log))
	if err := out.Verdict(); err != nil {
		t.Fatalf("verdict %v", err)
	}
	checkMore(t, "prompts.txt", morePrompts(t, srv.Requests(), log.requests()),
		"The requests of the debate's calls changed: what the models are asked, and with it every journal and cache key.")

	var b strings.Builder
	fmt.Fprintf(&b, "# The plan of the generated golden debate. Regenerate with: %s\n", moreRegenerate)
	fmt.Fprintf(&b, "run_id: %s\nnonce: %s\n", p.RunID, p.Nonce)
	// The directory as the project names it: the run's is relative to the
	// working directory, which is not the project's.
	abs, err := filepath.Abs(p.OutputDir)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "output_dir: $TOP/%s\nmodel: %s\nrounds: %d\nbranch_rounds: %d\nturns: %s\n", filepath.ToSlash(rel), p.Model, p.Rounds, p.BranchRounds, p.Turns)
	for _, d := range p.Debaters {
		fmt.Fprintf(&b, "debater: %s\n", d.ID)
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	u := out.Result.Usage
	fmt.Fprintf(&b, "calls: %d (new %d, replayed %d)\n", u.Calls, u.NewCalls, u.Replayed)
	checkMore(t, "run.txt", []byte(b.String()),
		"The run id, nonce or directory of the debate changed: the same debate asked again would no longer find its run.")

	journal, err := os.ReadFile(filepath.Join(p.OutputDir, run.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	keys := moreKeys(t, journal)
	if len(keys) != u.Calls || len(keys) != len(log.requests()) || len(keys) != srv.Count() {
		t.Errorf("the journal holds %d records; the run made %d calls, the stack sent %d and the provider got %d", len(keys), u.Calls, len(log.requests()), srv.Count())
	}
	checkMore(t, "keys.txt", []byte("# The journal keys (llm.Request.Key) of every call of the generated golden debate: label, model, key.\n# Regenerate with: "+
		moreRegenerate+"\n"+strings.Join(keys, "\n")+"\n"),
		"THE JOURNAL AND CACHE KEYS CHANGED: users' interrupted or finished debates no longer resume from their journals (every call is sent and paid for again) "+
			"and their response caches miss. If that is intended, say so in the change, and regenerate the committed run directory too (-update -update-rundir).")

	state, err := os.ReadFile(filepath.Join(p.OutputDir, run.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	moreCheckMAC(t, state)
	checkMore(t, run.StateFile, state, "The debate's run.json changed: the record a later invocation resumes the run by.")
}

// TestGoldenMoreReplay replays the committed run directory in the
// debate's default directory, .sot/debates/<run-id>: the debate must find
// it there by its run id, send nothing, leave run.json and the journal as
// they were, and write the golden run's debate.json, save for the account
// of this invocation (every call replayed, none sent).
func TestGoldenMoreReplay(t *testing.T) {
	goldenKey(t)
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Fault: llmtest.Fault500}}})
	defer srv.Close()
	top := testProject(t)
	src := filepath.Join("testdata", "golden", "rundir", "generated")
	committed := map[string][]byte{}
	for _, name := range []string{run.StateFile, run.JournalFile} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		committed[name] = b
	}
	var state struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal(committed[run.StateFile], &state); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(top, ".sot", "debates", state.RunID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range committed {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, out := runDebate(t, moreOptions(t, top, srv.OpenAIBaseURL(), &moreLog{}))
	if p.RunID != state.RunID {
		t.Fatalf("the debate's run id is now %s, the committed run's %s: the same debate asked again no longer finds its run directory, "+
			"and every call is sent and paid for again", p.RunID, state.RunID)
	}
	if n := srv.Count(); n != 0 {
		t.Fatalf("the replay sent %d request(s); the committed journal no longer answers this code's requests", n)
	}
	if err := out.Verdict(); err != nil {
		t.Fatal(err)
	}
	for name, want := range committed {
		got, err := os.ReadFile(filepath.Join(p.OutputDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("the replay changed %s:\n%s", name, firstDiff(string(want), string(got)))
		}
	}
	got, err := os.ReadFile(filepath.Join(p.OutputDir, JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "golden", "generated", JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var g, w map[string]any
	if err := json.Unmarshal(requestID.ReplaceAll(got, []byte("req_llmtest_N")), &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	gu, _ := g["usage"].(map[string]any)
	wu, _ := w["usage"].(map[string]any)
	if gu == nil || wu == nil {
		t.Fatalf("debate.json has no usage: replay %v, golden %v", gu, wu)
	}
	if gu["new_calls"] != 0.0 || gu["new_cost_usd"] != 0.0 || gu["replayed"] != wu["calls"] {
		t.Errorf("the replay's usage says %v sent (costing %v) and %v replayed; want none sent and all %v replayed", gu["new_calls"], gu["new_cost_usd"], gu["replayed"], wu["calls"])
	}
	for _, k := range []string{"new_calls", "new_cost_usd", "replayed"} {
		delete(gu, k)
		delete(wu, k)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("the replay's %s is not the golden run's (-golden +replay):\n%s", JSONFile, diff)
	}
}

// checkMore compares got with the golden name under testdata/golden/more,
// or writes it under -update.
func checkMore(t *testing.T, name string, got []byte, why string) {
	t.Helper()
	path := filepath.Join(moreDir, name)
	if *update {
		if err := os.MkdirAll(moreDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("no golden %s (%v); write it with: %s", path, err, moreRegenerate)
		return
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from its golden (-golden +now):\n%s\n%s\nIf the change is intended, regenerate the goldens with: %s",
			path, cmp.Diff(strings.SplitAfter(string(want), "\n"), strings.SplitAfter(string(got), "\n")), why, moreRegenerate)
	}
}

// moreKeys lists "label model key" for every journal record, sorted:
// records are appended as calls finish, in no fixed order.
func moreKeys(t *testing.T, journal []byte) []string {
	t.Helper()
	var lines []string
	for i, line := range bytes.Split(bytes.TrimSpace(journal), []byte("\n")) {
		var r struct {
			Key   string `json:"key"`
			Label string `json:"label"`
			Model string `json:"model"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("journal line %d: %v", i+1, err)
		}
		lines = append(lines, r.Label+" "+r.Model+" "+r.Key)
	}
	sort.Strings(lines)
	return lines
}

var moreMACRe = regexp.MustCompile(`(?m),\n  "mac": "([0-9a-f]*)"`)

// moreCheckMAC checks, without sot's code, that run.json's MAC is
// HMAC-SHA256 under the user's key over "sot-run-state-v1\n" and the record
// as compact JSON without its "mac" field: otherwise sot would neither
// trust nor resume the run.
func moreCheckMAC(t *testing.T, record []byte) {
	t.Helper()
	m := moreMACRe.FindSubmatch(record)
	if m == nil {
		t.Errorf("run.json carries no MAC: sot would not resume the run\n%s", record)
		return
	}
	key, err := os.ReadFile(filepath.Join("testdata", "golden", "nonce.key"))
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, moreMACRe.ReplaceAll(record, nil)); err != nil {
		t.Fatalf("run.json: %v", err)
	}
	h := hmac.New(sha256.New, key)
	h.Write([]byte("sot-run-state-v1\n"))
	h.Write(compact.Bytes())
	if want := hex.EncodeToString(h.Sum(nil)); string(m[1]) != want {
		t.Errorf("run.json's MAC %s does not verify with the user's key (want %s): sot would neither trust nor resume the run", m[1], want)
	}
}

// moreCall is one model call: the request as the provider received it,
// and as the stack sent it.
type moreCall struct {
	rec *llmtest.Recorded
	req *llm.Request
}

// moreWire is what identifies one call on both sides of the wire.
func moreWire(model, schema string, temperature *float64, maxTokens int, system string, msgs [][2]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\x00%s\x00%s\x00%d\x00%s", model, schema, moreTemperature(temperature), maxTokens, system)
	for _, m := range msgs {
		b.WriteString("\x00" + m[0] + "\x00" + m[1])
	}
	return b.String()
}

func moreTemperature(t *float64) string {
	if t == nil {
		return "unset"
	}
	return strconv.FormatFloat(*t, 'g', -1, 64)
}

// morePrompts writes every call the provider received, sorted by label
// and key: its label and journal key (from the stack's request it
// matches), model, schema, temperature, max tokens, system prompt and
// messages. Schemas and shared prefixes are written once; a system prompt
// that extends another call's (a later turn's extends an earlier one's)
// is written as that call's and what it adds.
func morePrompts(t *testing.T, recs []llmtest.Recorded, reqs []*llm.Request) []byte {
	t.Helper()
	pending := map[string][]*llm.Request{}
	for _, q := range reqs {
		var msgs [][2]string
		for _, m := range q.Messages {
			msgs = append(msgs, [2]string{string(m.Role), m.Content})
		}
		schema := ""
		if q.Schema != nil {
			schema = q.Schema.Name
		}
		ref, err := llm.ParseModel(q.Model)
		if err != nil {
			t.Fatal(err)
		}
		w := moreWire(ref.Name, schema, q.Temperature, q.MaxTokens, q.System, msgs)
		pending[w] = append(pending[w], q)
	}
	var calls []moreCall
	for i := range recs {
		rec := &recs[i]
		if rec.Provider == "" {
			t.Errorf("the provider got a request that is no model call: %s %s", rec.Method, rec.Path)
			continue
		}
		var msgs [][2]string
		for _, m := range rec.Messages {
			msgs = append(msgs, [2]string{m.Role, m.Text})
		}
		w := moreWire(rec.Model, rec.SchemaName, rec.Temperature, rec.MaxTokens, rec.System, msgs)
		if len(pending[w]) == 0 {
			t.Errorf("the provider got a call the stack did not send as such (schema %q, %d bytes of system prompt): a retry, or a request changed on its way", rec.SchemaName, len(rec.System))
			continue
		}
		calls = append(calls, moreCall{rec, pending[w][0]})
		pending[w] = pending[w][1:]
	}
	for _, qs := range pending {
		for _, q := range qs {
			t.Errorf("the stack sent %s, but the provider never received it", q.Label)
		}
	}
	sort.Slice(calls, func(i, j int) bool {
		a, b := calls[i].req, calls[j].req
		if a.Label != b.Label {
			return a.Label < b.Label
		}
		return a.Key() < b.Key()
	})

	var b strings.Builder
	fmt.Fprintf(&b, "# The requests of every model call of the generated golden debate, as the fake provider received them,\n")
	fmt.Fprintf(&b, "# with the label and journal key of each, sorted by label. Texts several calls share are written once.\n")
	fmt.Fprintf(&b, "# Regenerate with: %s\n\ncalls: %d\n", moreRegenerate, len(calls))
	schemas := map[string]bool{}
	for _, c := range calls {
		if s := c.rec.SchemaName; s != "" && !schemas[s] {
			schemas[s] = true
			fmt.Fprintf(&b, "\n==== schema %s (%d bytes)\n%s\n==== end of schema %s\n", s, len(c.rec.Schema), c.rec.Schema, s)
		}
	}
	prefixes := map[string]string{}
	for _, c := range calls {
		if n := c.req.SharedPrefix; n > 0 && n <= len(c.req.System) {
			p := c.req.System[:n]
			if _, ok := prefixes[p]; !ok {
				name := fmt.Sprintf("P%d", len(prefixes)+1)
				prefixes[p] = name
				fmt.Fprintf(&b, "\n==== shared prefix %s (%d bytes)\n%s\n==== end of shared prefix %s\n", name, len(p), p, name)
			}
		}
	}
	for _, c := range calls {
		rec, req := c.rec, c.req
		fmt.Fprintf(&b, "\n==== call %s\n", req.Label)
		fmt.Fprintf(&b, "key: %s\n", req.Key())
		fmt.Fprintf(&b, "endpoint: %s %s (%s)\n", rec.Method, rec.Path, rec.Provider)
		fmt.Fprintf(&b, "model: %s (requested as %s)\n", rec.Model, req.Model)
		fmt.Fprintf(&b, "schema: %s (strict %v)\n", moreOr(rec.SchemaName, "(none)"), rec.Strict)
		fmt.Fprintf(&b, "temperature: %s\nmax_tokens: %d\nstream: %v\n", moreTemperature(rec.Temperature), rec.MaxTokens, rec.Stream)
		// The longest system prompt of a call sorted before this one that
		// this one extends, or else its shared prefix.
		base, baseName := "", ""
		for _, o := range calls {
			if o.req == req {
				break
			}
			if len(o.rec.System) < len(rec.System) && len(o.rec.System) > len(base) && strings.HasPrefix(rec.System, o.rec.System) {
				base, baseName = o.rec.System, "the system prompt of "+o.req.Label+" "+o.req.Key()[:12]
			}
		}
		if n := req.SharedPrefix; n > 0 && n <= len(rec.System) && len(base) <= n {
			base, baseName = rec.System[:n], "shared prefix "+prefixes[rec.System[:n]]
		}
		if base != "" {
			fmt.Fprintf(&b, "---- system prompt (%d bytes): %s, then\n%s\n", len(rec.System), baseName, rec.System[len(base):])
		} else {
			fmt.Fprintf(&b, "---- system prompt (%d bytes)\n%s\n", len(rec.System), rec.System)
		}
		for i, m := range rec.Messages {
			fmt.Fprintf(&b, "---- message %d (%s, %d bytes)\n%s\n", i+1, m.Role, len(m.Text), m.Text)
		}
		fmt.Fprintf(&b, "==== end of call %s\n", req.Label)
	}
	return []byte(b.String())
}

func moreOr(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}
