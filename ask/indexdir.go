package ask

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/index"
	"github.com/sotlabs/sot/internal/safedir"
)

// This file opens the corpus index, the one file ask writes outside its
// run directory, before any question is planned.

// IndexDir is where a project keeps its corpus index, under its top.
var IndexDir = filepath.Join(".sot", "index")

// OpenIndex opens the corpus index of the project at top, creating it: a
// directory of its own that git ignores, reached through no symlink.
func OpenIndex(top string) (*index.Index, error) {
	dir := filepath.Join(top, IndexDir)
	d, err := safedir.Open(top, dir)
	if err != nil {
		var se *safedir.SymlinkError
		if errors.As(err, &se) {
			return nil, &engine.UserError{Msg: fmt.Sprintf("the corpus index %s: %v; sot writes nothing through a symlink: remove it", dir, err)}
		}
		return nil, fmt.Errorf("create the corpus index directory: %w", err)
	}
	defer d.Close()
	if f, err := d.OpenFile(".gitignore", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
		f.WriteString("*\n")
		f.Close()
	}
	ix, err := index.Open(filepath.Join(dir, "corpus.db"))
	if err != nil {
		return nil, fmt.Errorf("open the corpus index: %w", err)
	}
	return ix, nil
}
