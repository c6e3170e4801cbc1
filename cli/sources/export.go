package sources

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/ask"
	"github.com/sotlabs/sot/ask/corpus"
	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/index"
	"github.com/sotlabs/sot/internal/project"
)

func newExportCmd(f *cmdutil.Factory, o *Options) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "export SOURCE",
		Short: "Write a source as a northstar agent file, with its SoT metadata",
		Long: `Write an indexed source as a northstar.LM agent file: Markdown with
northstar's frontmatter and sections, ending in the export payload, which
holds the source's SoT metadata (from its own payload, or from sot sources
analyze). northstar imports the file; so does sot sources add, which reads
every field back. SOURCE names the source as in sot sources show: its id,
a unique start of it, its path or its exact title.

The source's file is read again when it is still there with the same
content, so its sections and analysis are kept as they are; otherwise the
source is rebuilt from the index, its text becoming the transcript.

The file goes to standard output, or to --output FILE, which is replaced
atomically and never written through a symlink.`,
		Example: `  sot sources export 3f2a9c1e0b7d4a65 > q3-planning.md
  sot sources export 3f2a9c1e0b7d4a65 --output exports/q3-planning.md`,
		Args: exactly(1, "export takes one source id, a start of one, a source's path or its title (see 'sot sources list')"),
		RunE: func(c *cobra.Command, args []string) error {
			o.WorkDir = f.WorkDir()
			return Export(c.Context(), o, args[0], output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "-", "the file to write; - for standard output")
	return cmd
}

// exported says what Export wrote.
type exported struct {
	ID     string `json:"id"`
	Output string `json:"output"`
	// From is "file" when the source's file was read again, "index" when
	// the source was rebuilt from the index.
	From string `json:"from"`
	// Metadata is where the SoT metadata came from: "payload",
	// "analysis" or "none".
	Metadata string `json:"metadata"`
}

// Export writes one source as a northstar agent file.
func Export(ctx context.Context, o *Options, id, output string) error {
	toStdout := output == "" || output == "-"
	if toStdout && o.JSON {
		return cmdutil.UsageError("export writes the agent file to standard output; with --json, name the file with --output")
	}
	ix, err := open(o)
	if err != nil {
		return err
	}
	defer ix.Close()
	d, err := get(ctx, ix, o.WorkDir, id)
	if err != nil {
		return err
	}
	s, from := exportSource(d, o.WorkDir)
	b := corpus.Export(s)
	res := exported{ID: d.ID, Output: output, From: from, Metadata: metadataFrom(d)}
	if from == "index" {
		cmdutil.Fprintf(o.IO.ErrOut, "sot: %s is gone or has changed since it was indexed: the source is rebuilt from the index, its text as the transcript\n", d.Path)
	}
	if toStdout {
		res.Output = "-"
		_, err := o.IO.Out.Write(b)
		return err
	}
	path := output
	if !filepath.IsAbs(path) && o.WorkDir != "" {
		path = filepath.Join(o.WorkDir, path)
	}
	if err := writeFile(path, b); err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(o.IO.Out, res)
	}
	fmt.Fprintf(o.IO.Out, "sot: wrote %s, a northstar agent file with %s (sot sources add reads it back)\n", project.FromWorkDir(path), map[string]string{
		"payload": "the SoT metadata of its export payload", "analysis": "the SoT metadata sot analysed", "none": "no SoT metadata (see sot sources analyze)"}[res.Metadata])
	return nil
}

// metadataFrom says where a source's metadata comes from.
func metadataFrom(d index.Doc) string {
	switch {
	case ask.PayloadMetadata(d) != nil:
		return "payload"
	case ask.MetadataOf(d) != nil:
		return "analysis"
	}
	return "none"
}

// exportSource is the source to export: its file read again when it is
// still there with the content indexed (which keeps an export's sections),
// else the source rebuilt from the index. Either way it carries the
// source's SoT metadata, the payload's or the analysis's.
func exportSource(d index.Doc, workDir string) (corpus.Source, string) {
	meta := ask.MetadataOf(d)
	for _, p := range candidatePaths(d.Path, workDir) {
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		srcs, _, _ := corpus.Load([]string{p}, corpus.Options{})
		for _, s := range srcs {
			if s.Hash == d.Hash && s.ID == d.ID {
				if s.Metadata == nil {
					s.Metadata = meta
				}
				return s, "file"
			}
		}
	}
	return corpus.Source{ID: d.ID, Path: d.Path, Title: d.Title, Type: d.Type, Date: d.Date, Text: d.Text, Metadata: meta, Hash: d.Hash}, "index"
}

// candidatePaths are where a source's file may be: its path as indexed,
// from the working directory and from the project's top.
func candidatePaths(path, workDir string) []string {
	if path == "" {
		return nil
	}
	if filepath.IsAbs(path) {
		return []string{path}
	}
	var out []string
	if workDir != "" {
		out = append(out, filepath.Join(workDir, path))
	}
	if top := ask.ProjectTop(workDir); top != "" {
		if p := filepath.Join(top, path); len(out) == 0 || p != out[0] {
			out = append(out, p)
		}
	}
	return out
}

// writeFile replaces path with data atomically: a new file with an
// unpredictable name, created exclusively beside it, renamed over it. A
// symlink at path is refused, never written through, and so is anything
// but a regular file.
func writeFile(path string, data []byte) error {
	if fi, err := os.Lstat(path); err == nil {
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return cmdutil.UsageError("--output %s is a symlink; sot writes nothing through a symlink: remove it or name another file", path)
		case !fi.Mode().IsRegular():
			return cmdutil.UsageError("--output %s is not a regular file", path)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp") // O_CREATE|O_EXCL: never through a link
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return cmdutil.UsageError("--output %s: the directory %s does not exist", path, dir)
		}
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// rename replaces a name, never what a link there points to.
	if err := os.Rename(name, path); err != nil {
		return err
	}
	ok = true
	return nil
}
