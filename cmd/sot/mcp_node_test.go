package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sotlabs/sot/llm/llmtest"
)

// nodeClientDir holds an MCP client written with the official TypeScript
// SDK; `npm ci` there installs the SDK the test needs.
const nodeClientDir = "testdata/mcp-node"

// nodeClient returns the path of node and the client's directory, skipping
// the test when either is missing unless SOT_REQUIRE_NODE=1 demands them.
func nodeClient(t *testing.T) (node, dir string) {
	t.Helper()
	dir, err := filepath.Abs(nodeClientDir)
	if err != nil {
		t.Fatal(err)
	}
	missing := func(what string) {
		t.Helper()
		msg := what + "; run `npm ci` in " + dir + " to run this test"
		if os.Getenv("SOT_REQUIRE_NODE") == "1" {
			t.Fatal(msg + " (SOT_REQUIRE_NODE=1 makes it required)")
		}
		t.Skip(msg)
	}
	node, err = exec.LookPath("node")
	if err != nil {
		missing("node is not on PATH (install Node.js 18 or later)")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		missing("the MCP TypeScript SDK is not installed in node_modules")
	}
	return node, dir
}

// nodeSummary is the line client.mjs prints.
type nodeSummary struct {
	Tools          []string `json:"tools"`
	RunID          string   `json:"run_id"`
	Verdict        string   `json:"verdict"`
	SynthesisBytes int64    `json:"synthesis_bytes"`
	Progress       int      `json:"progress"`
}

// A client that shares no code with sot, the official TypeScript SDK's,
// drives `sot mcp` over stdio: it lists the tools, starts a review, waits
// for it with run_result and reads its synthesis as a resource.
func TestMCPNodeClient(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	node, dir := nodeClient(t)
	repo := gitRepo(t)
	srv := llmtest.NewServer(llmtest.Config{Latency: 300 * time.Millisecond})
	defer srv.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), sotEnv(repo, srv)...)
	cmd.Env = append(cmd.Env, "SOT_MCP_COMMAND="+exe, "SOT_MCP_CWD="+repo)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client.mjs: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("stderr of the client and the server:\n%s", stderr.String())
	}

	var got nodeSummary
	line := bytes.TrimSpace(stdout.Bytes())
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatalf("the client's summary %q: %v", line, err)
	}
	t.Logf("summary: %s", line)
	for _, name := range []string{"review", "ask", "debate", "run_status", "run_result", "run_cancel", "estimate"} {
		if !slices.Contains(got.Tools, name) {
			t.Errorf("the client did not see the tool %s: %v", name, got.Tools)
		}
	}
	if got.Verdict != "ok" || got.RunID == "" || got.SynthesisBytes <= 0 {
		t.Fatalf("the client's outcome: %+v", got)
	}
	fi, err := os.Stat(filepath.Join(repo, ".sot", "reviews", got.RunID, "REVIEW-SYNTHESIS.md"))
	if err != nil {
		t.Fatalf("the synthesis the client read is not on disk: %v", err)
	}
	if fi.Size() != got.SynthesisBytes {
		t.Errorf("the synthesis on disk has %d bytes, the resource the client read %d", fi.Size(), got.SynthesisBytes)
	}
	// One specialist, one synthesis.
	if n := srv.Count(); n != 2 {
		t.Errorf("the model saw %d requests, want 2 (one specialist and the synthesis)", n)
	}
}
