package review

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/internal/benchload"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/stack"
	"github.com/sotlabs/sot/persona"
)

// benchRepo creates a repository whose working tree changes files×lines lines.
func benchRepo(tb testing.TB, files, lines int) string {
	tb.Helper()
	return benchRepoTracked(tb, files, lines, false)
}

// benchRepoTracked is benchRepo; with tracked, each file's first two lines
// (its package clause) are committed, so that the change adds the rest to
// tracked files, as most changes do, instead of adding untracked files.
func benchRepoTracked(tb testing.TB, files, lines int, tracked bool) string {
	tb.Helper()
	dir := tb.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@e", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@e")
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, body string) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	write(".gitignore", "/out*/\n")
	git("init", "-q", "-b", "main")
	if tracked {
		for f := range files {
			write(fmt.Sprintf("svc%02d/handler%03d.go", f%20, f), fmt.Sprintf("package pkg%d\n\n", f%17))
		}
	}
	git("add", ".")
	git("commit", "-qm", "init")
	for f := range files {
		var b strings.Builder
		fmt.Fprintf(&b, "package pkg%d\n\n", f%17)
		for l := 0; l < lines-2; l++ {
			if l%8 == 0 {
				fmt.Fprintf(&b, "// Handle%d_%d validates request field %d before it is stored.\n", f, l, l)
			} else {
				fmt.Fprintf(&b, "func Handle%d_%d(v int) int { if v < %d { return %d }; return v * %d }\n", f, l, l, l, f+1)
			}
		}
		write(fmt.Sprintf("svc%02d/handler%03d.go", f%20, f), b.String())
	}
	return dir
}

func benchOptions(tb testing.TB, repo string, srv *llmtest.Server, model string) *Options {
	tb.Helper()
	url := "http://127.0.0.1:1/v1"
	if srv != nil {
		url = srv.OpenAIBaseURL()
	}
	return benchOptionsAt(tb, repo, url, model)
}

func benchOptionsAt(tb testing.TB, repo, baseURL, model string) *Options {
	tb.Helper()
	o, err := reviewOptions(repo, baseURL, model)
	if err != nil {
		tb.Fatal(err)
	}
	return o
}

// reviewOptions are a default review's options against the provider at
// baseURL, with the response cache off.
func reviewOptions(repo, baseURL, model string) (*Options, error) {
	cfg := config.Defaults() // among them the default concurrency, 20: every call of a default review at once
	p := cfg.Providers["openai"]
	p.BaseURL = baseURL
	cfg.Providers["openai"] = p
	cfg.Cache.Disabled = true
	cfg.DefaultModel = model
	lib, err := persona.Discover(persona.Dirs{})
	if err != nil {
		return nil, err
	}
	getenv := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-bench-0123456789"
		}
		return ""
	}
	return &Options{Options: scenario.Options{Dir: repo, Config: &cfg, Fresh: true, NewStack: func(journal string) (*stack.Stack, error) {
		return stack.New(&cfg, stack.Options{JournalPath: journal, Getenv: getenv})
	}}, Context: Context{Interactive: "false", OutputDir: filepath.Join(repo, "out")}, Library: lib}, nil
}

