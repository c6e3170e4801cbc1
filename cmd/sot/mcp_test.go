package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sotlabs/sot/cli/mcpcmd"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/persona"
)

// mcpServer is sot's MCP server for repo, whose runs are this test binary
// running as sot against srv; cfg is the user's configuration (nil: the
// defaults).
func mcpServer(t *testing.T, repo string, srv *llmtest.Server, cfg *config.Config) *mcpcmd.Server {
	t.Helper()
	if cfg == nil {
		d := config.Defaults()
		cfg = &d
	}
	lib, err := persona.Discover(persona.DefaultDirs(repo, filepath.Join(repo, ".config", "sot")))
	if err != nil {
		t.Fatal(err)
	}
	// The server reads the runs' records with the key the runs signed
	// them with, in the user cache directory they share.
	t.Setenv("XDG_CACHE_HOME", filepath.Join(repo, ".cache"))
	exe, _ := os.Executable()
	s, err := mcpcmd.New(mcpcmd.Config{Top: repo, Exe: exe, Env: sotEnv(repo, srv), Config: cfg, Library: lib, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Jobs.Interrupt()
		s.Jobs.Close()
	})
	return s
}

// progressLog keeps the progress notifications a client received.
type progressLog struct {
	mu   sync.Mutex
	seen []*mcp.ProgressNotificationParams
}

func (p *progressLog) handler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, req.Params)
}

func (p *progressLog) all() []*mcp.ProgressNotificationParams {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen)
}

// connect connects a client to s over an in-memory transport.
func connect(t *testing.T, s *mcpcmd.Server, progress *progressLog) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if progress != nil {
		opts.ProgressNotificationHandler = progress.handler
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, opts)
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := s.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and decodes its structured result into an Outcome; a
// tool error fails the test.
func call(t *testing.T, cs *mcp.ClientSession, name string, args any, progressToken any) mcpcmd.Outcome {
	t.Helper()
	res, err := callTool(cs, name, args, progressToken)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: the tool failed: %s", name, text(res))
	}
	var o mcpcmd.Outcome
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatalf("%s: %v in %s", name, err, b)
	}
	return o
}

func callTool(cs *mcp.ClientSession, name string, args any, progressToken any) (*mcp.CallToolResult, error) {
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if progressToken != nil {
		p.SetProgressToken(progressToken)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return cs.CallTool(ctx, p)
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// toolError calls a tool that must refuse its arguments and returns what
// it said.
func toolError(t *testing.T, cs *mcp.ClientSession, name string, args any) string {
	t.Helper()
	res, err := callTool(cs, name, args, nil)
	if err != nil {
		return err.Error()
	}
	if !res.IsError {
		t.Fatalf("%s %v: the tool accepted arguments it must refuse: %s", name, args, text(res))
	}
	return text(res)
}

func readResource(t *testing.T, cs *mcp.ClientSession, uri string) string {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	return res.Contents[0].Text
}

var reviewArgs = map[string]any{"perspectives": "none", "specialists": "security,testing", "seed": 42}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// A review through the server: the tools are listed, the review waits
// with progress notifications, and its synthesis is a resource whose text
// is the file the run wrote.
func TestMCPReview(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	repo := gitRepo(t)
	srv := llmtest.NewServer(llmtest.Config{Latency: 50 * time.Millisecond})
	defer srv.Close()
	s := mcpServer(t, repo, srv, nil)
	progress := &progressLog{}
	cs := connect(t, s, progress)

	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema == nil {
			t.Errorf("tool %s has no description or input schema", tool.Name)
		}
	}
	for _, want := range []string{"review", "ask", "debate", "run_status", "run_result", "run_cancel", "estimate"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}

	o := call(t, cs, "review", with(reviewArgs, "wait", true), "review-1")
	if o.State != mcpcmd.JobDone || o.Verdict != "ok" || o.ExitCode == nil || *o.ExitCode != 0 {
		t.Fatalf("review outcome %+v", o)
	}
	if o.Calls != srv.Count() || o.Calls == 0 {
		t.Errorf("the outcome counts %d calls; the model saw %d", o.Calls, srv.Count())
	}
	uri := "sot://runs/" + o.RunID + "/REVIEW-SYNTHESIS.md"
	if !slices.Contains(o.Outputs, uri) {
		t.Fatalf("outputs %v lack %s", o.Outputs, uri)
	}
	want, err := os.ReadFile(filepath.Join(repo, o.OutputDir, "REVIEW-SYNTHESIS.md"))
	if err != nil {
		t.Fatal(err)
	}
	if got := readResource(t, cs, uri); got != string(want) {
		t.Errorf("the resource differs from the file")
	}
	seen := progress.all()
	if len(seen) < 2 || !strings.Contains(seen[0].Message, o.RunID) {
		t.Fatalf("progress notifications %d, first %+v: want the run id first, then progress", len(seen), seen)
	}
	last := seen[len(seen)-1]
	if last.Total == 0 || last.Progress != last.Total {
		t.Errorf("the last progress notification is %v of %v (%q); want all calls done", last.Progress, last.Total, last.Message)
	}
	// The listed resources include the run's files, and reading outside
	// a run's directory finds nothing.
	list, err := cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
	}
	if !slices.Contains(uris, uri) || !slices.Contains(uris, "sot://personas/specialist/security") {
		t.Errorf("resources %v lack the synthesis or the security persona", uris)
	}
	for _, bad := range []string{"sot://runs/" + o.RunID + "/../../../app.go", "sot://runs/" + o.RunID + "/run.lock/x", "sot://runs/review-0000000000/REVIEW-SYNTHESIS.md"} {
		if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: bad}); err == nil {
			t.Errorf("%s was read", bad)
		}
	}
}

