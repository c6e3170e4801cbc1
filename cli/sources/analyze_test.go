package sources

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/llm/llmtest"
)

// A dry run counts the calls and sends none; the analysis then makes one
// call a source and reaches full coverage, and a second one has nothing
// left to pay for.
func TestAnalyze(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the key that signs runs, kept out of the real home
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	ctx := context.Background()
	dir, o, out := corpusProject(t)
	if err := Add(ctx, o, []string{"notes"}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"SOT_MODEL":       "openai:gpt-4.1",
		"OPENAI_API_KEY":  "sk-test-0123456789",
		"OPENAI_BASE_URL": srv.OpenAIBaseURL(),
		"SOT_CACHE_DIR":   t.TempDir(),
	}
	getenv := func(k string) string { return env[k] }
	f := &cmdutil.Factory{IO: o.IO, Getenv: getenv,
		Loader: &config.Loader{WorkDir: dir, UserDir: filepath.Join(dir, "user"), Getenv: getenv}}

	out.Reset()
	if err := Analyze(ctx, f, o, &AnalyzeOptions{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`(?m)^sot: would analyse 3 source\(s\) with openai:gpt-4\.1: 3 call\(s\)`,
		`(?m)^  - [0-9a-f]{16} Q3 planning$`,
		`(?m)^sot: coverage: 0 of 3 source\(s\) have SoT metadata \(0\.0%\); the target is more than 95%: not met$`,
	} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("the dry run printed no line %s:\n%s", want, out.String())
		}
	}
	if n := srv.Count(); n != 0 {
		t.Errorf("the dry run sent %d request(s)", n)
	}

	out.Reset()
	if err := Analyze(ctx, f, o, &AnalyzeOptions{}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "sot: analysed now: 3 with openai:gpt-4.1\n") ||
		!strings.Contains(out.String(), "sot: coverage: 3 of 3 source(s) have SoT metadata (100.0%); the target is more than 95%: met\n") {
		t.Errorf("the analysis printed:\n%s", out.String())
	}
	if n := srv.Count(); n != 3 {
		t.Errorf("%d request(s) for three sources", n)
	}

	out.Reset()
	if err := Analyze(ctx, f, o, &AnalyzeOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "sot: analysed now: 0\n") || srv.Count() != 3 {
		t.Errorf("a second analysis made %d request(s) in all and printed:\n%s", srv.Count(), out.String())
	}
}
