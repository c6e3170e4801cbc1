// Package configcmd implements "sot config": showing the merged
// configuration and where each value came from.
package configcmd

import (
	"encoding/json"
	"fmt"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/config"
)

// NewCmd returns "sot config".
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Inspect sot's configuration",
		Long: `Inspect sot's configuration.

Values are merged from, highest precedence first: flags; the environment
(SOT_MODEL, SOT_CONCURRENCY, SOT_MAX_CALLS, SOT_MAX_TOKENS, SOT_MAX_COST,
SOT_NO_CACHE, SOT_CACHE_DIR, SOT_TIMEOUT, SOT_RETRIES, OPENAI_BASE_URL,
ANTHROPIC_BASE_URL, OLLAMA_HOST); a file given with --config; the project's
.sot/config.yaml; the user's $XDG_CONFIG_HOME/sot/config.yaml; defaults.`,
	}
	cmd.AddCommand(newShowCmd(f))
	return cmd
}

// ShowOptions are the inputs of "sot config show".
type ShowOptions struct {
	IO     *cmdutil.IOStreams
	Config func() (*config.Config, config.Sources, error)
	Getenv func(string) string
	JSON   bool
}

func newShowCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &ShowOptions{IO: f.IO, Config: f.Config, Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print the merged configuration, with secrets redacted, and where each value came from",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return RunShow(opts) },
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	return cmd
}

// Credential reports whether a provider's key variable is set, never its value.
type Credential struct {
	Provider string `json:"provider"`
	Env      string `json:"env"`
	Set      bool   `json:"set"`
}

// RunShow prints the configuration.
func RunShow(opts *ShowOptions) error {
	cfg, src, err := opts.Config()
	if err != nil {
		return err
	}
	vals, err := config.Values(cfg, src)
	if err != nil {
		return err
	}
	var creds []Credential
	for _, name := range cfg.ProviderNames() {
		if env := cfg.Providers[name].APIKeyEnv; env != "" {
			creds = append(creds, Credential{Provider: name, Env: env, Set: opts.Getenv(env) != ""})
		}
	}
	sort.Slice(creds, func(i, j int) bool { return creds[i].Provider < creds[j].Provider })
	if opts.JSON {
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Values      []config.Value `json:"values"`
			Credentials []Credential   `json:"credentials"`
		}{vals, creds})
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tSOURCE")
	for _, v := range vals {
		cmdutil.Fprintf(tw, "%s\t%v\t%s\n", v.Key, format(v.Value), v.Source)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "CREDENTIAL\tSTATUS\tPROVIDER")
	for _, c := range creds {
		status := "not set"
		if c.Set {
			status = "set (value hidden)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Env, status, c.Provider)
	}
	return tw.Flush()
}

func format(v any) string {
	switch x := v.(type) {
	case []any:
		b, _ := json.Marshal(x)
		return string(b)
	default:
		return fmt.Sprint(x)
	}
}
