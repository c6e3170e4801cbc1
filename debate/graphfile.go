package debate

import (
	"errors"
	"fmt"
	"os"

	"github.com/sotlabs/sot/debate/graph"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/safedir"
)

// This file holds the argument graph's own writes, which run outside the
// protocol: the graph's file, written by the Save hook OpenGraph gives the
// caller, and the directory of its retrieval index, made while a debate is
// planned.

// saveIn is the Save hook of the graph file at path under the project's
// top: graph.SaveIn, atomic, through no symlink.
func saveIn(top, path string) func(*graph.DebateDAG) error {
	return func(dag *graph.DebateDAG) error { return graph.SaveIn(top, path, dag) }
}

// indexDir creates the directory of the retrieval indexes, reached
// through no symlink, with a .gitignore that ignores it.
func indexDir(top, dir string) error {
	d, err := safedir.Open(top, dir)
	if err != nil {
		var se *safedir.SymlinkError
		if errors.As(err, &se) {
			return &engine.UserError{Msg: fmt.Sprintf("the graph's retrieval index %s: %v; sot writes nothing through a symlink: remove it", dir, err)}
		}
		return fmt.Errorf("create the graph's index directory: %w", err)
	}
	defer d.Close()
	if f, err := d.OpenFile(".gitignore", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
		f.WriteString("*\n")
		f.Close()
	}
	return nil
}
