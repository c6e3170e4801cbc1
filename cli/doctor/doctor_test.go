package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/llm/llmtest"
)

const key = "sk-doctor-secret-0123456789"

// served is a configuration whose OpenAI and Anthropic providers are the
// fake server, with the default model and an alias on them.
func served(srv *llmtest.Server) config.Config {
	cfg := config.Defaults()
	cfg.DefaultModel = "openai:gpt-4.1"
	cfg.Aliases = map[string]string{"smart": "anthropic:claude-sonnet-4-5"}
	o := cfg.Providers["openai"]
	o.BaseURL = srv.OpenAIBaseURL()
	cfg.Providers["openai"] = o
	a := cfg.Providers["anthropic"]
	a.BaseURL = srv.AnthropicBaseURL()
	cfg.Providers["anthropic"] = a
	return cfg
}

func doctor(t *testing.T, cfg config.Config, env map[string]string, models ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := Run(context.Background(), &Options{
		IO:      &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Config:  func() (*config.Config, config.Sources, error) { return &cfg, nil, nil },
		Getenv:  func(k string) string { return env[k] },
		Models:  models,
		Timeout: time.Minute,
	})
	return out.String(), errOut.String(), err
}

// Without arguments, doctor checks the default model and every alias, each
// with a plain and a structured call, and reports them all working.
func TestRunChecksEveryConfiguredModel(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	out, errOut, err := doctor(t, served(srv), map[string]string{"OPENAI_API_KEY": key, "ANTHROPIC_API_KEY": key})
	if err != nil {
		t.Fatalf("%v; stderr %q", err, errOut)
	}
	for _, want := range []string{
		`(?m)^MODEL +PROVIDER +LATENCY +TOKENS IN/OUT +STRUCTURED +STATUS$`,
		`(?m)^openai:gpt-4\.1 +openai +\d+ms +\d+/\d+ +yes +ok$`,
		`(?m)^anthropic:claude-sonnet-4-5 +anthropic +\d+ms +\d+/\d+ +yes +ok$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("no line %s in:\n%s", want, out)
		}
	}
	if n := srv.Count(); n != 4 {
		t.Errorf("%d calls for two models; want a plain and a structured one each", n)
	}
}

// A rejected key fails the check (exit 1), says what to fix and never
// prints the key; a missing one is a configuration problem (exit 2) and
// calls nothing.
func TestRunExplainsAFailure(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{APIKey: "a-different-key"})
	defer srv.Close()
	out, errOut, err := doctor(t, served(srv), map[string]string{"OPENAI_API_KEY": key}, "openai:gpt-4.1")
	if cmdutil.Code(err) != cmdutil.ExitFailure {
		t.Errorf("a rejected key: %v (exit %d), want exit 1", err, cmdutil.Code(err))
	}
	if !regexp.MustCompile(`(?m)^openai:gpt-4\.1 +openai +- +- +- +FAILED$`).MatchString(out) {
		t.Errorf("stdout:\n%s", out)
	}
	if !strings.Contains(errOut, "authentication failed") || !strings.Contains(errOut, "fix: the key in OPENAI_API_KEY was rejected") {
		t.Errorf("stderr:\n%s", errOut)
	}
	if strings.Contains(out+errOut, key) {
		t.Errorf("the key was printed:\n%s%s", out, errOut)
	}

	// At the provider's own endpoint a missing key is known before any
	// request, so no network is used.
	cfg := config.Defaults()
	out, errOut, err = doctor(t, cfg, nil, "anthropic:claude-sonnet-4-5")
	if cmdutil.Code(err) != cmdutil.ExitUsage {
		t.Errorf("a missing key: %v (exit %d), want exit 2", err, cmdutil.Code(err))
	}
	if !strings.Contains(errOut, "missing API key: set ANTHROPIC_API_KEY") || !strings.Contains(errOut, "fix: export ANTHROPIC_API_KEY with your key") {
		t.Errorf("stderr:\n%s", errOut)
	}
	if !strings.Contains(out, "FAILED") {
		t.Errorf("stdout:\n%s", out)
	}
}

// --json reports each check with its model, provider, usage and whether
// structured output works.
func TestRunJSON(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	var out bytes.Buffer
	cfg := served(srv)
	err := Run(context.Background(), &Options{
		IO:      &cmdutil.IOStreams{Out: &out, ErrOut: &bytes.Buffer{}},
		Config:  func() (*config.Config, config.Sources, error) { return &cfg, nil, nil },
		Getenv:  func(string) string { return key },
		Models:  []string{"smart"},
		JSON:    true,
		Timeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	var checks []Check
	if err := json.Unmarshal(out.Bytes(), &checks); err != nil {
		t.Fatalf("--json printed %q: %v", out.String(), err)
	}
	if len(checks) != 1 || checks[0].Model != "anthropic:claude-sonnet-4-5" || !checks[0].OK || !checks[0].Structured || checks[0].Usage.InputTokens == 0 {
		t.Errorf("--json printed %+v", checks)
	}
}

// A model named by its provider alone, with or without the colon, is a
// usage error that says how to write it, with an example of the provider's
// own, and never suggests "openai:openai:": whether it is an argument, the
// default model or an alias's target. No call is made (the stack is never
// built, so no endpoint is needed).
func TestRunProviderWithoutModel(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		def     string
		aliases map[string]string
		want    string
	}{
		{name: "argument openai:", args: []string{"openai:"},
			want: `model "openai:" has no model name after "openai:"; write it as openai:MODEL, for example openai:gpt-4.1`},
		{name: "argument anthropic:", args: []string{"anthropic:"},
			want: `write it as anthropic:MODEL, for example anthropic:claude-sonnet-4-5`},
		{name: "argument ollama:", args: []string{" ollama: "},
			want: `write it as ollama:MODEL`},
		{name: "bare provider", args: []string{"openai"},
			want: `model "openai" names the provider openai but no model: write it as openai:MODEL, for example openai:gpt-4.1`},
		{name: "default model", def: "openai:",
			want: `write it as openai:MODEL, for example openai:gpt-4.1`},
		{name: "alias target", def: "openai:gpt-4.1", aliases: map[string]string{"fast": "anthropic:"},
			want: `write it as anthropic:MODEL`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.DefaultModel, cfg.Aliases = tt.def, tt.aliases
			var out, errOut bytes.Buffer
			err := Run(context.Background(), &Options{
				IO:     &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
				Config: func() (*config.Config, config.Sources, error) { return &cfg, nil, nil },
				Getenv: func(string) string { return "" },
				Models: tt.args,
			})
			if err == nil {
				t.Fatalf("no error; stdout %q", out.String())
			}
			if got := cmdutil.Code(err); got != cmdutil.ExitUsage {
				t.Errorf("exit %d, want %d (usage): %v", got, cmdutil.ExitUsage, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error %q\nwant it to hold %q", msg, tt.want)
			}
			for _, p := range []string{"openai", "anthropic", "ollama"} {
				if strings.Contains(msg, p+":"+p) {
					t.Errorf("error %q suggests %s:%s", msg, p, p)
				}
			}
			if out.Len() != 0 {
				t.Errorf("a check was printed: %q", out.String())
			}
		})
	}
}
