// Package personas implements "sot personas": listing, showing, creating and
// validating persona files.
package personas

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/persona"
)

// NewCmd returns "sot personas".
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "personas",
		Aliases: []string{"persona"},
		Short:   "List, show, create and validate personas",
		Long: `Personas are Markdown files with YAML frontmatter. sot finds them at four
levels; for the same name the most specific level wins:

  1. explicit   files named by the caller (--specialists ./path/to/x.md)
  2. project    .sot/personas/ and .sot/lenses/ (also .paw/personas/ and .paw/perspectives/)
  3. user       $XDG_CONFIG_HOME/sot/personas/ and .../lenses/ (also ~/.paw/personas/ and ~/.paw/perspectives/)
  4. built-in   nine specialists, four lenses, seven roles, three debaters, three observers

Kinds: specialist, lens, role, debater, observer (and the shared rules,
_shared-rules.md, which a project or user file of that name overrides).`,
	}
	cmd.AddCommand(newListCmd(f), newShowCmd(f), newNewCmd(f), newValidateCmd(f))
	return cmd
}

func parseKind(s string) (persona.Kind, error) {
	if s == "" {
		return "", nil
	}
	for _, k := range persona.Kinds {
		if strings.EqualFold(string(k), s) {
			return k, nil
		}
	}
	return "", cmdutil.UsageError("--kind %q: use specialist, lens, role, debater, observer or shared-rules", s)
}

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
