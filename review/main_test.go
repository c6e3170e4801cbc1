package review

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/benchload"
	"github.com/sotlabs/sot/internal/gchold"
	"github.com/sotlabs/sot/internal/tokens"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/stack"
)

// providerEnv makes the test binary serve as the fake provider of a
// benchmark (see providerProcess) instead of running tests.
const providerEnv = "SOT_BENCH_PROVIDER_LATENCY"

func TestMain(m *testing.M) {
	if code, child := llmtest.ServeIfChild(providerEnv, providerConfig); child {
		os.Exit(code)
	}
	if code, child := reviewIfChild(); child {
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

// reviewEnv makes the test binary run one review as a process of its own
// (see reviewProcess) instead of running tests, the way sot review runs:
// nothing counted or loaded by an earlier review of the same process.
const reviewEnv = "SOT_BENCH_REVIEW"

// childProfileEnv, when set in a benchmark's environment, names the file
// the review process writes a CPU profile of its Prepare to; a %p in it
// stands for the process id, so that every review keeps its profile.
const childProfileEnv = "SOT_BENCH_CHILD_CPUPROFILE"

// reviewSpec is what a review process reviews, and against which provider.
type reviewSpec struct {
	Repo, BaseURL, Model, Perspectives, OutputDir string
}

// reviewIfChild runs the review that reviewEnv describes, when it is set:
// it prints, each on a line of its own, the time Prepare started (Unix
// nanoseconds), whether Prepare loaded the tokenizer (true or false), the
// time Prepare returned, the CPU time the process spent in Prepare
// (nanoseconds, every thread's) and the CPU time of the children it
// started and waited for in Prepare (git), then runs the review, and returns the
// exit code with child true.
func reviewIfChild() (code int, child bool) {
	spec, ok := os.LookupEnv(reviewEnv)
	if !ok {
		return 0, false
	}
	var s reviewSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2, true
	}
	o, err := reviewOptions(s.Repo, s.BaseURL, s.Model)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2, true
	}
	o.Context.Perspectives, o.Context.OutputDir = s.Perspectives, s.OutputDir
	if path := os.Getenv(childProfileEnv); path != "" {
		f, err := os.Create(strings.ReplaceAll(path, "%p", strconv.Itoa(os.Getpid())))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2, true
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2, true
		}
	}
	// sot review prepares with the collector held off until its first
	// calls are sent (cmdutil.RunScenario); so does this process.
	release := gchold.Hold(os.Getenv)
	defer release()
	ctx := engine.WithWaiting(context.Background(), release)
	fmt.Println(time.Now().UnixNano())
	stack.Preconnect(o.Config, "") // as sot review does, while git works
	cpu, children := benchload.CPUTime(), benchload.ChildrenCPUTime()
	p, err := Prepare(ctx, o)
	cpu, children = benchload.CPUTime()-cpu, benchload.ChildrenCPUTime()-children
	pprof.StopCPUProfile()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1, true
	}
	fmt.Printf("%v\n%d\n%d\n%d\n", tokens.Loaded(), time.Now().UnixNano(), cpu, children)
	if _, err := Execute(ctx, p, o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1, true
	}
	return 0, true
}

// childReview is what a review process reports of its Prepare.
type childReview struct {
	Started, Prepared, Planned time.Time     // the process's start, and Prepare's start and return
	CPU                        time.Duration // the process's, in Prepare
	ChildrenCPU                time.Duration // its children's (git), in Prepare
	Tokenizer                  bool          // Prepare loaded the tokenizer
}

// reviewProcess runs the review s describes in a process of its own and
// returns what it reports of its Prepare.
func reviewProcess(tb testing.TB, s reviewSpec) childReview {
	tb.Helper()
	spec, err := json.Marshal(s)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), reviewEnv+"="+string(spec))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	c := childReview{Started: time.Now()}
	if err := cmd.Run(); err != nil {
		tb.Fatalf("the review process: %v\n%s", err, errOut.Bytes())
	}
	var start, end, cpu, children int64
	var loaded bool
	if _, err := fmt.Sscan(out.String(), &start, &loaded, &end, &cpu, &children); err != nil {
		tb.Fatalf("the review process printed %q, not the times Prepare started and returned, whether it loaded the tokenizer and its CPU time and its children's: %v", out.String(), err)
	}
	c.Prepared, c.Planned, c.CPU, c.ChildrenCPU, c.Tokenizer = time.Unix(0, start), time.Unix(0, end), time.Duration(cpu), time.Duration(children), loaded
	return c
}
