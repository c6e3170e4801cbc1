package review

import (
	"testing"
	"time"

	"github.com/sotlabs/sot/llm/llmtest"
)

// BenchmarkReviewLooks: the same change (a 2,000-line diff, nine
// specialists, no lenses) reviewed twice per iteration, once with
// specialists that look and once single-shot (--no-tools), against
// llmtest at 300 ms a call, first token at 30 ms, with its simulated
// prefix cache. A looking specialist spends one round reading a file and
// grepping the project, then answers. Reported for each mode: calls, input
// tokens, the cached share of them and the median wall time; and the
// ratios of looks to single-shot.
func BenchmarkReviewLooks(b *testing.B) {
	repo := benchRepo(b, 10, 200)
	srv := llmtest.NewServer(llmtest.Config{Latency: 300 * time.Millisecond, FirstToken: 30 * time.Millisecond, PrefixCache: true,
		Rules: []llmtest.Rule{{Round: 1, ToolCalls: []llmtest.ToolCall{
			{Name: "read_file", Arguments: map[string]any{"path": "svc00/handler000.go", "start": 1, "end": 80}},
			{Name: "grep", Arguments: map[string]any{"pattern": "Handle1_8\\b", "glob": "**/*.go"}},
		}}}})
	defer srv.Close()
	type figures struct {
		calls, in, cached int
		walls             []time.Duration
	}
	var looks, single figures
	measure := func(f *figures, noTools bool, seed int64) {
		o := benchOptions(b, repo, srv, "openai:gpt-4.1")
		o.Context.Perspectives = "none"
		o.NoTools = noTools
		o.Seed = &seed // a prompt prefix of its own: nothing read from an earlier review's
		start := time.Now()
		out := runReview(b, o)
		f.walls = append(f.walls, time.Since(start))
		u := out.Result.Usage
		f.calls += u.Calls
		f.in += u.InputTokens
		f.cached += u.CachedInputTokens
	}
	for i := int64(0); b.Loop(); i++ {
		measure(&looks, false, 2*i)
		measure(&single, true, 2*i+1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(looks.calls)/n, "looks-calls")
	b.ReportMetric(float64(single.calls)/n, "single-calls")
	b.ReportMetric(float64(looks.in)/n, "looks-input-tokens")
	b.ReportMetric(float64(single.in)/n, "single-input-tokens")
	b.ReportMetric(float64(looks.cached)/float64(looks.in), "looks-cached/input")
	b.ReportMetric(float64(single.cached)/float64(single.in), "single-cached/input")
	b.ReportMetric(median(looks.walls).Seconds(), "looks-s")
	b.ReportMetric(median(single.walls).Seconds(), "single-s")
	b.ReportMetric(float64(looks.in)/float64(single.in), "input-looks/single")
	b.ReportMetric(float64(median(looks.walls))/float64(median(single.walls)), "wall-looks/single")
}
