package review_test

// Golden tests: they pin what one fixed review does today, byte for byte,
// so that a refactor of the run machinery (moving it out of package
// review, say) can show it changed nothing a user sees or has on disk:
//
//   - every model call's prompt (system prompt, messages, model, schema,
//     temperature, max tokens), as the provider received it, in parallel
//     and in debate mode;
//   - the run id and the nonce;
//   - the journal (and response cache) keys of every call: a change there
//     means existing users' interrupted runs no longer resume and their
//     caches miss;
//   - run.json, result.json, review.json, review.sarif and every
//     REVIEW-*.md the run writes;
//   - that a run directory written by today's code (committed under
//     testdata/golden/rundir) is replayed from its journal by the code
//     under test, with no network call, into the same outputs.
//
// Regenerate the goldens, after a change meant to alter them, with
//
//	go test ./review -run Golden -update
//
// The committed run directories are the journals of today's users; they
// are rewritten only with -update-rundir, and only when breaking existing
// runs is intended (see TestGoldenReplay).

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/stack"
	"github.com/sotlabs/sot/persona"
	"github.com/sotlabs/sot/prompt"
	"github.com/sotlabs/sot/review"
)

var (
	updateGolden = flag.Bool("update", false, "rewrite the golden files under review/testdata/golden (not the committed run directories)")
	updateRundir = flag.Bool("update-rundir", false, "also rewrite the committed run directories under review/testdata/golden/rundir: only when breaking the resumes of existing runs is intended")
)

const (
	regenerate       = "go test ./review -run Golden -update"
	regenerateRundir = "go test ./review -run Golden -update -update-rundir"
)

// goldenRoot is testdata/golden, absolute: the tests change directory
// into the repository they review, as a user of the CLI would.
var goldenRoot = func() string {
	abs, err := filepath.Abs(filepath.Join("testdata", "golden"))
	if err != nil {
		panic(err)
	}
	return abs
}()

// The fixed review: its repository, output directory, model and seed.
const (
	goldenOutputDir = ".sot/reviews/golden" // relative to the repository, where the tests run
	goldenModel     = "openai:gpt-4.1"
	goldenSeed      = int64(20240102)
	goldenAPIKey    = "sk-golden-0123456789"
	goldenVersion   = "golden" // the tool version SARIF names
)

// goldenModes are the reviews pinned: the same material, specialists and
// seed, run in parallel and in debate mode.
var goldenModes = []struct {
	name string
	set  func(*review.Context)
}{
	{"parallel", func(c *review.Context) {
		c.InteractionMode = review.Parallel
		c.Perspectives = "baseline,premortem" // two lenses: every specialist is called under each
	}},
	{"debate", func(c *review.Context) {
		c.InteractionMode = review.Debate
		c.Perspectives = "none"
	}},
}

// goldenEnv isolates the test from the machine: a home, cache, state and
// config directory of its own, git reading no configuration but the
// repository's (and running in UTC), and the fixed secret key from which
// the nonce and run.json's MAC derive (review reads it from the user
// cache directory).
func goldenEnv(t *testing.T) {
	t.Helper()
	key, err := os.ReadFile(filepath.Join(goldenRoot, "nonce.key"))
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	for _, d := range []string{"cache/sot", "state", "config"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "cache", "sot", "nonce.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("TZ", "UTC")
}

// goldenRepo builds the fixed repository, with fixed contents, authors and
// dates (so its commit has the same hash on every machine), and changes
// its working tree: a modified file, a deleted one and a new, untracked
// one. The test then works inside it.
func goldenRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(),
			"GIT_AUTHOR_NAME=Golden Author", "GIT_AUTHOR_EMAIL=author@golden.example", "GIT_AUTHOR_DATE=2024-01-02T03:04:05Z",
			"GIT_COMMITTER_NAME=Golden Committer", "GIT_COMMITTER_EMAIL=committer@golden.example", "GIT_COMMITTER_DATE=2024-01-02T03:04:05Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# golden\n\nA fixed repository for sot's golden tests.\n")
	write("svc/session.go", `package svc

import "net/http"

// Session holds a signed-in user's token.
type Session struct {
	Token string
}

// Login stores the token of a signed-in user.
func Login(w http.ResponseWriter, token string) *Session {
	return &Session{Token: token}
}
`)
	write("svc/legacy.go", `package svc

// LegacyLogin is kept for old clients.
func LegacyLogin(token string) bool {
	return token != ""
}
`)
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-q", "-m", "initial")
	// The change under review.
	write("svc/session.go", `package svc

import "net/http"

// Session holds a signed-in user's token.
type Session struct {
	Token string
}

// Login stores the token of a signed-in user in a cookie.
func Login(w http.ResponseWriter, token string) *Session {
	http.SetCookie(w, &http.Cookie{Name: "session", Value: token})
	return &Session{Token: token}
}
`)
	if err := os.Remove(filepath.Join(dir, "svc", "legacy.go")); err != nil {
		t.Fatal(err)
	}
	write("svc/limits.go", `package svc

// MaxSessions bounds the sessions a user may hold.
const MaxSessions = 5

// Allow reports whether a user holding n sessions may open another.
func Allow(n int) bool {
	return n <= MaxSessions
}
`)
	t.Chdir(dir)
	return dir
}