func runReview(tb testing.TB, o *Options) *Outcome {
	tb.Helper()
	ctx := context.Background()
	p, err := Prepare(ctx, o)
	if err != nil {
		tb.Fatal(err)
	}
	out, err := Execute(ctx, p, o)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// BenchmarkReviewParallel: a default review (the default concurrency, nine
// specialists × two lenses, then the synthesis) against llmtest at 300 ms a
// call, streamed from a first token at 30 ms, served by a process of its
// own. The critical path is two dependent calls (a specialist, then the
// triage lead): 600 ms. The specialists' calls share a prompt prefix, so
// one goes first and the others follow when its answer starts (30 ms),
// which the figure includes. Reported: the wall time of the whole review
// (git diff, prompt composition, calls, synthesis, files) over the
// critical path, and the same for the phase that makes the calls.
func BenchmarkReviewParallel(b *testing.B) {
	repo := benchRepo(b, 3, 40)
	o := benchOptionsAt(b, repo, providerProcess(b, 300*time.Millisecond, false), "openai:gpt-4.1")
	o.Context.Perspectives = "premortem,red-team"
	var walls, execs []time.Duration
	var calls int
	ctx := context.Background()
	for b.Loop() {
		start := time.Now()
		p, err := Prepare(ctx, o)
		if err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		out, err := Execute(ctx, p, o)
		if err != nil {
			b.Fatal(err)
		}
		walls = append(walls, time.Since(start))
		execs = append(execs, time.Since(mid))
		calls = out.Result.Usage.Calls
		if out.Result.Partial() {
			b.Fatalf("partial review: %+v", out.Result.Missing)
		}
	}
	critical := float64(2 * 300 * time.Millisecond)
	b.ReportMetric(float64(median(walls))/critical, "wall/critical-path")
	b.ReportMetric(float64(mean(walls))/critical, "wall-mean/critical-path")
	b.ReportMetric(float64(median(execs))/critical, "calls-phase/critical-path")
	// With the prefix cache's dependency counted: the other specialist
	// calls wait for the first one's first token (30 ms).
	b.ReportMetric(float64(median(walls))/(critical+float64(30*time.Millisecond)), "wall/dependency-path")
	b.ReportMetric(float64(calls), "calls")
}

// median is the middle of ds: the typical run, unmoved by the odd run that
// a busy machine slows down.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func mean(ds []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

// BenchmarkReviewPrefixCache: reviews of a 2,000-line diff (nine
// specialists × two lenses, then the synthesis) against llmtest's
// simulated prefix cache (served by a process of its own) at 300 ms a
// call, first token at 30 ms. As at the
// providers, a prefix can be read only by requests that arrive after the
// answer of a request that wrote it has started. Each review has a prompt
// prefix of its own (another nonce), so none reads what an earlier one
// wrote. Reported: cached input tokens over all input tokens, and the
// median wall time over the critical path of two dependent calls.
func BenchmarkReviewPrefixCache(b *testing.B) {
	repo := benchRepo(b, 10, 200)
	o := benchOptionsAt(b, repo, providerProcess(b, 300*time.Millisecond, true), "openai:gpt-4.1")
	o.Context.Perspectives = "premortem,red-team"
	var cached, in int
	var walls []time.Duration
	for i := int64(0); b.Loop(); i++ {
		o.Seed = &i // a run id, and so a nonce and a prompt prefix, of its own
		start := time.Now()
		out := runReview(b, o)
		walls = append(walls, time.Since(start))
		u := out.Result.Usage
		in += u.InputTokens
		cached += u.CachedInputTokens
	}
	b.ReportMetric(float64(cached)/float64(in), "cached/input")
	b.ReportMetric(float64(median(walls))/float64(2*300*time.Millisecond), "wall/critical-path")
	b.ReportMetric(float64(median(walls))/float64(2*300*time.Millisecond+30*time.Millisecond), "wall/dependency-path")
	b.ReportMetric(float64(in)/float64(b.N), "input-tokens")
}

// BenchmarkReviewUnderFaults: a default review (nine specialists × two
// lenses, then the synthesis, default concurrency and retries) against a
// provider that fails 30% of requests with 500 or 503 and takes at most
// four requests a second, answering the others 429 with Retry-After. Every
// specialist must be reviewed. Reported: the retries the run made, by
// cause, the calls, and the wall time of a review.
func BenchmarkReviewUnderFaults(b *testing.B) {
	repo := benchRepo(b, 3, 40)
	srv := llmtest.NewServer(llmtest.Config{Latency: 300 * time.Millisecond, Seed: 11, RecordLimit: 64,
		Faults: llmtest.Faults{Rate: 0.3, Kinds: []llmtest.FaultKind{llmtest.Fault500, llmtest.Fault503}},
		Quota:  llmtest.Quota{Requests: 4, Window: time.Second}})
	defer srv.Close()
	o := benchOptions(b, repo, srv, "openai:gpt-4.1")
	o.Context.Perspectives = "premortem,red-team"
	var stacks []*stack.Stack
	newStack := o.NewStack
	o.NewStack = func(journal string) (*stack.Stack, error) {
		st, err := newStack(journal)
		if err == nil {
			stacks = append(stacks, st)
		}
		return st, err
	}
	var retries stack.Retries
	var walls []time.Duration
	var calls int
	for i := int64(0); b.Loop(); i++ {
		o.Seed = &i // a run of its own, so nothing is replayed
		stacks = nil
		start := time.Now()
		out := runReview(b, o)
		walls = append(walls, time.Since(start))
		if out.Result.Partial() {
			b.Fatalf("partial review: %+v", out.Result.Missing)
		}
		calls = out.Result.Usage.Calls
		retries = stack.Retries{}
		for _, st := range stacks {
			retries = retries.Add(st.Retries())
		}
	}
	b.Logf("%s", retries)
	b.ReportMetric(float64(calls), "calls")
	b.ReportMetric(float64(retries.Total()), "retries")
	b.ReportMetric(float64(retries.RateLimited), "retries-429")
	b.ReportMetric(float64(retries.Unavailable), "retries-5xx")
	b.ReportMetric(median(walls).Seconds(), "s/review")
}

// BenchmarkReview50kLines: a 50,000-line diff (250 files of 200 lines, plus
// a vendored and a binary file) on a 128k-token model, so the material is
// split into chunks. Every changed file must be reviewed or listed as
// skipped. Reported: chunks, calls, the time from the start of the first
// review to its first request's arrival at the provider (reading the diff,
// counting tokens, chunking, composing every prompt; later reviews find
// the token counts of the same texts remembered, a sot run never does),
// and the process's peak resident memory.
func BenchmarkReview50kLines(b *testing.B) {
	repo := benchRepo(b, 250, 200)
	os.MkdirAll(filepath.Join(repo, "vendor", "lib"), 0o755)
	os.WriteFile(filepath.Join(repo, "vendor", "lib", "lib.go"), []byte("package lib\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "logo.png"), []byte("\x89PNG\x00\x01\x02"), 0o644)
	var first atomic.Int64 // the first request's arrival, in Unix nanoseconds
	srv := llmtest.NewServer(llmtest.Config{RecordLimit: 64, Rules: []llmtest.Rule{{Respond: func(r *llmtest.Recorded) llmtest.Reply {
		first.CompareAndSwap(0, r.Time.UnixNano())
		return llmtest.Reply{} // the default answer
	}}}})
	defer srv.Close()
	o := benchOptions(b, repo, srv, "openai:gpt-4o")
	o.Context.Perspectives = "none"
	var out *Outcome
	var toFirst []time.Duration
	for b.Loop() {
		first.Store(0)
		start := time.Now()
		out = runReview(b, o)
		toFirst = append(toFirst, time.Unix(0, first.Load()).Sub(start))
	}
	res := out.Result
	covered := map[string]bool{}
	for _, f := range res.Reviewed {
		covered[f] = true
	}
	for _, s := range res.Skipped {
		covered[s.Path] = true
	}
	want := 252
	if len(covered) != want || len(res.Skipped) != 2 {
		b.Fatalf("%d of %d changed files reviewed or skipped (%d skipped: %+v)", len(covered), want, len(res.Skipped), res.Skipped)
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	b.ReportMetric(float64(res.Chunks), "chunks")
	b.ReportMetric(float64(res.Usage.Calls), "calls")
	b.ReportMetric(toFirst[0].Seconds(), "s-to-first-request")
	b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MiB")
}

func benchConfig() *config.Config {
	cfg := config.Defaults()
	return &cfg
}

// BenchmarkDebate: a three-round debate of nine specialists against llmtest
// at 300 ms a call. Each round is two dependent calls (the specialists, then
// the lead's summary or, after the last round, the synthesis), so the
// critical path is 3 × 2 × 300 ms. Reported: wall time over the critical
// path, and the calls made next to the seed's budget (3 rounds × 9
// specialists + 30 continuation calls).
func BenchmarkDebate(b *testing.B) {
	repo := benchRepo(b, 3, 40)
	srv := llmtest.NewServer(llmtest.Config{Latency: 300 * time.Millisecond, RecordLimit: 64})
	defer srv.Close()
	o := benchOptions(b, repo, srv, "openai:gpt-4.1")
	o.Context.Perspectives = "none"
	o.Context.InteractionMode = Debate
	var wall time.Duration
	var out *Outcome
	for b.Loop() {
		start := time.Now()
		out = runReview(b, o)
		wall += time.Since(start)
	}
	if out.Result.Rounds != 3 {
		b.Fatalf("the debate ran %d rounds, want 3", out.Result.Rounds)
	}
	specialistCalls := 0
	recs := srv.Requests()
	for _, r := range recs[len(recs)-out.Result.Usage.Calls:] { // the last run's calls
		if strings.Contains(r.System, "# You are the ") {
			specialistCalls++
		}
	}
	critical := 3 * 2 * 300 * time.Millisecond
	b.ReportMetric(float64(wall)/float64(b.N)/float64(critical), "wall/critical-path")
	b.ReportMetric(float64(out.Result.Usage.Calls), "calls")
	b.ReportMetric(float64(specialistCalls), "specialist-calls")
	b.ReportMetric(float64(3*9+continuationCallLimit), "seed-budget-specialist-calls")
	b.Logf("calls: %d in all, %d of them by specialists; the seed's budget allows %d specialist calls (3 rounds × 9 + %d continuation) plus the lead's",
		out.Result.Usage.Calls, specialistCalls, 3*9+continuationCallLimit, continuationCallLimit)
}

// BenchmarkReviewFirstRequest: the time a review takes before its first
// request reaches the provider, for a 300-line diff (three new files of
// 100 lines; lines=300-tracked adds the same lines to three files already
// committed, as most changes do, which git diffs rather than lists as
// untracked) and a 50,000-line diff (250 files of 200 lines, on a
// 128k-token model, so split into chunks), each review at defaults in a process of
// its own, as sot review runs: nothing loaded or counted by an earlier
// review. Reported, as medians: the milliseconds from the start of
// Prepare to the first request's arrival at llmtest (reading the diff,
// masking, counting, chunking, composing every prompt, opening the run),
// and the same from the start of the process; its two parts, Prepare and
// the rest (opening the run, encoding the requests); the CPU time Prepare
// takes on every thread, which a busy machine stretches but does not
// change, and that of the git processes it starts (on a machine whose
// cores are all busy, the time before the first request follows the two
// together); the median time to start a program that does nothing and
// wait for it (us-spawn), under the same load, by which a virtual
// machine's faster and slower hours can be told apart; and the share of
// reviews
// whose Prepare loaded the tokenizer, which a 300-line diff, far from any
// budget, must not (it fails the benchmark). The goals, at a load
// average of 7 to 11 on two cores: 50 ms at 300 lines, 300 ms at 50,000;
// a median past twice the goal fails the benchmark. Each review process
// holds the collector off while it prepares, as sot review does
// (internal/gchold). With SOT_BENCH_HOGS=N the reviews run beside N
// processes spinning on the CPU (eight make the load of the goals on the
// benchmark VM), and the number and the load average are reported too.
// With SOT_BENCH_CHILD_CPUPROFILE=FILE each review process writes a CPU
// profile of its Prepare to FILE, a %p in FILE standing for its process id.
func BenchmarkReviewFirstRequest(b *testing.B) {
	hogs := benchload.FromEnv(b)
	for _, size := range []struct {
		name         string
		files, lines int
		model        string
		goal         time.Duration
		tokenize     bool // the material is cut into chunks by tokens
		tracked      bool // the files are tracked, their lines added to them
	}{
		{"lines=300", 3, 100, "openai:gpt-4.1", 50 * time.Millisecond, false, false},
		{"lines=300-tracked", 3, 100, "openai:gpt-4.1", 50 * time.Millisecond, false, true},
		{"lines=50000", 250, 200, "openai:gpt-4o", 300 * time.Millisecond, true, false},
	} {
		b.Run(size.name, func(b *testing.B) {
			repo := benchRepoTracked(b, size.files, size.lines, size.tracked)
			var first atomic.Int64 // the first request's arrival, in Unix nanoseconds
			srv := llmtest.NewServer(llmtest.Config{RecordLimit: 64, Rules: []llmtest.Rule{{Respond: func(r *llmtest.Recorded) llmtest.Reply {
				first.CompareAndSwap(0, r.Time.UnixNano())
				return llmtest.Reply{}
			}}}})
			defer srv.Close()
			var fromPrepare, fromStart, preparing, sending, cpu, gitCPU []time.Duration
			loads := 0
			for b.Loop() {
				first.Store(0)
				c := reviewProcess(b, reviewSpec{Repo: repo, BaseURL: srv.OpenAIBaseURL(), Model: size.model, OutputDir: filepath.Join(repo, "out")})
				if c.Tokenizer {
					loads++
				}
				if first.Load() == 0 {
					b.Fatal("the review sent no request")
				}
				arrived := time.Unix(0, first.Load())
				fromPrepare = append(fromPrepare, arrived.Sub(c.Prepared))
				fromStart = append(fromStart, arrived.Sub(c.Started))
				preparing = append(preparing, c.Planned.Sub(c.Prepared))
				sending = append(sending, arrived.Sub(c.Planned))
				cpu = append(cpu, c.CPU)
				gitCPU = append(gitCPU, c.ChildrenCPU)
			}
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			b.ReportMetric(ms(median(fromPrepare)), "ms-prepare-to-first-request")
			b.ReportMetric(ms(median(fromStart)), "ms-start-to-first-request")
			b.ReportMetric(ms(median(preparing)), "ms-prepare")
			b.ReportMetric(ms(median(sending)), "ms-plan-to-first-request")
			b.ReportMetric(ms(median(cpu)), "ms-prepare-cpu")
			b.ReportMetric(ms(median(gitCPU)), "ms-prepare-git-cpu")
			b.ReportMetric(float64(loads)/float64(b.N), "tokenizer-loaded")
			if spawn, err := benchload.SpawnTime(20); err == nil {
				b.ReportMetric(float64(spawn)/float64(time.Microsecond), "us-spawn")
			}
			if hogs > 0 {
				b.ReportMetric(float64(hogs), "cpu-hogs")
				b.ReportMetric(benchload.LoadAverage(), "load-1m")
			}
			b.Logf("prepare to first request: median %v of %v; goal %v", median(fromPrepare), fromPrepare, size.goal)
			b.Logf("medians: Prepare %v (CPU %v, git's %v), plan to first request %v", median(preparing), median(cpu), median(gitCPU), median(sending))
			if loads > 0 && !size.tokenize {
				b.Fatalf("%d of %d reviews loaded the tokenizer, for material that cannot come near the prompt budget", loads, b.N)
			}
			if median(fromPrepare) > 2*size.goal {
				b.Fatalf("the median time before the first request, %v, is more than twice the goal of %v", median(fromPrepare), size.goal)
			}
		})
	}
}

// BenchmarkReviewPrefixCacheShare: default reviews (the default roster and
// lenses) of a 300-line diff and of a 50,000-line diff (on a 128k-token
// model, so in chunks) against llmtest's simulated prefix cache, served by
// a process of its own, at 300 ms a call, first token at 30 ms. Each
// review has a prompt prefix of its own (another seed, so another nonce).
// Reported, over all input tokens as llmtest counts them (four bytes a
// token, the triage lead's included):
//
//   - cached/input: the share the cache served;
//   - max-cached/input: its physical maximum for the roster. In each group
//     of calls over the same material (a chunk, on one model), whatever
//     every call of the group sends (the lines all of their prompts hold,
//     wherever they stand in each) could come first, as one prefix, and be
//     read by every call of the group but the first;
//   - prefix/input: the same for the prefix the group's prompts do share,
//     as they are laid out;
//   - of-maximum: cached over its maximum, which the issue wants at 0.95
//     or more. Less fails the benchmark.
func BenchmarkReviewPrefixCacheShare(b *testing.B) {
	for _, size := range []struct {
		name         string
		files, lines int
		model        string
	}{
		{"lines=300", 3, 100, "openai:gpt-4.1"},
		{"lines=50000", 250, 200, "openai:gpt-4o"},
	} {
		b.Run(size.name, func(b *testing.B) {
			repo := benchRepo(b, size.files, size.lines)
			o := benchOptionsAt(b, repo, providerProcess(b, 300*time.Millisecond, true), size.model)
			ctx := context.Background()
			var in, cached, most, prefix int
			for i := int64(0); b.Loop(); i++ {
				o.Seed = &i // a run id, and so a nonce and a prompt prefix, of its own
				p, err := Prepare(ctx, o)
				if err != nil {
					b.Fatal(err)
				}
				m, pre := cacheableReads(p)
				most, prefix = most+m, prefix+pre
				out, err := Execute(ctx, p, o)
				if err != nil {
					b.Fatal(err)
				}
				if out.Result.Partial() {
					b.Fatalf("partial review: %+v", out.Result.Missing)
				}
				in += out.Result.Usage.InputTokens
				cached += out.Result.Usage.CachedInputTokens
			}
			share, max := float64(cached)/float64(in), float64(most)/float64(in)
			b.ReportMetric(share, "cached/input")
			b.ReportMetric(max, "max-cached/input")
			b.ReportMetric(float64(prefix)/float64(in), "prefix/input")
			b.ReportMetric(share/max, "of-maximum")
			b.ReportMetric(float64(in)/float64(b.N), "input-tokens")
			b.Logf("cached share %.3f of a physical maximum of %.3f (%.3f of it); the prompts' shared prefixes allow %.3f",
				share, max, share/max, float64(prefix)/float64(in))
			if share/max < 0.95 {
				b.Fatalf("the cached share reaches %.3f of its physical maximum; the issue asks for 0.95", share/max)
			}
		})
	}
}

// cacheableReads returns the most input tokens a prefix cache could serve
// to the plan's calls, and the tokens their shared prefixes let it serve,
// as llmtest counts them. llmtest sees a prompt as each message's role, a
// colon and a line break, its text and a blank line, and counts four bytes
// a token. Calls over the same material (a chunk, and its model) form a
// group; every call of a group but the first can read what the group
// shares. At most, that is every line all of the group's prompts hold (as
// many times as each holds it); as laid out, it is their common prefix.
func cacheableReads(p *Plan) (most, prefix int) {
	groups := map[string][]string{}
	for _, t := range p.Tasks {
		k := fmt.Sprint(t.Request.Model, "\x00", p.taskInfo[t.ID].chunk)
		var b strings.Builder
		b.WriteString("system:\n" + t.Prompt().System + "\n\n")
		for _, m := range t.Request.Messages {
			b.WriteString(string(m.Role) + ":\n" + m.Content + "\n\n")
		}
		groups[k] = append(groups[k], b.String())
	}
	for _, prompts := range groups {
		lines := func(s string) map[string]int {
			n := map[string]int{}
			for l := range strings.Lines(s) {
				n[l]++
			}
			return n
		}
		common := lines(prompts[0])
		shared := prompts[0]
		for _, s := range prompts[1:] {
			these := lines(s)
			for l, n := range common {
				common[l] = min(n, these[l])
			}
			k := 0
			for k < len(shared) && k < len(s) && shared[k] == s[k] {
				k++
			}
			shared = shared[:k]
		}
		size := 0
		for l, n := range common {
			size += len(l) * n
		}
		most += size / 4 * (len(prompts) - 1)
		prefix += len(shared) / 4 * (len(prompts) - 1)
	}
	return most, prefix
}
