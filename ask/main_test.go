package ask

import (
	"os"
	"testing"
	"time"

	"github.com/sotlabs/sot/llm/llmtest"
)

// providerEnv makes the test binary serve as the fake provider of a
// benchmark (see providerProcess) instead of running tests.
const providerEnv = "SOT_ASK_BENCH_PROVIDER_LATENCY"

func TestMain(m *testing.M) {
	if code, child := llmtest.ServeIfChild(providerEnv, providerConfig); child {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// providerConfig is llmtest at the latency spec gives ("300ms"), its
// streamed answers starting at a tenth of it (llmtest's default), answering
// the three steps of a question with benchResponder.
func providerConfig(spec string) (llmtest.Config, error) {
	d, err := time.ParseDuration(spec)
	if err != nil {
		return llmtest.Config{}, err
	}
	return llmtest.Config{Latency: d, RecordLimit: 64, Rules: []llmtest.Rule{{Respond: benchResponder}}}, nil
}

// providerProcess starts the fake provider in a process of its own and
// returns its OpenAI base URL.
func providerProcess(tb testing.TB, latency time.Duration) string {
	tb.Helper()
	return llmtest.Process(tb, providerEnv, latency.String())
}