// callLog records every request the stack sends below the run's journal:
// the calls that reach the provider, as review composed them (with their
// labels and SharedPrefix, which the wire does not carry).
type callLog struct {
	mu   sync.Mutex
	reqs []*llm.Request
}

func (l *callLog) wrap(next llm.Provider) llm.Provider {
	return llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		l.mu.Lock()
		l.reqs = append(l.reqs, req.Clone())
		l.mu.Unlock()
		return next.Complete(ctx, req)
	})
}

func (l *callLog) requests() []*llm.Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

// goldenOptions are the options of the fixed review against baseURL, as
// the CLI would set them run from the repository's top.
func goldenOptions(t *testing.T, mode int, baseURL string, log *callLog) *review.Options {
	t.Helper()
	cfg := config.Defaults()
	p := cfg.Providers["openai"]
	p.BaseURL = baseURL
	cfg.Providers["openai"] = p
	cfg.Cache.Disabled = true // the journal replays; a cache would hide calls from the provider
	cfg.DefaultModel = goldenModel
	// No retries: no call is sent twice, and under the provider of
	// TestGoldenReplay, which fails every call, a call the journal does not
	// answer fails at once.
	cfg.Retries = 0
	lib, err := persona.Discover(persona.Dirs{})
	if err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return goldenAPIKey
		}
		return ""
	}
	seed := goldenSeed
	o := &review.Options{Options: scenario.Options{Dir: ".", Config: &cfg, Getenv: getenv, NewStack: func(journal string) (*stack.Stack, error) {
		st, err := stack.New(&cfg, stack.Options{JournalPath: journal, Getenv: getenv})
		if err == nil && log != nil {
			st.Provider = log.wrap(st.Provider)
		}
		return st, err
	}}, Context: review.Context{Interactive: "false", OutputDir: goldenOutputDir, Specialists: "security,correctness,testing"}, Library: lib, Seed: &seed}
	goldenModes[mode].set(&o.Context)
	return o
}

// responder answers the fixed review's calls by what each request asks,
// never by when it arrives, so that concurrent calls get the same answers
// on every run. The review it scripts:
//
//   - security finds one must-fix problem (svc/session.go:12); correctness
//     finds the same problem and an off-by-one (svc/limits.go:8); testing
//     finds nothing. The triage lead calls every cluster an agreement.
//   - In debate mode the threads are T1 (security's), T2 and T3
//     (correctness's). In round 2 testing disagrees with T1 and
//     correctness agrees; security disagrees with T2 and T3, which the
//     lead classifies as trade-offs (decided by the priority hierarchy);
//     testing opens T4, which nobody disputes. Round 3 repeats the
//     stances; T1, still contested, gets both continuation exchanges.
type responder struct {
	mu         sync.Mutex
	unexpected []string
}

var (
	specialistRe = regexp.MustCompile(`# You are the ([a-z-]+) specialist`)
	roundRe      = regexp.MustCompile(`# Debate round (\d+)`)
	clusterRe    = regexp.MustCompile(`(?m)^### Cluster (\S+)\n((?:- id .*\n(?:  .*\n)*)+)`)
	memberRe     = regexp.MustCompile(`(?m)^- id (\S+), by [^:\n]+: \[[^\]\n]*\] (.*)$`)
	summaryRe    = regexp.MustCompile(`(?m)^### (T\d+) \([a-z-]+\), raised by ([a-z/-]+) in round`)
	threadLineRe = regexp.MustCompile(`(?m)^- (T\d+) \[[a-z-]+\], raised by ([a-z/-]+) in round`)
)

// unfenced is a prompt with the fence's gutter taken off the start of its
// lines, so that the responder reads the lists the support prompts fence
// (the findings, the threads) as it reads the rest.
func unfenced(s string) string {
	return strings.ReplaceAll(s, "\n"+prompt.Gutter, "\n")
}

func goldenFinding(claim, severity, file string, line int, category string) map[string]any {
	return map[string]any{
		"perspective": "", "finding": claim, "severity": severity, "confidence": "HIGH", "category": category,
		"grounds": fmt.Sprintf("%s:%d shows the code the claim is about", file, line), "file": file, "start_line": line, "end_line": 0,
		"section": "", "warrant": "Because the line does what the claim says.", "rebuttal_conditions": "A caller that checks first would make this wrong.",
		"suggested_verification": "Write a test that exercises the line.",
	}
}

