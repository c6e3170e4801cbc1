package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sotlabs/sot/cli/mcpcmd"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/debate/graph"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/persona"
	"github.com/sotlabs/sot/review"
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
	prompts, err := cs.ListPrompts(context.Background(), nil)
	if err != nil || len(prompts.Prompts) != 3 {
		t.Fatalf("prompts: %v %v", prompts, err)
	}
	p, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "ask", Arguments: map[string]string{"question": "Why did billing move?"}})
	if err != nil || !strings.Contains(p.Messages[0].Content.(*mcp.TextContent).Text, "Why did billing move?") {
		t.Errorf("the ask prompt: %v %v", p, err)
	}
	if !slices.Contains(o.Files, filepath.Join(o.OutputDir, "REVIEW-SYNTHESIS.md")) {
		t.Errorf("files %v lack the synthesis's path", o.Files)
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
	// A client that gives up waiting leaves the run going.
	short, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, err := second.CallTool(short, &mcp.CallToolParams{Name: "run_result", Arguments: map[string]any{"run_id": o.RunID, "wait": true}})
	cancel()
	if err == nil {
		t.Fatal("run_result with wait returned before the run could end")
	}
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

// waitForJournaledCall waits (a minute at most) until the run's journal
// holds a specialist's answer.
func waitForJournaledCall(t *testing.T, journal string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for b, _ := os.ReadFile(journal); !strings.Contains(string(b), `"label":"review/`); b, _ = os.ReadFile(journal) {
		if time.Now().After(deadline) {
			t.Fatal("the run journaled no call in a minute")
		}
		time.Sleep(10 * time.Millisecond) // polling, not synchronisation
	}
}

// notPaidAgain fails when a specialist call the journal held before a run
// stopped was sent again; one in flight then is sent once more.
func notPaidAgain(t *testing.T, srv *llmtest.Server, journaled []byte) {
	t.Helper()
	for sig, n := range sentPerSpecialist(srv) {
		label := "review/" + strings.TrimSuffix(sig, "/")
		if n > 1 && strings.Contains(string(journaled), `"label":"`+label+`"`) {
			t.Errorf("%s had finished before the run stopped but was sent %d times", label, n)
		}
	}
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
	waitForJournaledCall(t, journal)
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
	notPaidAgain(t, srv, journaled)
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
	if err := syscall.Mkfifo(filepath.Join(repo, "pipe.md"), 0o644); err != nil {
		t.Fatal(err)
	}
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
		{"review", map[string]any{"specialist_models": "security=command:sh"}, "would run a program"},
		{"review", map[string]any{"context_file": "../ctx.yaml"}, "outside the project"},
		{"review", map[string]any{"max_calls": -1}, "negative"},
		{"ask", map[string]any{"question": "why?", "paths": []string{"../../home"}}, "outside the project"},
		{"ask", map[string]any{}, "question"},
		{"ask", map[string]any{"question": "  "}, "question is required"},
		{"debate", map[string]any{"passage_file": "/etc/hosts"}, "outside the project"},
		{"debate", map[string]any{"passage": "x", "graph": "../g.json"}, "outside the project"},
		{"debate", map[string]any{"passage_file": "pipe.md"}, "named pipe"}, // the run would wait on it forever
		{"review", map[string]any{"artifacts": []string{"pipe.md"}}, "named pipe"},
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

// A question, a debate into a graph, and the tools that read what they
// left: sources_search over the corpus index the question built,
// graph_query over the graph the debate grew, estimate, and resolve on a
// review's finding.
func TestMCPAskDebateAndLooks(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	repo := gitRepo(t)
	notes := map[string]string{
		"notes/billing.md": "# Billing migration\n\nWe moved invoices to the new ledger in March; the old exporter stays until June.\n",
		"notes/auth.md":    "# Login tokens\n\nSessions now expire after eight hours; refresh tokens rotate on use.\n",
		"texts/ants.txt":   "The ant gathers in summer what the winter will ask of it, and the grasshopper sings.\n",
	}
	for name, body := range notes {
		os.MkdirAll(filepath.Join(repo, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(repo, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The answer stands on its source: the reading quotes it and the
	// answer's sentence cites the reading.
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{
		{System: "You answer a question from one knowledge source", JSON: map[string]any{"addresses": true,
			"summary": "Invoices moved to the new ledger in March.",
			"points":  []any{map[string]any{"point": "Invoices moved to the new ledger in March.", "quote": "We moved invoices to the new ledger in March"}}}},
		{System: "You write the answer to a question", JSON: map[string]any{"tensions": []any{},
			"sentences": []any{map[string]any{"text": "Invoices moved to the new ledger in March.", "answers": []string{"A1"}, "quote": ""}}}},
		// A finding of the review, to resolve.
		{System: "You are the security specialist", JSON: map[string]any{"examined": "app.go", "findings": []any{map[string]any{
			"finding": "Add returns b alone for a negative a.", "severity": "should-fix", "confidence": "HIGH", "category": "logic",
			"grounds": "app.go:4-6 returns b when a < 0", "file": "app.go", "start_line": 4, "end_line": 6, "section": "",
			"warrant": "A negative addend is dropped.", "rebuttal_conditions": "Negative input is impossible.", "suggested_verification": "Add(-1, 2)", "perspective": ""}}}},
		{System: "triage lead", JSON: map[string]any{"clusters": []any{}, "narrative": ""}},
	}})
	defer srv.Close()
	s := mcpServer(t, repo, srv, nil)
	cs := connect(t, s, nil)

	// estimate plans and pays nothing.
	res, err := callTool(cs, "estimate", map[string]any{"scenario": "review", "review": reviewArgs}, nil)
	if err != nil || res.IsError {
		t.Fatalf("estimate: %v %s", err, text(res))
	}
	if !strings.Contains(text(res), `"cost_usd"`) || srv.Count() != 0 {
		t.Errorf("estimate: %s; %d calls reached the model", text(res), srv.Count())
	}

	a := call(t, cs, "ask", map[string]any{"question": "When did the billing migration move invoices to the ledger?", "paths": []string{"notes"}, "wait": true}, nil)
	if a.Verdict != "ok" || !slices.Contains(a.Outputs, "sot://runs/"+a.RunID+"/ANSWER.md") {
		t.Fatalf("ask: %+v\n%s", a, s.Jobs.Log(a.RunID, 4096))
	}
	found, err := callTool(cs, "sources_search", map[string]any{"query": "billing ledger invoices"}, nil)
	if err != nil || found.IsError || !strings.Contains(text(found), "notes/billing.md") {
		t.Errorf("sources_search after the question: %v %s", err, text(found))
	}

	d := call(t, cs, "debate", map[string]any{"passage_file": "texts/ants.txt", "graph": "graph.json", "rounds": 1, "branch_rounds": 1, "observers": "none", "wait": true}, nil)
	if d.Verdict != "ok" {
		t.Fatalf("debate: %+v\n%s", d, s.Jobs.Log(d.RunID, 4096))
	}
	b, _ := os.ReadFile(filepath.Join(repo, "graph.json"))
	g, err := graph.Parse(b)
	if err != nil || len(g.Nodes) == 0 {
		t.Fatalf("the debate grew no graph: %v", err)
	}
	nodes, err := callTool(cs, "graph_query", map[string]any{"graph": "graph.json", "text": g.Nodes[0].Topic}, nil)
	if err != nil || nodes.IsError || !strings.Contains(text(nodes), `"id":"`+g.Nodes[0].ID+`"`) {
		t.Errorf("graph_query for the topic of %s: %v %s", g.Nodes[0].ID, err, text(nodes))
	}
	if msg := toolError(t, cs, "graph_query", map[string]any{"graph": "../graph.json", "text": "x"}); !strings.Contains(msg, "outside the project") {
		t.Errorf("graph_query out of the project: %s", msg)
	}

	r := call(t, cs, "review", with(reviewArgs, "wait", true), nil)
	run, err := review.LoadRun(filepath.Join(repo, r.OutputDir))
	if err != nil || len(run.Result.Items) == 0 {
		t.Fatalf("the review has no finding to resolve: %v", err)
	}
	item := run.Result.Items[0].ID
	if msg := toolError(t, cs, "resolve", map[string]any{"run_id": r.RunID, "finding": item, "status": "dismissed"}); !strings.Contains(msg, "needs a reason") {
		t.Errorf("a dismissal without a reason: %s", msg)
	}
	if msg := toolError(t, cs, "resolve", map[string]any{"run_id": r.RunID, "finding": "Z99", "status": "accepted"}); !strings.Contains(msg, item) {
		t.Errorf("an unknown finding: %s; want the valid ids listed", msg)
	}
	res, err = callTool(cs, "resolve", map[string]any{"run_id": r.RunID, "finding": item, "status": "dismissed", "reason": "behind the gateway"}, nil)
	if err != nil || res.IsError {
		t.Fatalf("resolve: %v %s", err, text(res))
	}
	run, _ = review.LoadRun(filepath.Join(repo, r.OutputDir))
	if o := run.Result.Items[0].Outcome; o == nil || o.Status != review.Dismissed || o.Reason != "behind the gateway" {
		t.Errorf("the review's finding after resolve: %+v", o)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, r.OutputDir, "resolutions.jsonl")); !strings.Contains(string(b), `"by":"mcp"`) {
		t.Errorf("resolutions.jsonl does not say the decision came through MCP: %s", b)
	}
	// The project that holds the review keeps the dismissal, whatever
	// directory the server runs in.
	if b, _ := os.ReadFile(filepath.Join(repo, ".sot", "resolutions.jsonl")); !strings.Contains(string(b), `"reason":"behind the gateway"`) {
		t.Errorf("the project's resolutions lack the dismissal: %q", b)
	}
}

// headerTransport adds an Authorization header to every request.
type headerTransport struct{ auth string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", h.auth)
	return http.DefaultTransport.RoundTrip(r)
}

// sot mcp --http: off loopback it needs a token; with a token set, a
// request without it is refused, and a client that sends it gets the tools
// and a review's outcome over streamable HTTP.
func TestMCPOverHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	repo := gitRepo(t)
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()

	out, err := sotCmd(repo, srv, "mcp", "--http", "0.0.0.0:0").CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "not a loopback address: set a bearer token in SOT_MCP_TOKEN") {
		t.Fatalf("sot mcp off loopback without a token: exit %d, %s", code, out)
	}

	cmd := sotCmd(repo, srv, "mcp", "--http", "127.0.0.1:0")
	cmd.Env = append(cmd.Env, "SOT_MCP_TOKEN=s3cret-token")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := regexp.MustCompile(`serving MCP on (http://\S+)`).FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	var endpoint string
	select {
	case endpoint = <-addr:
	case <-time.After(30 * time.Second):
		t.Fatal("sot mcp --http never said where it serves")
	}

	resp, err := http.Post(endpoint, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a request without the token: %s", resp.Status)
	}

	c := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "v0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint,
		HTTPClient: &http.Client{Transport: headerTransport{"Bearer s3cret-token"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	o := call(t, cs, "review", with(reviewArgs, "wait", true), nil)
	if o.Verdict != "ok" || o.Calls != srv.Count() {
		t.Fatalf("a review over HTTP: %+v; the model saw %d calls", o, srv.Count())
	}
	if got := readResource(t, cs, "sot://runs/"+o.RunID+"/REVIEW-SYNTHESIS.md"); !strings.HasPrefix(got, "# ") {
		t.Errorf("the synthesis over HTTP starts %.40q", got)
	}
}

// exitCode is a finished command's exit code.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// A server started while another's run is under way follows that run
// instead of starting it again, and learns how it ended, its exit code
// included, from what the run's command wrote.
func TestMCPFollowsAnotherServersRun(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	repo := gitRepo(t)
	srv := llmtest.NewServer(llmtest.Config{Latency: 300 * time.Millisecond, Rules: []llmtest.Rule{
		{System: "You are the security specialist", JSON: map[string]any{"examined": "app.go", "findings": []any{map[string]any{
			"finding": "Add returns b alone for a negative a.", "severity": "must-fix", "confidence": "HIGH", "category": "logic",
			"grounds": "app.go:4-6 returns b when a < 0", "file": "app.go", "start_line": 4, "end_line": 6, "section": "",
			"warrant": "A negative addend is dropped.", "rebuttal_conditions": "Negative input is impossible.", "suggested_verification": "Add(-1, 2)", "perspective": ""}}}},
	}})
	defer srv.Close()
	// The run a server started before it died: its command goes on, and
	// its record says running.
	id := "review-0123456789"
	dir := filepath.Join(".sot", "reviews", id)
	jobs := filepath.Join(repo, ".sot", "mcp", "jobs")
	os.MkdirAll(jobs, 0o755)
	args := []string{"review", "--output-dir=" + dir, "--interactive=false", "--specialists=security,testing", "--perspectives=none", "--fail-on=must-fix", "--"}
	cmd := sotCmd(repo, srv, args...)
	cmd.Env = append(cmd.Env, "SOT_EXIT_FILE="+filepath.Join(jobs, id+".exit"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	rec, _ := json.Marshal(mcpcmd.Job{ID: id, Scenario: "review", Args: args, Dir: dir, Created: time.Now().UTC(), State: mcpcmd.JobRunning, PID: cmd.Process.Pid, Starts: 1})
	os.WriteFile(filepath.Join(jobs, id+".json"), rec, 0o644)
	waitForRequests(t, srv, 1)
	o := mcpcmd.Outcome{RunID: id}

	second := mcpServer(t, repo, srv, nil)
	if resumed, err := second.Jobs.Resume(); err != nil || len(resumed) > 0 {
		t.Fatalf("the second server started the first's running run again: %v %v", resumed, err)
	}
	res := call(t, connect(t, second, nil), "run_result", map[string]any{"run_id": o.RunID, "wait": true}, nil)
	if res.Verdict != "fail" || res.ExitCode == nil || *res.ExitCode != 1 {
		t.Fatalf("the outcome the second server saw: %+v", res)
	}
	if n := srv.Count(); n != res.Calls {
		t.Errorf("the model saw %d calls, the run made %d", n, res.Calls)
	}
}

// Over stdio, a client's leaving ends the server but not its runs: a run
// started without waiting goes on, and the server the next client starts
// finds it by id and returns its outcome, every call paid once.
func TestMCPOverStdioRunOutlivesTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	repo := gitRepo(t)
	srv := llmtest.NewServer(llmtest.Config{Latency: 400 * time.Millisecond})
	defer srv.Close()
	stdio := func() *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "stdio-client", Version: "v0"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: sotCmd(repo, srv, "mcp")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	first := stdio()
	o := call(t, first, "review", reviewArgs, nil)
	waitForRequests(t, srv, 1)
	if err := first.Close(); err != nil {
		t.Logf("closing the first session: %v", err)
	}

	second := stdio()
	defer second.Close()
	res := call(t, second, "run_result", map[string]any{"run_id": o.RunID, "wait": true}, nil)
	if res.Verdict != "ok" || res.Calls != srv.Count() {
		t.Fatalf("the run after its server left: %+v; the model saw %d calls", res, srv.Count())
	}
	paidOnceBySignature(t, srv)
}

// A server stopped with SIGTERM stops its runs as Ctrl-C stops a run; the
// next server resumes them by itself, and no call finished before is paid
// again.
func TestMCPStoppedServerResumesItsRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	repo := gitRepo(t)
	srv := llmtest.NewServer(llmtest.Config{Latency: 200 * time.Millisecond, LatencyJitter: time.Second})
	defer srv.Close()
	server := sotCmd(repo, srv, "mcp")
	c := mcp.NewClient(&mcp.Implementation{Name: "stdio-client", Version: "v0"}, nil)
	first, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: server}, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := call(t, first, "review", with(reviewArgs, "specialists", "security,testing,performance,maintainability"), nil)
	journal := filepath.Join(repo, o.OutputDir, "journal.jsonl")
	waitForJournaledCall(t, journal)
	server.Process.Signal(syscall.SIGTERM)
	// The server records the run it stopped before it exits; the client
	// closes only then, or its closing could end the server first.
	var rec mcpcmd.Job
	deadline := time.Now().Add(time.Minute)
	for rec.State != mcpcmd.JobInterrupted && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // polling, not synchronisation
		b, _ := os.ReadFile(filepath.Join(repo, ".sot", "mcp", "jobs", o.RunID+".json"))
		json.Unmarshal(b, &rec)
	}
	first.Close()
	if rec.State != mcpcmd.JobInterrupted || rec.Exit == nil || *rec.Exit != 130 {
		t.Fatalf("the run of a server stopped with SIGTERM: %+v", rec)
	}
	journaled, _ := os.ReadFile(journal)

	second, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-client", Version: "v0"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: sotCmd(repo, srv, "mcp")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	res := call(t, second, "run_result", map[string]any{"run_id": o.RunID, "wait": true}, nil)
	if res.Verdict != "ok" {
		t.Fatalf("the resumed run: %+v", res)
	}
	notPaidAgain(t, srv, journaled)
}
