package personas

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/persona"
)

// ValidateOptions are the inputs of "sot personas validate".
type ValidateOptions struct {
	IO *cmdutil.IOStreams
	// Dirs are the levels checked when no path is given.
	Dirs persona.Dirs
	// Paths are the files and directories to check.
	Paths []string
	// Strict fails on warnings too.
	Strict bool
	JSON   bool
}

func newValidateCmd(f *cmdutil.Factory) *cobra.Command {
	o := &ValidateOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "validate [PATH...]",
		Short: "Check persona files and report problems as file:line messages",
		Long: `Check persona files and report problems as file:line messages. Without
arguments, every persona file at the project and user levels is checked. A
PATH may be a file or a directory (its .md files are checked; files in a
directory named lenses or perspectives are lenses).

Exits 1 when a file has an error (it would be skipped at review time); with
--strict, warnings count too.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Paths = args
			if len(args) == 0 {
				o.Dirs = f.PersonaDirs()
			}
			return RunValidate(o)
		},
	}
	cmd.Flags().BoolVar(&o.Strict, "strict", false, "fail on warnings too")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
	return cmd
}

// RunValidate checks persona files, prints their problems as file:line
// messages and fails (exit 1) on an error, or with Strict on a warning.
func RunValidate(o *ValidateOptions) error {
	var probs []persona.Problem
	var checked int
	if len(o.Paths) == 0 {
		files := persona.Files(o.Dirs)
		for _, file := range files {
			probs = append(probs, persona.ValidateFile(file.Path, file.Kind)...)
		}
		checked = len(files)
	}
	for _, a := range o.Paths {
		files, err := expand(a)
		if err != nil {
			return cmdutil.AsUsage(err)
		}
		for _, file := range files {
			probs = append(probs, persona.ValidateFile(file.Path, file.Kind)...)
		}
		checked += len(files)
	}
	if o.JSON {
		if err := writeJSON(o.IO.Out, struct {
			Checked  int               `json:"checked"`
			Problems []persona.Problem `json:"problems"`
		}{checked, probs}); err != nil {
			return err
		}
	} else {
		for _, p := range probs {
			fmt.Fprintln(o.IO.Out, cmdutil.Line(p.Error()))
		}
		fmt.Fprintf(o.IO.ErrOut, "checked %d persona file(s): %s\n", checked, summary(probs))
	}
	for _, p := range probs {
		if !p.Warning || o.Strict {
			return &cmdutil.ExitError{Code: cmdutil.ExitFailure}
		}
	}
	return nil
}

// expand turns a path argument into the files to check.
func expand(arg string) ([]persona.File, error) {
	fi, err := os.Stat(arg)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", arg, errors.Unwrap(err))
	}
	if !fi.IsDir() {
		return []persona.File{{Path: arg, Kind: persona.KindForDir(filepath.Dir(arg))}}, nil
	}
	var files []persona.File
	err = filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(strings.ToLower(p), ".md") {
			files = append(files, persona.File{Path: p, Kind: persona.KindForDir(filepath.Dir(p))})
		}
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, err
}

func summary(probs []persona.Problem) string {
	var errs, warns int
	for _, p := range probs {
		if p.Warning {
			warns++
		} else {
			errs++
		}
	}
	if errs+warns == 0 {
		return "no problems"
	}
	return fmt.Sprintf("%d error(s), %d warning(s)", errs, warns)
}