// A review started without waiting goes on when its client disconnects;
// another client finds it by id and gets its outcome, and every call was
// paid once.
func TestMCPReviewSurvivesTheClient(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	repo := gitRepo(t)
	srv := llmtest.NewServer(llmtest.Config{Latency: 300 * time.Millisecond})
	defer srv.Close()
	s := mcpServer(t, repo, srv, nil)
	first := connect(t, s, nil)
	o := call(t, first, "review", reviewArgs, nil)
	if o.State != mcpcmd.JobRunning || o.RunID == "" {
		t.Fatalf("review without wait: %+v; want a running run and its id at once", o)
	}
	waitForRequests(t, srv, 1)
	first.Close()

	progress := &progressLog{}
	second := connect(t, s, progress)
	st := call(t, second, "run_status", map[string]any{"run_id": o.RunID}, nil)
	if st.State != mcpcmd.JobRunning {
		t.Errorf("run_status after the first client left: %+v", st)
	}
	res := call(t, second, "run_result", map[string]any{"run_id": o.RunID, "wait": true}, "wait-1")
	if res.Verdict != "ok" || res.Calls != srv.Count() {
		t.Fatalf("run_result: %+v; the model saw %d calls", res, srv.Count())
	}
	if len(progress.all()) == 0 {
		t.Error("run_result with wait sent no progress notification")
	}
	paidOnceBySignature(t, srv)
}

// paidOnceBySignature fails when the model saw one specialist's call twice.
func paidOnceBySignature(t *testing.T, srv *llmtest.Server) {
	t.Helper()
	for sig, n := range sentPerSpecialist(srv) {
		if n > 1 {
			t.Errorf("%s was sent %d times", sig, n)
		}
	}
}

// sentPerSpecialist counts the specialist calls the model saw, by
// specialist and lens.
func sentPerSpecialist(srv *llmtest.Server) map[string]int {
	seen := map[string]int{}
	for _, r := range srv.Requests() {
		if m := signature.FindStringSubmatch(r.System); m != nil {
			seen[m[1]+"/"+m[2]]++
		}
	}
	return seen
}

// A server that went away with a run unfinished (its process killed with
// it) leaves the run to the next server, which resumes it from its
// journal: no call finished before is paid again.
func TestMCPRestartResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	repo := gitRepo(t)
	srv := llmtest.NewServer(llmtest.Config{Latency: 200 * time.Millisecond, LatencyJitter: time.Second})
	defer srv.Close()
	s := mcpServer(t, repo, srv, nil)
	cs := connect(t, s, nil)
	o := call(t, cs, "review", with(reviewArgs, "specialists", "security,testing,performance,maintainability"), nil)
	journal := filepath.Join(repo, o.OutputDir, "journal.jsonl")
	deadline := time.Now().Add(time.Minute)
	for {
		b, _ := os.ReadFile(journal)
		if strings.Contains(string(b), `"label":"review/`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run journaled nothing in a minute:\n%s", s.Jobs.Log(o.RunID, 4096))
		}
		time.Sleep(10 * time.Millisecond)
	}
	j, _, err := s.Jobs.Get(o.RunID)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(-j.PID, syscall.SIGKILL) // the machine's processes die with the server
	if _, err := s.Jobs.Wait(context.Background(), o.RunID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(repo, o.OutputDir, "REVIEW-SYNTHESIS.md")); err == nil {
		t.Fatal("the run finished before the kill; nothing was tested")
	}
	journaled, _ := os.ReadFile(journal)
	// The record still says running, as a server killed mid-run leaves it.
	rec := filepath.Join(repo, ".sot", "mcp", "jobs", o.RunID+".json")
	b, _ := os.ReadFile(rec)
	var fields map[string]any
	json.Unmarshal(b, &fields)
	fields["state"], fields["pid"] = mcpcmd.JobRunning, j.PID
	delete(fields, "exit_code")
	delete(fields, "ended")
	b, _ = json.Marshal(fields)
	os.WriteFile(rec, b, 0o644)

	s2 := mcpServer(t, repo, srv, nil)
	resumed, err := s2.Jobs.Resume()
	if err != nil || !slices.Equal(resumed, []string{o.RunID}) {
		t.Fatalf("resumed %v, %v; want %s", resumed, err, o.RunID)
	}
	res := call(t, connect(t, s2, nil), "run_result", map[string]any{"run_id": o.RunID, "wait": true}, nil)
	if res.Verdict != "ok" {
		t.Fatalf("after the restart: %+v\n%s", res, s2.Jobs.Log(o.RunID, 4096))
	}
	// A call finished before the kill is never sent again; one in flight
	// then is sent once more.
	for sig, n := range sentPerSpecialist(srv) {
		label := "review/" + strings.TrimSuffix(sig, "/")
		if n > 1 && strings.Contains(string(journaled), `"label":"`+label+`"`) {
			t.Errorf("%s had finished before the kill but was sent %d times\n%s\n%s", label, n, journaled, s2.Jobs.Log(o.RunID, 8192))
		}
	}
}