// round1 is each specialist's first-round review.
func round1(spec string) []map[string]any {
	switch spec {
	case "security":
		return []map[string]any{goldenFinding("Login writes the session token into a cookie without validating it, so a forged token is accepted.", "must-fix", "svc/session.go", 12, "authentication")}
	case "correctness":
		return []map[string]any{
			goldenFinding("Login stores the token in the cookie before anything checks it, so an invalid token reaches the client.", "should-fix", "svc/session.go", 12, "validation"),
			goldenFinding("Allow admits one session too many: n <= MaxSessions lets a user holding five sessions open a sixth.", "should-fix", "svc/limits.go", 8, "off-by-one"),
		}
	}
	return []map[string]any{}
}

func (r *responder) fail(format string, args ...any) llmtest.Reply {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.unexpected = append(r.unexpected, fmt.Sprintf(format, args...))
	return llmtest.Reply{Fault: llmtest.Fault500}
}

func (r *responder) respond(rec *llmtest.Recorded) llmtest.Reply {
	switch rec.SchemaName {
	case "specialist_review":
		m := specialistRe.FindStringSubmatch(rec.System)
		if m == nil {
			return r.fail("a specialist_review call without a specialist heading")
		}
		return llmtest.Reply{JSON: map[string]any{"findings": round1(m[1]), "examined": "The diff of svc/, line by line, as the " + m[1] + " specialist."}}

	case "triage":
		// Every cluster is an agreement, its merged claim the first
		// member's claim; the narrative cites every finding listed.
		clusters := []map[string]any{}
		user := unfenced(rec.LastUser())
		for _, c := range clusterRe.FindAllStringSubmatch(user, -1) {
			var members []string
			var positions []map[string]any
			merged := ""
			for _, mm := range memberRe.FindAllStringSubmatch(c[2], -1) {
				members = append(members, mm[1])
				if merged == "" {
					merged = mm[2]
				}
				positions = append(positions, map[string]any{"finding_id": mm[1], "summary": "Cites the same line for the same problem.", "objective": "Correctness"})
			}
			clusters = append(clusters, map[string]any{"cluster_id": c[1], "relation": "agreement", "finding_ids": members,
				"merged_claim": merged, "reason": "Every finding cites the same line for the same problem.",
				"positions": positions, "decision_axis": ""})
		}
		var ids []string
		for _, mm := range memberRe.FindAllStringSubmatch(user, -1) {
			ids = append(ids, mm[1])
		}
		return llmtest.Reply{JSON: map[string]any{"clusters": clusters, "narrative": "The reviewers agree that Login trusts its token " + cite(ids) + "."}}

	case "round_summary":
		threads := []map[string]any{}
		for _, m := range summaryRe.FindAllStringSubmatch(unfenced(rec.LastUser()), -1) {
			kind := "factual"
			if strings.HasPrefix(m[2], "correctness") {
				kind = "trade-off"
			}
			threads = append(threads, map[string]any{"thread_id": m[1], "summary": "The reviewers weigh " + m[1] + "; paraphrased.",
				"open_questions": "Whether callers validate first.", "kind": kind, "decision_axis": "safety against simplicity"})
		}
		return llmtest.Reply{JSON: map[string]any{"overview": "The round is summarized.", "perspective_contrasts": "", "threads": threads}}

	case "debate_round":
		m := specialistRe.FindStringSubmatch(rec.System)
		if m == nil {
			return r.fail("a debate_round call without a specialist heading")
		}
		spec := m[1]
		round := 0
		if rm := roundRe.FindAllStringSubmatch(rec.System, -1); rm != nil {
			fmt.Sscan(rm[len(rm)-1][1], &round)
		}
		continuation := strings.Contains(rec.System, "# Debate continuation")
		// The threads of the latest round or continuation section.
		tail := rec.System
		if i := strings.LastIndex(tail, "# Debate "); i >= 0 {
			tail = tail[i:]
		}
		positions := []map[string]any{}
		for _, t := range threadLineRe.FindAllStringSubmatch(tail, -1) {
			id, owner := t[1], t[2]
			stance := ""
			switch {
			case owner == spec:
				stance = "maintain"
			case spec == "testing" && owner == "security":
				stance = "disagree"
			case spec == "correctness" && owner == "security":
				stance = "agree"
			case spec == "security" && owner == "correctness":
				stance = "disagree"
			}
			if stance != "" {
				positions = append(positions, map[string]any{"thread_id": id, "stance": stance,
					"argument": fmt.Sprintf("%s takes %s on %s, citing svc/session.go:12.", spec, stance, id), "revised_severity": "unchanged"})
			}
		}
		findings := []map[string]any{}
		if spec == "testing" && round == 2 && !continuation {
			findings = append(findings, goldenFinding("No test covers a rejected token, so the missing validation in Login went unnoticed.", "consider", "svc/session.go", 11, "coverage"))
		}
		return llmtest.Reply{JSON: map[string]any{"positions": positions, "findings": findings, "examined": fmt.Sprintf("The threads of this exchange, as the %s specialist.", spec)}}
	}
	return r.fail("an unexpected call: schema %q", rec.SchemaName)
}

