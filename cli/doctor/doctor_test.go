package doctor

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/config"
)

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
