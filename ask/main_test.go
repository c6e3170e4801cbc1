package ask

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
const providerEnv = "SOT_ASK_BENCH_PROVIDER_LATENCY"

func TestMain(m *testing.M) {
	if v := os.Getenv(providerEnv); v != "" {
		os.Exit(serveProvider(v))
	}
	os.Exit(m.Run())
}

// serveProvider runs llmtest at the latency spec gives ("300ms"), its
// streamed answers starting at a tenth of it (llmtest's default), answering
// the three steps of a question with benchResponder. It prints its base
// URL and serves until its standard input closes (the benchmark ended or
// died). The responder is a function, which cannot cross a process
// boundary: this process builds its own rules.
func serveProvider(spec string) int {
	d, err := time.ParseDuration(spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	srv, err := llmtest.Listen("127.0.0.1:0", llmtest.Config{Latency: d, RecordLimit: 64,
		Rules: []llmtest.Rule{{Respond: benchResponder}}})
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
func providerProcess(tb testing.TB, latency time.Duration) string {
	tb.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), providerEnv+"="+latency.String())
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