func cite(ids []string) string {
	var parts []string
	for _, id := range ids {
		parts = append(parts, "["+id+"]")
	}
	return strings.Join(parts, " ")
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() {
			t.Errorf("%s holds a directory %s", dir, e.Name())
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

// TestGoldenReview runs the fixed review in each mode against llmtest and
// compares what it did and wrote with the goldens: the prompts of every
// call, the run id, the journal keys and the output files.
func TestGoldenReview(t *testing.T) {
	for i, m := range goldenModes {
		t.Run(m.name, func(t *testing.T) {
			goldenEnv(t)
			repo := goldenRepo(t)
			r := &responder{}
			// Every answer comes from the responder: nothing is left to
			// llmtest's schema instances, or to its random numbers (the
			// seed would fix them; no faults or jitter use them here).
			srv := llmtest.NewServer(llmtest.Config{Seed: 1, Rules: []llmtest.Rule{{Respond: r.respond}}})
			defer srv.Close()
			run := runGolden(t, i, srv)
			r.mu.Lock()
			unexpected := r.unexpected
			r.mu.Unlock()
			if len(unexpected) > 0 {
				t.Fatalf("the fake provider got calls it has no answer for:\n%s", strings.Join(unexpected, "\n"))
			}
			if res := run.out.Result; res.Partial() {
				t.Fatalf("the golden review is partial: %+v", res.Missing)
			}
			dir := filepath.Join(goldenRoot, m.name)
			prompts := renderPrompts(t, m.name, srv.Requests(), run.log.requests())
			checkGolden(t, filepath.Join(dir, "prompts.txt"), prompts,
				"The prompts of the review's calls changed: what the models are asked, and so every journal and cache key.")
			checkGolden(t, filepath.Join(dir, "run.txt"), renderRun(run, repo),
				"The run id, nonce or plan of the review changed: a re-run of an interrupted review would no longer find its run directory.")
			journal := run.files["journal.jsonl"]
			checkKeys(t, filepath.Join(dir, "keys.txt"), journalKeys(t, journal))
			// The journal holds what this invocation sent, every call once.
			if recs := journalRecords(t, journal); len(recs) != run.out.Result.Usage.Calls || len(recs) != len(run.log.requests()) {
				t.Errorf("the journal holds %d records; the run made %d calls, %d of them through the stack", len(recs), run.out.Result.Usage.Calls, len(run.log.requests()))
			}
			checkOutputs(t, filepath.Join(dir, "out"), run.files, repo)
			if *updateRundir {
				writeRundir(t, filepath.Join(goldenRoot, "rundir", m.name), run.files)
			}
		})
	}
}

// TestGoldenReplay replays a run directory that today's code wrote and
// that is committed under testdata/golden/rundir: the journal, run.json
// and the outputs of the golden review. The provider fails every request,
// so the review completes only if every call is answered from the
// journal: that is what resuming an interrupted review, or re-running a
// finished one, does for users whose run directories were written by an
// earlier version of sot. The outputs must be the goldens'.
//
// A failure here after a change to the prompts, the request keys, the
// run id or run.json means existing users' runs would be paid for again
// (or refused). If that is intended, regenerate the run directories with
// go test ./review -run Golden -update -update-rundir, and say so in the
// change's notes.
func TestGoldenReplay(t *testing.T) {
	for i, m := range goldenModes {
		t.Run(m.name, func(t *testing.T) {
			goldenEnv(t)
			repo := goldenRepo(t)
			src := filepath.Join(goldenRoot, "rundir", m.name)
			committed := copyRundir(t, src, filepath.Join(repo, filepath.FromSlash(goldenOutputDir)))
			srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Fault: llmtest.Fault500}}})
			defer srv.Close()
			run := runGolden(t, i, srv)
			var state struct {
				RunID string `json:"run_id"`
			}
			if err := json.Unmarshal(committed["run.json"], &state); err != nil {
				t.Fatalf("the committed run.json: %v", err)
			}
			if state.RunID != run.plan.RunID {
				t.Fatalf("the review's run id is now %s, the committed run's %s: a re-run of an existing user's review no longer finds its run directory "+
					"(with the default output directory, .sot/reviews/<run-id>, it looks elsewhere; here it finds another run's record and starts afresh), "+
					"so every call is sent and paid for again.\nIf that is intended, regenerate the run directories with: %s", run.plan.RunID, state.RunID, regenerateRundir)
			}
			if n := srv.Count(); n > 0 {
				var labels []string
				for _, r := range run.log.requests() {
					labels = append(labels, r.Label)
				}
				// What the review made of the failed calls is of no interest.
				t.Fatalf("the replay sent %d requests to the provider (%s): their answers were not found in the committed journal %s/journal.jsonl, "+
					"so an existing user's run of this review would send them again and pay for them twice.\n"+
					"If breaking the resumes of existing runs is intended, regenerate the run directories with: %s", n, strings.Join(labels, ", "), relGolden(src), regenerateRundir)
			}
			res := run.out.Result
			if len(res.Missing) > 0 {
				t.Errorf("the replayed review is missing parts: %+v", res.Missing)
			}
			if recs := journalRecords(t, committed["journal.jsonl"]); res.Usage.Replayed != len(recs) || res.Usage.NewCalls != 0 {
				t.Errorf("%d calls replayed and %d sent; the journal holds %d answers, every one of which should be replayed", res.Usage.Replayed, res.Usage.NewCalls, len(recs))
			}
			// Nothing new was journaled, and run.json is the committed one:
			// the same run, created when it was, with the same MAC.
			for _, name := range []string{"journal.jsonl", "run.json"} {
				if diff := lineDiff(string(committed[name]), string(run.files[name])); diff != "" {
					t.Errorf("the replay changed %s (-committed +now):\n%s", name, diff)
				}
			}
			checkOutputs(t, filepath.Join(goldenRoot, m.name, "replay"), run.files, repo)
			checkReplayMatchesFresh(t, filepath.Join(goldenRoot, m.name), run.files, repo)
		})
	}
}

