// Package promptcmd implements "sot prompt": printing the composed prompt of
// one specialist, layer by layer, without calling any model.
package promptcmd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/internal/cmdutil"
	"github.com/sotlabs/sot/internal/tokens"
	"github.com/sotlabs/sot/persona"
	"github.com/sotlabs/sot/prompt"
)

// Options are the inputs of "sot prompt".
type Options struct {
	Specialist  string
	Lens        string
	Type        string
	Framing     string
	Coordinates string
	Material    string // a file, or - for stdin
	OutputDir   string
	MaxTokens   int
	Layers      bool
	JSON        bool
}

// NewCmd returns "sot prompt".
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "prompt --specialist NAME [--lens NAME] --type diff|artifacts|freeform",
		Short: "Print the prompt one specialist would receive, without calling a model",
		Long: `Print the system prompt one specialist would receive. Its layers come in
this order: the shared rules, the context preamble for the review type, the
material under review (fenced as data, once, so every specialist shares the
same prefix), the specialist, the lens overlay (when a lens is given), the
output format, and the review coordinates. --layers prints the layers and
their token counts instead.`,
		Example: `  git diff | sot prompt --specialist security --type diff --material -
  sot prompt --specialist assumptions --lens premortem --type artifacts --material docs/design.md
  sot prompt --specialist testing --type freeform --framing "Review this runbook." --layers`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return Run(f, o) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Specialist, "specialist", "", "the specialist (required)")
	fl.StringVar(&o.Lens, "lens", "", "a lens to overlay")
	fl.StringVar(&o.Type, "type", prompt.TypeDiff, "review type: diff, artifacts or freeform")
	fl.StringVar(&o.Framing, "framing", "", "the preamble of a freeform review")
	fl.StringVar(&o.Coordinates, "coordinates", "", "what is reviewed, as the specialist is told (a range, paths, a description)")
	fl.StringVar(&o.Material, "material", "", "file holding the material under review, or - for stdin")
	fl.StringVar(&o.OutputDir, "output-dir", ".sot/reviews/preview", "the output directory the coordinates name")
	fl.IntVar(&o.MaxTokens, "max-prompt-tokens", 0, "prompt budget in tokens; the lens overlay is cut first (0 = none)")
	fl.BoolVar(&o.Layers, "layers", false, "list the layers and their sizes instead of the text")
	fl.BoolVar(&o.JSON, "json", false, "print the prompt and its layers as JSON")
	return cmd
}

// Run composes and prints the prompt.
func Run(f *cmdutil.Factory, o *Options) error {
	if o.Specialist == "" {
		return cmdutil.UsageError("--specialist is required; run 'sot personas list --kind specialist' to see the names")
	}
	if _, err := prompt.Preamble(o.Type, ""); err != nil {
		return cmdutil.AsUsage(fmt.Errorf("--type: %w", err))
	}
	if o.Framing != "" && o.Type != prompt.TypeFreeform {
		return cmdutil.UsageError("--framing applies only to --type freeform")
	}
	lib, err := f.Library()
	if err != nil {
		return err
	}
	spec, ok := lib.Get(persona.Specialist, o.Specialist)
	if !ok {
		return cmdutil.UsageError("no specialist named %q; run 'sot personas list --kind specialist'", o.Specialist)
	}
	var lens *persona.Persona
	if o.Lens != "" {
		if lens, ok = lib.Get(persona.Lens, o.Lens); !ok {
			return cmdutil.UsageError("no lens named %q; run 'sot personas list --kind lens'", o.Lens)
		}
	}
	material, err := readMaterial(f, o.Material)
	if err != nil {
		return err
	}
	run := &prompt.Run{Type: o.Type, Framing: o.Framing, SharedRules: lib.SharedRules(), Material: material,
		Nonce: prompt.NewNonce(), Coordinates: o.Coordinates, OutputDir: o.OutputDir}
	c, err := run.Compose(spec, prompt.Options{Lens: lens, MaxTokens: o.MaxTokens})
	if err != nil {
		return err
	}
	for _, w := range c.Warnings {
		fmt.Fprintln(f.IO.ErrOut, "sot: warning: "+w)
	}
	type layer struct {
		Name   string `json:"name"`
		Bytes  int    `json:"bytes"`
		Tokens int    `json:"tokens"`
		Shared bool   `json:"shared"`
	}
	var layers []layer
	for _, l := range c.Layers {
		layers = append(layers, layer{l.Name, l.End - l.Start, tokens.Count(c.Text[l.Start:l.End]), l.End <= c.SharedPrefix})
	}
	switch {
	case o.JSON:
		enc := json.NewEncoder(f.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Prompt       string   `json:"prompt"`
			Tokens       int      `json:"tokens"`
			SharedPrefix int      `json:"shared_prefix_bytes"`
			Layers       []layer  `json:"layers"`
			Warnings     []string `json:"warnings,omitempty"`
		}{c.Text, c.Tokens(), c.SharedPrefix, layers, c.Warnings})
	case o.Layers:
		tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "LAYER\tBYTES\tTOKENS\tSHARED BY ALL SPECIALISTS")
		for _, l := range layers {
			shared := "no"
			if l.Shared {
				shared = "yes"
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", l.Name, l.Bytes, l.Tokens, shared)
		}
		fmt.Fprintf(tw, "total\t%d\t%d\t\n", len(c.Text), c.Tokens())
		return tw.Flush()
	}
	_, err = io.WriteString(f.IO.Out, c.Text)
	return err
}

func readMaterial(f *cmdutil.Factory, src string) (string, error) {
	var b []byte
	var err error
	switch src {
	case "":
		return "(no material given; pass --material FILE or --material - to read stdin)", nil
	case "-":
		b, err = io.ReadAll(f.IO.In)
	default:
		b, err = os.ReadFile(src)
	}
	if err != nil {
		return "", cmdutil.AsUsage(fmt.Errorf("read material: %w", err))
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", cmdutil.UsageError("the material is empty")
	}
	return string(b), nil
}
