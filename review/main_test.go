package review

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/llm/llmtest"
)

// providerEnv makes the test binary serve as the fake provider of a
// benchmark (see providerProcess) instead of running tests.
const providerEnv = "SOT_BENCH_PROVIDER_LATENCY"

func TestMain(m *testing.M) {
	if v := os.Getenv(providerEnv); v != "" {
		os.Exit(serveProvider(v))
	}
	os.Exit(m.Run())
}

// serveProvider runs llmtest as spec says ("300ms", or "300ms,prefix-cache"
// for its simulated prompt cache), prints its base URL and serves until its
// standard input closes (the benchmark ended or died).
func serveProvider(spec string) int {
	latency, cache := strings.CutSuffix(spec, ",prefix-cache")
	d, err := time.ParseDuration(latency)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	srv, err := llmtest.Listen("127.0.0.1:0", llmtest.Config{Latency: d, PrefixCache: cache, RecordLimit: 64})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer srv.Close()
	fmt.Println(srv.OpenAIBaseURL())
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// providerProcess starts the fake provider in a process of its own, as a
// real provider would be, so its work does not share sot's Go scheduler and
// garbage collector (it still shares the machine's cores). It returns the
// OpenAI base URL; the process ends with the benchmark.
func providerProcess(tb testing.TB, latency time.Duration, prefixCache bool) string {
	tb.Helper()
	spec := latency.String()
	if prefixCache {
		spec += ",prefix-cache"
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), providerEnv+"="+spec)
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