// goldenRun is one fixed review and what it left behind.
type goldenRun struct {
	out   *review.Outcome
	plan  *review.Plan
	log   *callLog
	files map[string][]byte // the output directory, by name
}

func runGolden(t *testing.T, mode int, srv *llmtest.Server) *goldenRun {
	t.Helper()
	log := &callLog{}
	o := goldenOptions(t, mode, srv.OpenAIBaseURL(), log)
	ctx := context.Background()
	plan, err := review.Prepare(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	out, err := review.Execute(ctx, plan, o)
	if err != nil {
		t.Fatal(err)
	}
	// The machine formats, as the CLI asks for them.
	if _, err := review.WriteFormats(plan.OutputDir, out.Result, []string{"json", "sarif"}, goldenVersion); err != nil {
		t.Fatal(err)
	}
	return &goldenRun{out: out, plan: plan, log: log, files: readDir(t, plan.OutputDir)}
}

// promptCall is one model call: the request as the provider received it,
// and as the stack sent it (with its label and key).
type promptCall struct {
	rec *llmtest.Recorded
	req *llm.Request
}

// wireSignature is what identifies a call on both sides of the wire.
func wireSignature(model, system string, msgs [][2]string, schema string, temperature *float64, maxTokens int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\x00%s\x00%s\x00%d\x00", model, schema, fmtTemperature(temperature), maxTokens)
	b.WriteString(system)
	for _, m := range msgs {
		b.WriteString("\x00" + m[0] + "\x00" + m[1])
	}
	return b.String()
}

func fmtTemperature(t *float64) string {
	if t == nil {
		return "unset"
	}
	return fmt.Sprint(*t)
}

// renderPrompts writes every call the provider received: its label and
// key (from the stack's request it matches), model, schema, temperature,
// max tokens, system prompt and messages, sorted by label. Long texts
// that calls share (the shared prefix of the specialists' prompts, and
// a debate round's prompt, which extends the first round's) are written
// once and referred to.
func renderPrompts(t *testing.T, mode string, recs []llmtest.Recorded, reqs []*llm.Request) []byte {
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
		sig := wireSignature(ref.Name, q.System, msgs, schema, q.Temperature, q.MaxTokens)
		pending[sig] = append(pending[sig], q)
	}
	var calls []promptCall
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
		sig := wireSignature(rec.Model, rec.System, msgs, rec.SchemaName, rec.Temperature, rec.MaxTokens)
		q := pending[sig]
		if len(q) == 0 {
			t.Errorf("the provider got a call the stack did not send as such (schema %q, %d bytes of system prompt): a retry, or a request changed on its way", rec.SchemaName, len(rec.System))
			continue
		}
		calls = append(calls, promptCall{rec, q[0]})
		pending[sig] = q[1:]
	}
	for _, q := range pending {
		for _, r := range q {
			t.Errorf("the stack sent %s, but the provider never received it", r.Label)
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
	fmt.Fprintf(&b, "# The prompts of every model call of the golden %s review, as the fake provider received them,\n", mode)
	fmt.Fprintf(&b, "# with the label and journal key of each, sorted by label. Texts several calls share are written once.\n")
	fmt.Fprintf(&b, "# Regenerate with: %s\n\ncalls: %d\n", regenerate, len(calls))
	// The shared prefixes, named in the order of the calls holding them.
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
		sum := sha256.Sum256(rec.Schema)
		fmt.Fprintf(&b, "schema: %s (strict %v, %d bytes, sha256 %s)\n", rec.SchemaName, rec.Strict, len(rec.Schema), hex.EncodeToString(sum[:8]))
		fmt.Fprintf(&b, "temperature: %s\nmax_tokens: %d\nstream: %v\n", fmtTemperature(rec.Temperature), rec.MaxTokens, rec.Stream)
		// The longest text of another call that this system prompt
		// extends, or else its shared prefix.
		base, baseName := "", ""
		for _, o := range calls {
			if o.req != req && len(o.rec.System) < len(rec.System) && len(o.rec.System) > len(base) && strings.HasPrefix(rec.System, o.rec.System) {
				base, baseName = o.rec.System, "the system prompt of "+o.req.Label
			}
		}
		if n := req.SharedPrefix; n > 0 {
			fmt.Fprintf(&b, "shared_prefix: %d bytes (%s)\n", n, prefixes[req.System[:n]])
			if len(base) <= n {
				base, baseName = req.System[:n], "shared prefix "+prefixes[req.System[:n]]
			}
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

// renderRun writes what the review decided and produced besides its
// files: the run id (the name a re-run finds its directory and journal
// by), the nonce and seed, the plan's tasks and the outcome.
func renderRun(run *goldenRun, repo string) []byte {
	p, out := run.plan, run.out
	var b strings.Builder
	fmt.Fprintf(&b, "# The run of the golden review. Regenerate with: %s\n", regenerate)
	fmt.Fprintf(&b, "run_id: %s\nnonce: %s\nseed: %d\n", p.RunID, p.Nonce, p.Seed)
	fmt.Fprintf(&b, "output_dir: %s\nmode: %s\ninteraction_mode: %s\n", p.OutputDir, p.Mode, out.Result.Mode)
	fmt.Fprintf(&b, "triage_model: %s\nprompt_budget: %d\n", p.TriageModel, p.PromptBudget)
	for _, s := range p.Specialists {
		fmt.Fprintf(&b, "specialist: %s (%s)\n", s.ID, p.Models[s.ID])
	}
	fmt.Fprintf(&b, "lenses: %s\n", cmpOr(strings.Join(p.LensIDs(), ", "), "(none)"))
	for _, task := range p.Tasks {
		fmt.Fprintf(&b, "task: %s (group %s, model %s)\n", task.ID, task.Group, task.Request.Model)
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	fmt.Fprintf(&b, "rounds: %d\ncompleted: %d\nstopped: %v\n", out.Result.Rounds, out.Completed, out.Stopped)
	u := out.Result.Usage
	fmt.Fprintf(&b, "calls: %d (new %d, replayed %d)\n", u.Calls, u.NewCalls, u.Replayed)
	for _, f := range out.Files {
		fmt.Fprintf(&b, "file: %s\n", f)
	}
	for _, r := range out.Reports {
		fmt.Fprintf(&b, "report: %s (lens %s, %d findings)\n", r.Specialist, cmpOr(r.Lens, "(none)"), len(r.Findings))
	}
	return []byte(replacePaths(b.String(), repo))
}

func cmpOr(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

// checkGolden compares got with the golden file at path, or rewrites it
// under -update.
func checkGolden(t *testing.T, path string, got []byte, why string) {
	t.Helper()
	if *updateGolden {
		writeFile(t, path, got)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("no golden %s (%v); generate it with: %s", relGolden(path), err, regenerate)
		return
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from its golden (-golden +now):\n%s\n%s\nIf the change is intended, regenerate the goldens with: %s",
			relGolden(path), lineDiff(string(want), string(got)), why, regenerate)
	}
}

// lineDiff shows the lines that differ between two texts, with their
// neighbours elided.
func lineDiff(want, got string) string {
	return cmp.Diff(strings.SplitAfter(want, "\n"), strings.SplitAfter(got, "\n"))
}

func relGolden(path string) string {
	if rel, err := filepath.Rel(filepath.Dir(filepath.Dir(goldenRoot)), path); err == nil {
		return filepath.ToSlash(rel)
	}
	return path
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// journalRecord is the part of a journal line the tests read.
type journalRecord struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	Model string `json:"model"`
}

func journalRecords(t *testing.T, journal []byte) []journalRecord {
	t.Helper()
	var recs []journalRecord
	for i, line := range bytes.Split(bytes.TrimSpace(journal), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r journalRecord
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("journal line %d: %v", i+1, err)
		}
		recs = append(recs, r)
	}
	return recs
}

// journalKeys lists "label model key" for every journal record, sorted:
// the records are appended as calls finish, in no fixed order.
func journalKeys(t *testing.T, journal []byte) []string {
	t.Helper()
	var lines []string
	for _, r := range journalRecords(t, journal) {
		lines = append(lines, fmt.Sprintf("%s %s %s", r.Label, r.Model, r.Key))
	}
	sort.Strings(lines)
	return lines
}

// checkKeys compares the journal keys with their golden, explaining what
// a change breaks.
func checkKeys(t *testing.T, path string, got []string) {
	t.Helper()
	header := "# The journal keys (llm.Request.Key) of every call of the golden review: label, model, key.\n# Regenerate with: " + regenerate + "\n"
	text := header + strings.Join(got, "\n") + "\n"
	if *updateGolden {
		writeFile(t, path, []byte(text))
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("no golden %s (%v); generate it with: %s", relGolden(path), err, regenerate)
		return
	}
	var want []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.HasPrefix(l, "#") {
			want = append(want, l)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		gotKeys := map[string]bool{}
		for _, l := range got {
			gotKeys[l[strings.LastIndexByte(l, ' ')+1:]] = true
		}
		changed := 0
		for _, l := range want {
			if !gotKeys[l[strings.LastIndexByte(l, ' ')+1:]] {
				changed++
			}
		}
		t.Errorf("THE JOURNAL AND CACHE KEYS CHANGED: %d of the %d keys in %s are gone (-golden +now):\n%s\n"+
			"A call's key (llm.Request.Key: the model, system prompt, shared prefix, messages, temperature, max tokens and schema) addresses its answer "+
			"in a run's journal and in the response cache. With new keys, existing users' interrupted or finished reviews no longer resume from their "+
			"journals (every call is sent and paid for again) and their response caches miss. A renamed prompt heading, or any change to a prompt's "+
			"text, does this. If it is intended, say so in the change, and regenerate the goldens with: %s (and the committed run directories with: %s)",
			changed, len(want), relGolden(path), diff, regenerate, regenerateRundir)
	}
}

// outputNames are the files of a run's output directory that are pinned:
// all but the journal (its records carry times, latencies and the
// provider's request ids, and come in the order calls finished; its keys
// are pinned by keys.txt and its replay by TestGoldenReplay), the lock
// (it holds the process id) and the .gitignore (checked here: git would
// ignore a committed copy's directory).
func outputNames(t *testing.T, files map[string][]byte) []string {
	t.Helper()
	var names []string
	for name, b := range files {
		switch name {
		case "journal.jsonl", "run.lock":
		case ".gitignore":
			if string(b) != "*\n" {
				t.Errorf("the output directory's .gitignore is %q, want %q", b, "*\n")
			}
		default:
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// checkOutputs compares the run's output files, normalised, with the
// goldens in dir, and the set of files with the goldens'.
func checkOutputs(t *testing.T, dir string, files map[string][]byte, repo string) {
	t.Helper()
	names := outputNames(t, files)
	if *updateGolden {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	} else {
		entries, _ := os.ReadDir(dir)
		var want []string
		for _, e := range entries {
			want = append(want, e.Name())
		}
		if diff := cmp.Diff(want, names); diff != "" {
			t.Errorf("the run wrote other files than the goldens in %s (-golden +now):\n%s\nIf the change is intended, regenerate the goldens with: %s", relGolden(dir), diff, regenerate)
		}
	}
	for _, name := range names {
		checkGolden(t, filepath.Join(dir, name), normalize(t, name, files[name], repo),
			"The review's output "+name+" changed: users, CI integrations and later sot invocations (--resolve, moderator mode) read it.")
	}
}

// checkReplayMatchesFresh compares the outputs of a replay with the
// goldens of a fresh run of the same review: they must be the same
// review. Only the usage differs, as it must: the replay sent nothing and
// says so.
func checkReplayMatchesFresh(t *testing.T, dir string, files map[string][]byte, repo string) {
	t.Helper()
	for _, name := range outputNames(t, files) {
		fresh, err := os.ReadFile(filepath.Join(dir, "out", name))
		if err != nil {
			t.Errorf("the replay wrote %s, which a fresh run does not: %v", name, err)
			continue
		}
		replay := normalize(t, name, files[name], repo)
		if bytes.Equal(fresh, replay) {
			continue
		}
		switch {
		case strings.HasSuffix(name, ".json"):
			var f, r map[string]any
			if err := json.Unmarshal(fresh, &f); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(replay, &r); err != nil {
				t.Fatal(err)
			}
			fu, _ := f["usage"].(map[string]any)
			ru, _ := r["usage"].(map[string]any)
			delete(f, "usage")
			delete(r, "usage")
			if diff := cmp.Diff(f, r); diff != "" {
				t.Errorf("the replay's %s is not the fresh run's review (-fresh +replay):\n%s", name, diff)
			}
			for _, k := range []string{"calls", "input_tokens", "cached_input_tokens", "output_tokens", "cost_usd"} {
				if fu[k] != ru[k] {
					t.Errorf("the replay's %s reports usage.%s %v, the fresh run %v: a replay accounts for the calls it replayed", name, k, ru[k], fu[k])
				}
			}
		case name == "REVIEW-SYNTHESIS.md":
			if diff := lineDiff(dropUsageLine(string(fresh)), dropUsageLine(string(replay))); diff != "" {
				t.Errorf("the replay's %s is not the fresh run's review (-fresh +replay):\n%s", name, diff)
			}
		default:
			t.Errorf("the replay's %s is not the fresh run's (-fresh +replay):\n%s", name, lineDiff(string(fresh), string(replay)))
		}
	}
}

func dropUsageLine(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "- Usage: ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

var (
	createdRe = regexp.MustCompile(`(?m)^  "created": "[^"]*"`)
	macRe     = regexp.MustCompile(`(?m),\n  "mac": "([0-9a-f]*)"`)
	wallMSRe  = regexp.MustCompile(`"wall_ms": \d+`)
	costRe    = regexp.MustCompile(`"((?:new_)?cost_usd)": ([0-9.eE+-]+)`)
	wallRe    = regexp.MustCompile(`wall time [0-9][0-9a-zµ.]*`)
)

// normalize replaces, in an output file, what differs from one run of
// the same review to the next, and nothing else (no id, hash, count or
// text of a prompt):
//
//   - run.json "created": the wall-clock time the run started. The
//     golden holds the zero time.
//   - run.json "mac": an HMAC-SHA256 under the user's key over the
//     record, "created" included. It is first checked against the fixed
//     key (a MAC that does not verify fails the test: the run could not
//     be resumed), then recomputed over the normalised record, so the
//     golden still pins how the MAC is made.
//   - "wall_ms" (result.json, review.json) and "wall time" in
//     REVIEW-SYNTHESIS.md: how long the run took.
//   - "cost_usd" and "new_cost_usd", rounded to 1e-9 dollars: the meter
//     adds each call's cost as the call finishes, and floating-point sums
//     in another order differ in the last bits (0.074748 against
//     0.07474800000000001).
//   - the repository's absolute path, a temporary directory, should it
//     appear: "$REPO".
func normalize(t *testing.T, name string, b []byte, repo string) []byte {
	t.Helper()
	s := replacePaths(string(b), repo)
	switch name {
	case "run.json":
		key, err := os.ReadFile(filepath.Join(goldenRoot, "nonce.key"))
		if err != nil {
			t.Fatal(err)
		}
		m := macRe.FindStringSubmatch(s)
		if m == nil {
			t.Errorf("run.json carries no MAC: sot would not resume the run\n%s", s)
			return []byte(s)
		}
		if want := runMAC(t, key, s); m[1] != want {
			t.Errorf("run.json's MAC %s does not verify with the user's key (want %s): sot would not trust the run's record, and would neither resume nor moderate it", m[1], want)
		}
		s = createdRe.ReplaceAllString(s, `  "created": "0001-01-01T00:00:00Z"`)
		s = macRe.ReplaceAllString(s, ",\n  \"mac\": \""+runMAC(t, key, s)+"\"")
	case "result.json", "review.json":
		s = wallMSRe.ReplaceAllString(s, `"wall_ms": 0`)
		s = costRe.ReplaceAllStringFunc(s, func(m string) string {
			sub := costRe.FindStringSubmatch(m)
			v, err := strconv.ParseFloat(sub[2], 64)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				return m
			}
			r := strings.TrimRight(strconv.FormatFloat(v, 'f', 9, 64), "0")
			return fmt.Sprintf(`"%s": %s`, sub[1], strings.TrimSuffix(r, "."))
		})
	case "REVIEW-SYNTHESIS.md":
		s = wallRe.ReplaceAllString(s, "wall time (normalised)")
	}
	return []byte(s)
}

// runMAC computes run.json's MAC as sot makes it, independently of sot's
// code: HMAC-SHA256 under the user's key over "sot-run-state-v1\n" and the
// record as compact JSON without its "mac" field.
func runMAC(t *testing.T, key []byte, record string) string {
	t.Helper()
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(macRe.ReplaceAllString(record, ""))); err != nil {
		t.Fatalf("run.json: %v", err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("sot-run-state-v1\n"))
	m.Write(compact.Bytes())
	return hex.EncodeToString(m.Sum(nil))
}

// replacePaths writes the repository's absolute path as $REPO.
func replacePaths(s, repo string) string {
	if real, err := filepath.EvalSymlinks(repo); err == nil && real != repo {
		s = strings.ReplaceAll(s, real, "$REPO")
	}
	return strings.ReplaceAll(s, repo, "$REPO")
}

// writeRundir commits a run directory of today's code: everything the run
// wrote but its lock and its .gitignore (git would ignore the directory
// holding it; copyRundir puts it back).
func writeRundir(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if name != "run.lock" && name != ".gitignore" {
			writeFile(t, filepath.Join(dir, name), b)
		}
	}
}

// copyRundir copies a committed run directory into a repository, where
// the run wrote it, with the .gitignore the run wrote there, and returns
// the committed files.
func copyRundir(t *testing.T, src, dst string) map[string][]byte {
	t.Helper()
	files := readDir(t, src)
	if len(files) == 0 {
		t.Fatalf("no committed run directory in %s; write one with: %s", src, regenerateRundir)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dst, ".gitignore"), []byte("*\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return files
}
