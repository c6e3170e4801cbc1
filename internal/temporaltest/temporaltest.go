// Package temporaltest starts a real Temporal dev server for tests: the
// `temporal` CLI's `server start-dev`, on loopback, with SQLite in
// memory. A test without the CLI skips, saying how to get it,
// unless SOT_REQUIRE_TEMPORAL=1 (as .ci/run sets, having built it), which
// makes it fail instead.
package temporaltest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
)

// EnvRequire makes a missing CLI fail the test instead of skipping it.
const EnvRequire = "SOT_REQUIRE_TEMPORAL"

// Binary is the temporal CLI: $SOT_TEMPORAL_CLI, or `temporal` on PATH.
func Binary() (string, error) {
	if b := os.Getenv("SOT_TEMPORAL_CLI"); b != "" {
		return b, nil
	}
	return exec.LookPath("temporal")
}

// Start starts a dev server for t and returns its address; it stops with
// the test. dynamic are more of the server's dynamic settings, KEY=VALUE
// ("limit.historyCount.suggestContinueAsNew=60").
func Start(t testing.TB, dynamic ...string) string {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("the temporal CLI is not on PATH, and %s is set (.ci/run builds it)", EnvRequire)
		}
		t.Skip("the temporal CLI is not on PATH: go install github.com/temporalio/cli/cmd/temporal@v1.5.1, or set SOT_TEMPORAL_CLI")
	}
	// A port found free may be taken by another process before the
	// server binds it: the server then exits at once, and is started
	// again on other ports.
	for attempt := 1; ; attempt++ {
		addr, log, err := startOnce(t, bin, dynamic)
		if err == nil {
			return addr
		}
		if attempt < 3 && strings.Contains(log, "address already in use") {
			continue
		}
		t.Fatalf("the temporal dev server did not come up at %s: %v\n%s", addr, err, log)
	}
}

// startOnce starts a dev server on ports found free, and returns its
// address once it answers, or its log and why it did not come up: it
// exited, or did not answer within a minute.
func startOnce(t testing.TB, bin string, dynamic []string) (addr, log string, err error) {
	t.Helper()
	port, http, metrics := freePort(t), freePort(t), freePort(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	args := []string{"server", "start-dev", "--ip", "127.0.0.1", "--port", strconv.Itoa(port),
		"--http-port", strconv.Itoa(http), "--metrics-port", strconv.Itoa(metrics), "--headless",
		// Eager activities: a call is handed to the worker that
		// scheduled it without a round through the queue (45 against
		// 95 ms a call; see BenchmarkRemoteCall and docs/scale-out.md).
		"--dynamic-config-value", "system.enableActivityEagerExecution=true",
		"--log-level", "error"}
	for _, d := range dynamic {
		args = append(args, "--dynamic-config-value", d)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	logFile, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start the temporal dev server: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		<-exited
		logFile.Close()
	})
	addr = fmt.Sprintf("127.0.0.1:%d", port)
	readLog := func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		return string(b)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := client.Dial(client.Options{HostPort: addr})
		if err == nil {
			_, err = c.CheckHealth(context.Background(), &client.CheckHealthRequest{})
			c.Close()
			if err == nil {
				return addr, "", nil
			}
		}
		select {
		case werr := <-exited:
			exited <- werr // for the cleanup
			return addr, readLog(), fmt.Errorf("the server exited: %v (last dial: %w)", werr, err)
		default:
		}
		if time.Now().After(deadline) {
			return addr, readLog(), err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
