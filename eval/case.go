// Package eval measures what a review finds: it reads cases (a small
// repository, a change to it, and the defects planted in the change, or
// none for a clean change), builds each case's repository, matches the
// findings a review reported to the planted defects by file, lines and
// category, and turns the matches into recall, precision, F1 and false
// findings per clean case, each with a confidence interval by bootstrap
// over the cases.
package eval

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/sotlabs/sot/internal/yamlfile"
)

// Kinds of case.
const (
	KindDefect = "defect" // the change plants one or more defects
	KindClean  = "clean"  // the change has none
)

// Categories are the kinds of defect a case may plant.
var Categories = []string{"injection", "error-handling", "concurrency", "off-by-one", "secret", "boundary",
	"performance", "missing-test", "resource-leak", "nil-deref", "auth", "validation", "logic"}

// Defect is one planted defect: where it is in the changed version of a
// file, what kind it is, and what it is.
type Defect struct {
	File        string `yaml:"file" json:"file"`
	Lines       []int  `yaml:"lines" json:"lines"` // [start, end], 1-based, inclusive
	Category    string `yaml:"category" json:"category"`
	Description string `yaml:"description" json:"description"`
}

// Start and End are the defect's lines.
func (d Defect) Start() int { return d.Lines[0] }
func (d Defect) End() int   { return d.Lines[len(d.Lines)-1] }

// Case is a repository state, a change to it, and what the change plants.
type Case struct {
	ID       string   `yaml:"id" json:"id"`
	Language string   `yaml:"language" json:"language"`
	Kind     string   `yaml:"kind" json:"kind"`
	Summary  string   `yaml:"summary" json:"summary"`
	Defects  []Defect `yaml:"defects" json:"defects"`
	// Before holds every file of the repository before the change; After
	// the files the change adds or modifies; Deleted those it removes.
	Before  map[string][]byte `yaml:"-" json:"-"`
	After   map[string][]byte `yaml:"-" json:"-"`
	Deleted []string          `yaml:"-" json:"-"`
	// Diff, for a case imported as a diff alone (no repository), is the
	// change as a unified diff; Before and After are then empty.
	Diff string `yaml:"-" json:"-"`
	// Source names where the case came from: its file.
	Source string `yaml:"-" json:"source"`
}

//go:embed cases
var builtin embed.FS

// Builtin returns the cases sot ships: written for sot, in Go, Python and
// TypeScript.
func Builtin() ([]Case, error) {
	sub, err := fs.Sub(builtin, "cases")
	if err != nil {
		return nil, err
	}
	return Load(sub)
}

// Load reads every .txtar case under fsys, in path order, and checks each
// (see Parse); ids must be unique.
func Load(fsys fs.FS) ([]Case, error) {
	var cases []Case
	seen := map[string]string{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".txtar" {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		c, err := Parse(p, b)
		if err != nil {
			return err
		}
		if other, ok := seen[c.ID]; ok {
			return fmt.Errorf("%s: id %q is also the id of %s", p, c.ID, other)
		}
		seen[c.ID] = p
		cases = append(cases, c)
		return nil
	})
	return cases, err
}

// Parse reads one case from a txtar archive: case.yaml, the files before
// the change under before/, the files it adds or modifies under after/,
// and those it deletes under deleted/. A defect's lines must lie inside
// its file as the change leaves it.
func Parse(name string, data []byte) (Case, error) {
	ar := txtar.Parse(data)
	c := Case{Before: map[string][]byte{}, After: map[string][]byte{}, Source: name}
	var meta []byte
	for _, f := range ar.Files {
		switch {
		case f.Name == "case.yaml":
			meta = f.Data
		case strings.HasPrefix(f.Name, "before/"):
			c.Before[strings.TrimPrefix(f.Name, "before/")] = f.Data
		case strings.HasPrefix(f.Name, "after/"):
			c.After[strings.TrimPrefix(f.Name, "after/")] = f.Data
		case strings.HasPrefix(f.Name, "deleted/"):
			c.Deleted = append(c.Deleted, strings.TrimPrefix(f.Name, "deleted/"))
		default:
			return c, fmt.Errorf("%s: %q is neither case.yaml nor under before/, after/ or deleted/", name, f.Name)
		}
	}
	if meta == nil {
		return c, fmt.Errorf("%s: no case.yaml", name)
	}
	if err := yamlfile.Decode(name+": case.yaml", meta, &c, true, 0); err != nil {
		return c, err
	}
	return c, c.check()
}

// check refuses a case that cannot be scored.
func (c *Case) check() error {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("%s: case %s: %s", c.Source, c.ID, fmt.Sprintf(format, a...))
	}
	if c.ID == "" {
		return fmt.Errorf("%s: case.yaml has no id", c.Source)
	}
	switch c.Kind {
	case KindDefect:
		if len(c.Defects) == 0 {
			return fail("a defect case plants no defect")
		}
	case KindClean:
		if len(c.Defects) > 0 {
			return fail("a clean case plants %d defect(s)", len(c.Defects))
		}
	default:
		return fail("kind %q: give defect or clean", c.Kind)
	}
	if c.Diff == "" && len(c.After) == 0 && len(c.Deleted) == 0 {
		return fail("the change changes nothing: list the files it adds or modifies under after/")
	}
	for _, p := range append(append(sortedKeys(c.Before), sortedKeys(c.After)...), c.Deleted...) {
		if !fs.ValidPath(p) || strings.HasPrefix(p, ".git/") || p == ".git" {
			return fail("%q is not a plain relative path", p)
		}
	}
	for i, d := range c.Defects {
		if !slices.Contains(Categories, d.Category) {
			return fail("defect %d: category %q is not one of %s", i+1, d.Category, strings.Join(Categories, ", "))
		}
		if len(d.Lines) == 0 || len(d.Lines) > 2 || d.Start() < 1 || d.End() < d.Start() {
			return fail("defect %d: lines %v: give [start, end], 1-based", i+1, d.Lines)
		}
		if c.Diff != "" {
			continue // an imported diff: its files are not known whole
		}
		text, ok := c.After[d.File]
		if !ok {
			text, ok = c.Before[d.File]
			if ok && slices.Contains(c.Deleted, d.File) {
				ok = false
			}
		}
		if !ok {
			return fail("defect %d: %s is not a file of the changed repository", i+1, d.File)
		}
		if n := strings.Count(strings.TrimSuffix(string(text), "\n"), "\n") + 1; d.End() > n {
			return fail("defect %d: lines %v run past the end of %s (%d lines)", i+1, d.Lines, d.File, n)
		}
	}
	return nil
}
