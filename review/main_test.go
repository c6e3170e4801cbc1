package review

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/llm/llmtest"
)

// providerEnv makes the test binary serve as the fake provider of a
// benchmark (see providerProcess) instead of running tests.
const providerEnv = "SOT_BENCH_PROVIDER_LATENCY"

func TestMain(m *testing.M) {
	if code, child := llmtest.ServeIfChild(providerEnv, providerConfig); child {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// providerConfig is llmtest as spec says ("300ms", or "300ms,prefix-cache"
// for its simulated prompt cache).
func providerConfig(spec string) (llmtest.Config, error) {
	latency, cache := strings.CutSuffix(spec, ",prefix-cache")
	d, err := time.ParseDuration(latency)
	if err != nil {
		return llmtest.Config{}, err
	}
	return llmtest.Config{Latency: d, PrefixCache: cache, RecordLimit: 64}, nil
}

// providerProcess starts the fake provider in a process of its own and
// returns its OpenAI base URL.
func providerProcess(tb testing.TB, latency time.Duration, prefixCache bool) string {
	tb.Helper()
	spec := latency.String()
	if prefixCache {
		spec += ",prefix-cache"
	}
	return llmtest.Process(tb, providerEnv, spec)
}
