// Package promptcmd implements "sot prompt": printing the prompt a review
// sends one specialist, layer by layer, without calling any model.
package promptcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/internal/tokens"
	"github.com/sotlabs/sot/persona"
	"github.com/sotlabs/sot/prompt"
	"github.com/sotlabs/sot/review"
)

// Options are the inputs of "sot prompt".
type Options struct {
	Specialist  string
	Lens        string
	Type        string
	Framing     string
	Coordinates string
	// Material: artifact paths for artifacts; a file or - for freeform. A
	// diff comes from git, as in a review (Diff, Staged).
	Material  []string
	Diff      string
	Staged    bool
	OutputDir string
	MaxTokens int
	Layers    bool
	JSON      bool
	NoTools   bool
}

// NewCmd returns "sot prompt".
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "prompt --specialist NAME [--lens NAME] [--type diff|artifacts|freeform]",
		Short: "Print the prompt a review sends one specialist, without calling a model",
		Long: `Print the system prompt a review sends one specialist, built by the same
code from the same material: the diff from git (with --diff or --staged as in
sot review), the documents given with --material, or freeform text from a
file or stdin. The material is rendered as the review renders it: line
numbers, secrets masked, credential files left out, split into chunks when it
exceeds the budget (this shows the first chunk).

The layers come in this order: the shared rules, the context preamble for the
review type, the material under review (fenced as data), the output format and
the review coordinates, which every specialist shares; then what the
specialist can look at (its read-only tools when its model can call them, or
what to do without them; --no-tools shows the latter), the specialist, the
lens overlay with its novelty constraint (when a lens is given), and how it
reports. --layers prints the layers and their token counts instead.

Only the fence's nonce differs from the review's: it is derived from the run,
and this preview makes no run.`,
		Example: `  sot prompt --specialist security                      # the working tree's changes, as sot review sends them
  sot prompt --specialist security --diff main...HEAD --lens red-team
  sot prompt --specialist assumptions --lens premortem --type artifacts --material docs/design.md
  git show | sot prompt --specialist testing --type freeform --material - --layers`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return Run(cmd.Context(), f, o) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Specialist, "specialist", "", "the specialist (required)")
	fl.StringVar(&o.Lens, "lens", "", "a lens to overlay")
	fl.StringVar(&o.Type, "type", prompt.TypeDiff, "review type: diff, artifacts or freeform")
	fl.StringVar(&o.Framing, "framing", "", "the preamble of a freeform review")
	fl.StringVar(&o.Coordinates, "coordinates", "", "what is reviewed, as the specialist is told (default: as a review says it)")
	fl.StringSliceVar(&o.Material, "material", nil, "artifacts: the documents (repeatable); freeform: a file, or - for stdin")
	fl.StringVar(&o.Diff, "diff", "", "diff: the range to review, as for sot review (default: the working tree against HEAD)")
	fl.BoolVar(&o.Staged, "staged", false, "diff: the staged changes")
	fl.StringVar(&o.OutputDir, "output-dir", "", "the output directory the coordinates name (default: the review's)")
	fl.IntVar(&o.MaxTokens, "max-prompt-tokens", 0, "prompt budget in tokens (default: from the model's context window)")
	fl.BoolVar(&o.Layers, "layers", false, "list the layers and their sizes instead of the text")
	fl.BoolVar(&o.NoTools, "no-tools", false, "the prompt of a specialist without tools, as sot review --no-tools sends it")
	fl.BoolVar(&o.JSON, "json", false, "print the prompt and its layers as JSON")
	return cmd
}

