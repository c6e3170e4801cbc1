package llmtest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// ServeIfChild is for a test binary's TestMain: when the environment
// variable env is set, the binary was started by Process to be a fake
// provider in a process of its own. It then serves the Config that config
// builds from env's value, prints the server's OpenAI base URL, serves
// until its standard input closes (the test or benchmark ended or died),
// and returns the exit code with child true. Otherwise it returns at once
// with child false, and TestMain runs the tests. config runs in the child,
// so a Config with Respond functions, which cannot cross a process
// boundary, is built there.
func ServeIfChild(env string, config func(spec string) (Config, error)) (code int, child bool) {
	spec, ok := os.LookupEnv(env)
	if !ok {
		return 0, false
	}
	cfg, err := config(spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2, true
	}
	srv, err := Listen("127.0.0.1:0", cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2, true
	}
	defer srv.Close()
	fmt.Println(srv.OpenAIBaseURL())
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0, true
}

// Process starts the test binary again as a fake provider (see
// ServeIfChild), with env set to spec, so that the provider's work does
// not share the tested code's Go scheduler and garbage collector, as a
// real provider's would not (it still shares the machine's cores). It
// returns the provider's OpenAI base URL; the process ends with tb.
func Process(tb testing.TB, env, spec string) string {
	tb.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), env+"="+spec)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		tb.Fatalf("the provider process did not start: %v", err)
	}
	return strings.TrimSpace(line)
}
