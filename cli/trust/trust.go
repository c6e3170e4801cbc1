// Package trust implements "sot trust": letting a project file make the
// settings that only the user may make, listing the files trusted and
// revoking that trust.
package trust

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/internal/project"
)

// Options are the inputs of "sot trust".
type Options struct {
	IO      *cmdutil.IOStreams
	Store   *config.TrustStore
	WorkDir string
	// Ignored are the settings of project files that the configuration
	// left out because they are not trusted (for the report of what a new
	// trust unlocks).
	Ignored func() []config.Ignored
	Files   []string
	List    bool
	Revoke  bool
	JSON    bool
}

// NewCmd returns "sot trust".
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "trust [FILE...]",
		Short: "Let a project file set what only you may set (programs, endpoints, keys, limits)",
		Long: `A repository you review is data. Its .sot/config.yaml, its personas, a
--context-file and a WorkflowContext.md may choose which specialists run and
how the output looks, but sot ignores, with a warning, anything in them that
could run a program (a command: model, a provider's type or program), send
your key elsewhere (base_url), choose which secret is sent (api_key_env,
api_key), move the response cache, or loosen your budget, retries,
concurrency or prices. A project may still tighten your limits.

When the file is yours, or you have read it, "sot trust FILE" records its
path and a SHA-256 of its content in your state directory
($XDG_STATE_HOME/sot/trusted.json, or ~/.local/state/sot/trusted.json).
It also records every file of the project that the trusted file makes sot
run or read as instructions: a program: script, or a file named on the
command line of a command: model (command:python3 .sot/agent.py). From then
on sot applies it as written. A change to the file, or to any file it runs,
ends the trust with a warning that says what changed, until you trust it
anew. No environment variable or CI
setting trusts a project for you.

Without FILE, sot trust names the project's .sot/config.yaml. A project
alias never replaces one of your own aliases, trusted or not.`,
		Example: `  sot trust                         # trust this project's .sot/config.yaml as it is now
  sot trust .sot/personas/local.md  # let this persona pick a command: model
  sot trust --list                  # every trusted file, and whether it changed since
  sot trust --revoke                # stop trusting the project's .sot/config.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			opts.Store = f.Trust()
			opts.WorkDir = f.WorkDir()
			opts.Ignored = func() []config.Ignored {
				// Loaded here rather than through the factory, which would
				// print the warnings this command is answering.
				if _, _, err := f.Loader.Load(); err != nil {
					return nil
				}
				return f.Loader.Ignored()
			}
			return Run(opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.List, "list", false, "list the trusted files and whether each changed since it was trusted")
	fl.BoolVar(&opts.Revoke, "revoke", false, "stop trusting the files (default: the project's .sot/config.yaml)")
	fl.BoolVar(&opts.JSON, "json", false, "with --list, print JSON")
	return cmd
}

// Run carries out "sot trust".
func Run(o *Options) error {
	if o.List && (o.Revoke || len(o.Files) > 0) {
		return cmdutil.UsageError("--list takes no files and no --revoke")
	}
	if o.JSON && !o.List {
		return cmdutil.UsageError("--json works with --list")
	}
	if o.Store == nil {
		return fmt.Errorf("no state directory to keep trust in: set XDG_STATE_HOME or HOME")
	}
	if o.List {
		return list(o)
	}
	files := o.Files
	if len(files) == 0 {
		p := config.ProjectFile(o.WorkDir)
		if p == "" {
			return cmdutil.UsageError("no .sot/config.yaml found from %s up to the repository root; name the files to trust", o.WorkDir)
		}
		files = []string{rel(o.WorkDir, p)}
	}
	if o.Revoke {
		for _, file := range files {
			had, err := o.Store.Revoke(file)
			if err != nil {
				return err
			}
			if had {
				fmt.Fprintf(o.IO.Out, "sot: %s is no longer trusted\n", file)
			} else {
				fmt.Fprintf(o.IO.Out, "sot: %s was not trusted\n", file)
			}
		}
		return nil
	}
	var ignored []config.Ignored
	if o.Ignored != nil {
		ignored = o.Ignored()
	}
	for _, file := range files {
		fi, err := os.Stat(file)
		if errors.Is(err, fs.ErrNotExist) {
			return cmdutil.UsageError("%s does not exist", file)
		}
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return cmdutil.UsageError("%s is a directory; trust names files (a .sot/config.yaml, a persona, a context file or a WorkflowContext.md)", file)
		}
		rec, err := o.Store.Add(file, o.WorkDir)
		if err != nil {
			return err
		}
		fmt.Fprintf(o.IO.Out, "sot: trusted %s (sha256 %s); a change to it makes it untrusted again\n", file, rec.SHA256[:12])
		for _, ref := range rec.Refs {
			cmdutil.Fprintf(o.IO.Out, "sot: it runs or reads %s (sha256 %s); a change to that file also ends the trust\n", rel(o.WorkDir, ref.Path), ref.SHA256[:12])
		}
		if keys := unlocked(ignored, rec.Path, o.WorkDir); len(keys) > 0 {
			fmt.Fprintf(o.IO.Out, "sot: it may now set %s\n", strings.Join(keys, ", "))
		}
	}
	return nil
}

// unlocked lists the settings of the file at path that were ignored for
// lack of trust.
func unlocked(items []config.Ignored, path, wd string) []string {
	var keys []string
	for _, it := range items {
		p := it.File
		if !filepath.IsAbs(p) {
			p = filepath.Join(wd, p)
		}
		if real, err := project.Resolve(p); err == nil && real == path && it.Trustable {
			keys = append(keys, it.Key)
		}
	}
	return keys
}

func list(o *Options) error {
	recs, err := o.Store.List(o.WorkDir)
	if err != nil {
		return err
	}
	if o.JSON {
		enc := json.NewEncoder(o.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Store string               `json:"store"`
			Files []config.TrustStatus `json:"files"`
		}{o.Store.Path, append([]config.TrustStatus{}, recs...)})
	}
	if len(recs) == 0 {
		fmt.Fprintf(o.IO.Out, "sot: no file is trusted (%s)\n", o.Store.Path)
		return nil
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE\tFILE\tSHA256\tTRUSTED")
	for _, r := range recs {
		state := r.State
		switch state {
		case "changed":
			state = "changed (not trusted)"
		case "lapsed":
			state = "lapsed (not trusted)"
		}
		cmdutil.Fprintf(tw, "%s\t%s\t%s\t%s\n", state, r.Path, r.SHA256[:12], r.Trusted.Format("2006-01-02 15:04"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range recs {
		if r.State == "lapsed" {
			cmdutil.Say(o.IO.Out, r.Why)
		}
	}
	return nil
}

func rel(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil {
		return r
	}
	return path
}
