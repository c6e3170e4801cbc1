package personas

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/persona"
)

// NewOptions are the inputs of "sot personas new".
type NewOptions struct {
	IO *cmdutil.IOStreams
	// WorkDir is where sot runs; the file goes under the .sot of its
	// repository.
	WorkDir string
	// UserDir is the user level's directory ($XDG_CONFIG_HOME/sot), for
	// --user.
	UserDir string
	// Name is the new persona's name.
	Name string
	// Kind is --kind; "" makes a specialist.
	Kind string
	// Dir is --dir: write into this directory instead.
	Dir   string
	User  bool
	Force bool
}

func newNewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &NewOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "new NAME --kind specialist|lens|role|debater|observer",
		Short: "Write a new persona file from a template to fill in",
		Long: `Write a new persona file from a template to fill in. Specialists, roles,
debaters and observers go to .sot/personas/NAME.md, lenses to .sot/lenses/NAME.md
(with --user, under $XDG_CONFIG_HOME/sot/ instead).

Every part you must write is a placeholder <<TODO: what to write>>. Until
each one is replaced, the file takes no part in reviews, and 'sot personas
validate' names the placeholders left, with their lines.`,
		Example: `  sot personas new billing --kind specialist
  sot personas new regulator --kind lens --user`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			o.WorkDir = f.WorkDir()
			o.UserDir = f.PersonaDirs().User
			return RunNew(o)
		},
	}
	cmd.Flags().StringVar(&o.Kind, "kind", "specialist", "specialist, lens, role, debater or observer")
	cmd.Flags().StringVar(&o.Dir, "dir", "", "write into this directory instead")
	cmd.Flags().BoolVar(&o.User, "user", false, "write to the user level ($XDG_CONFIG_HOME/sot) instead of the project")
	cmd.Flags().BoolVar(&o.Force, "force", false, "overwrite an existing file")
	return cmd
}

// RunNew writes the template of a new persona and says how many
// placeholders are left to fill in.
func RunNew(o *NewOptions) error {
	k, err := parseKind(o.Kind)
	if err != nil {
		return err
	}
	if k == "" {
		k = persona.Specialist
	}
	name := strings.ToLower(o.Name)
	text, err := persona.Template(k, name)
	if err != nil {
		return cmdutil.AsUsage(err)
	}
	dir := o.Dir
	if dir == "" {
		base := filepath.Join(persona.RepoRoot(o.WorkDir), ".sot")
		if o.User {
			base = o.UserDir
		}
		sub := "personas"
		if k == persona.Lens {
			sub = "lenses"
		}
		dir = filepath.Join(base, sub)
	}
	path := filepath.Join(dir, name+".md")
	if _, err := os.Stat(path); err == nil && !o.Force {
		return cmdutil.UsageError("%s already exists; pass --force to overwrite it", path)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(o.IO.Out, "wrote %s\n", path)
	fmt.Fprintf(o.IO.ErrOut, "Replace its %d <<TODO: ...>> placeholders with your own text; until then it takes no part in reviews. Then check it with: sot personas validate %s\n",
		strings.Count(text, "<<TODO:"), path)
	return nil
}