// run_cancel stops a run as Ctrl-C does: exit 130, and the run is not
// resumed by a later server.
func TestMCPCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	repo := gitRepo(t)
	srv := llmtest.NewServer(llmtest.Config{Latency: 2 * time.Second})
	defer srv.Close()
	s := mcpServer(t, repo, srv, nil)
	cs := connect(t, s, nil)
	o := call(t, cs, "review", reviewArgs, nil)
	waitForRequests(t, srv, 1)
	if c := call(t, cs, "run_cancel", map[string]any{"run_id": o.RunID}, nil); c.State != mcpcmd.JobCancelled {
		t.Fatalf("run_cancel: %+v", c)
	}
	res := call(t, cs, "run_result", map[string]any{"run_id": o.RunID, "wait": true}, nil)
	if res.Verdict != "cancelled" || res.ExitCode == nil || *res.ExitCode != 130 {
		t.Fatalf("a cancelled run: %+v", res)
	}
	if resumed, _ := mcpServer(t, repo, srv, nil).Jobs.Resume(); len(resumed) > 0 {
		t.Errorf("a later server resumed the cancelled run %v", resumed)
	}
}

// Tool arguments are untrusted: a path out of the project, a model that
// runs a program, and a budget above the user's are refused before any
// run starts.
func TestMCPRefusesWhatAToolCallMayNotChoose(t *testing.T) {
	repo := gitRepo(t)
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	cfg := config.Defaults()
	cfg.Budget.MaxCost = 1
	cs := connect(t, mcpServer(t, repo, srv, &cfg), nil)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"review", map[string]any{"paths": []string{"../outside"}}, "outside the project"},
		{"review", map[string]any{"artifacts": []string{"/etc/passwd"}}, "outside the project"},
		{"review", map[string]any{"specialists": "../../evil.md"}, "outside the project"},
		{"review", map[string]any{"model": "command:sh"}, "would run a program"},
		{"review", map[string]any{"mode": "multi-model", "models": []string{"openai:gpt-4.1", "command:sh"}}, "would run a program"},
		{"review", map[string]any{"max_cost": 5}, "never raise"},
		{"review", map[string]any{"max_calls": -1}, "negative"},
		{"ask", map[string]any{"question": "why?", "paths": []string{"../../home"}}, "outside the project"},
		{"ask", map[string]any{}, "question"},
		{"ask", map[string]any{"question": "  "}, "question is required"},
		{"debate", map[string]any{"passage_file": "/etc/hosts"}, "outside the project"},
		{"debate", map[string]any{"passage": "x", "graph": "../g.json"}, "outside the project"},
		{"run_status", map[string]any{"run_id": "../../etc/passwd"}, "not a run id"},
		{"estimate", map[string]any{"scenario": "rm"}, "review, ask or debate"},
	} {
		if got := toolError(t, cs, c.tool, c.args); !strings.Contains(got, c.want) {
			t.Errorf("%s %v: %q, want it to say %q", c.tool, c.args, got, c.want)
		}
	}
	if n := srv.Count(); n != 0 {
		t.Errorf("refused calls reached the model %d times", n)
	}
	entries, _ := os.ReadDir(filepath.Join(repo, ".sot", "mcp", "jobs"))
	if len(entries) != 0 {
		t.Errorf("refused calls started runs: %v", entries)
	}
}
