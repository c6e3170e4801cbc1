package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sotlabs/sot/llm/llmtest"
)

func TestMain(m *testing.M) {
	if os.Getenv("SOT_TEST_RUN_MAIN") == "1" { // the crash test's child process
		main()
		return
	}
	testscript.Main(m, map[string]func(){"sot": main})
}

// TestScripts runs the txtar scripts in testdata/script. Each script gets a
// fresh llmtest server (configured by llmtest.yaml in the script, if any),
// with OPENAI_BASE_URL, ANTHROPIC_BASE_URL and OLLAMA_HOST pointing at it,
// test keys, and HOME and XDG directories inside the script's work dir.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: false,
		Setup:               setup,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"llmtest-requests": requestsCmd,
			"llmtest-config":   configCmd,
			"exits":            exitsCmd,
		},
	})
}

// serverKey finds a script's llmtest server in its Env.Values.
type serverKey struct{}

func setup(env *testscript.Env) error {
	cfg := llmtest.Config{}
	if p := filepath.Join(env.WorkDir, "llmtest.yaml"); fileExists(p) {
		c, err := llmtest.LoadConfig(p)
		if err != nil {
			return err
		}
		cfg = c
	}
	srv := llmtest.NewServer(cfg)
	env.Defer(srv.Close)
	env.Values[serverKey{}] = srv
	env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
	env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config"))
	env.Setenv("XDG_CACHE_HOME", filepath.Join(env.WorkDir, ".cache"))
	env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, ".state"))
	env.Setenv("OPENAI_BASE_URL", srv.OpenAIBaseURL())
	env.Setenv("ANTHROPIC_BASE_URL", srv.AnthropicBaseURL())
	env.Setenv("OLLAMA_HOST", srv.URL())
	env.Setenv("OPENAI_API_KEY", "sk-script-secret-0123456789")
	env.Setenv("ANTHROPIC_API_KEY", "sk-ant-script-secret-0123456789")
	env.Setenv("LLMTEST_URL", srv.URL())
	env.Setenv("GIT_AUTHOR_NAME", "sot test")
	env.Setenv("GIT_AUTHOR_EMAIL", "sot@example.com")
	env.Setenv("GIT_COMMITTER_NAME", "sot test")
	env.Setenv("GIT_COMMITTER_EMAIL", "sot@example.com")
	env.Setenv("NO_COLOR", "1")
	return nil
}

// requestsCmd prints what the script's llmtest server received: the count,
// then one line per request with its model and the start of the last user
// message. "llmtest-requests count" prints only the count;
// "llmtest-requests bodies" prints every request body.
func requestsCmd(ts *testscript.TestScript, neg bool, args []string) {
	srv, _ := ts.Value(serverKey{}).(*llmtest.Server)
	if srv == nil {
		ts.Fatalf("no llmtest server")
	}
	recs := srv.Requests()
	fmt.Fprintf(ts.Stdout(), "requests: %d\n", len(recs))
	if len(args) > 0 && args[0] == "count" {
		return
	}
	if len(args) > 0 && args[0] == "bodies" { // every request body, whole
		for _, r := range recs {
			fmt.Fprintf(ts.Stdout(), "%s\n", r.Body)
		}
		return
	}
	for _, r := range recs {
		user := r.LastUser()
		if i := strings.IndexByte(user, '\n'); i >= 0 {
			user = user[:i]
		}
		fmt.Fprintf(ts.Stdout(), "%s %s %s\n", r.Provider, r.Model, user)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// configCmd reconfigures the script's llmtest server from a YAML file.
func configCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: llmtest-config FILE")
	}
	cfg, err := llmtest.LoadConfig(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Value(serverKey{}).(*llmtest.Server).SetConfig(cfg)
}

// exitsCmd runs a command and checks its exit code, which CI acts on:
// "exits 2 sot review --type poem". Its output is kept for stdout and
// stderr checks, as exec's is.
func exitsCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %q is not an exit code", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}