// Run plans the review a sot review with the same options would make and
// prints the prompt of the specialist's first call.
func Run(ctx context.Context, f *cmdutil.Factory, o *Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.Specialist == "" {
		return cmdutil.UsageError("--specialist is required; run 'sot personas list --kind specialist' to see the names")
	}
	if _, err := prompt.Preamble(o.Type, ""); err != nil {
		return cmdutil.AsUsage(fmt.Errorf("--type: %w", err))
	}
	if o.Framing != "" && o.Type != prompt.TypeFreeform {
		return cmdutil.UsageError("--framing applies only to --type freeform")
	}
	ro := review.Options{Options: scenario.Options{Dir: f.WorkDir(), Getenv: f.Getenv}, Context: review.Context{Type: o.Type, Framing: o.Framing, Coordinates: o.Coordinates, OutputDir: o.OutputDir,
		Specialists: o.Specialist, Perspectives: "none", Interactive: persona.InteractiveFalse}, In: f.IO.In, MaxPromptTokens: o.MaxTokens, NoTools: o.NoTools}
	if o.Lens != "" {
		ro.Context.Perspectives = o.Lens
	}
	switch o.Type {
	case prompt.TypeDiff:
		if len(o.Material) > 0 {
			return cmdutil.UsageError("a diff review reads its material from git, as sot review does: use --diff RANGE or --staged, or --type freeform --material FILE to see a patch file as freeform text")
		}
		ro.Diff, ro.Staged = o.Diff, o.Staged
	case prompt.TypeArtifacts:
		if len(o.Material) == 0 {
			return cmdutil.UsageError("--type artifacts needs the documents: --material docs/design.md (repeatable)")
		}
		ro.Artifacts = o.Material
	case prompt.TypeFreeform:
		if len(o.Material) != 1 {
			return cmdutil.UsageError("--type freeform needs one --material: a file, or - for stdin")
		}
		ro.Content = o.Material[0]
	}
	if (o.Diff != "" || o.Staged) && o.Type != prompt.TypeDiff {
		return cmdutil.UsageError("--diff and --staged apply only to --type diff")
	}
	cfg, _, err := f.Config()
	if err != nil {
		return err
	}
	lib, err := f.Library()
	if err != nil {
		return err
	}
	if _, ok := lib.Get(persona.Specialist, o.Specialist); !ok {
		return cmdutil.UsageError("no specialist named %q; run 'sot personas list --kind specialist'", o.Specialist)
	}
	if o.Lens != "" {
		if _, ok := lib.Get(persona.Lens, o.Lens); !ok {
			return cmdutil.UsageError("no lens named %q; run 'sot personas list --kind lens'", o.Lens)
		}
	}
	ro.Config, ro.Library = cfg, lib
	if _, err := cfg.ResolveModel(""); err != nil {
		// No call is made: any model will do to plan the prompt.
		ro.Model = "command:preview"
	}
	plan, err := review.Prepare(ctx, &ro)
	switch {
	case errors.Is(err, review.ErrNoChanges):
		return cmdutil.UsageError("there are no changes to show; give --diff RANGE or --staged, or change something")
	case err != nil:
		var nothing *review.NothingReviewableError
		if errors.As(err, &nothing) {
			return cmdutil.UsageError("nothing to show: every file was skipped (%d), as a review would skip them", len(nothing.Skipped))
		}
		return cmdutil.AsUsage(err)
	}
	for _, w := range plan.Warnings {
		cmdutil.Warn(f.IO.ErrOut, w)
	}
	c, user, err := plan.ComposedPrompt(o.Specialist, o.Lens)
	if err != nil {
		return cmdutil.AsUsage(err)
	}
	for _, w := range c.Warnings {
		cmdutil.Warn(f.IO.ErrOut, w)
	}
	if len(plan.Chunks) > 1 {
		fmt.Fprintf(f.IO.ErrOut, "sot: the material is split into %d chunks; this is the first chunk's prompt\n", len(plan.Chunks))
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
			User         string   `json:"user_message"`
			Tokens       int      `json:"tokens"`
			SharedPrefix int      `json:"shared_prefix_bytes"`
			Layers       []layer  `json:"layers"`
			Chunks       int      `json:"chunks"`
			Warnings     []string `json:"warnings,omitempty"`
		}{c.Text, user, c.Tokens(), c.SharedPrefix, layers, len(plan.Chunks), c.Warnings})
	case o.Layers:
		tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "LAYER\tBYTES\tTOKENS\tSHARED BY ALL SPECIALISTS")
		for _, l := range layers {
			shared := "no"
			if l.Shared {
				shared = "yes"
			}
			cmdutil.Fprintf(tw, "%s\t%d\t%d\t%s\n", l.Name, l.Bytes, l.Tokens, shared)
		}
		fmt.Fprintf(tw, "total\t%d\t%d\t\n", len(c.Text), c.Tokens())
		return tw.Flush()
	}
	// The prompt holds the material as it is; on the terminal its control
	// characters are escaped (--json gives the exact text).
	_, err = io.WriteString(f.IO.Out, cmdutil.Text(c.Text+"\n# User message\n\n"+user+"\n"))
	return err
}
