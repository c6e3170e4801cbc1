package engine_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// scenarioPackages are the directories, from the module's top, of the
// packages that hold a scenario's plan, protocol and renderers. Every
// package under ask/ is one too (see TestProtocolsArePure).
var scenarioPackages = []string{
	"review", "review/finding", "review/report", "review/synthesis",
	"ask", "ask/corpus", "ask/route", "conflict",
	"debate", "debate/graph", "debate/graph/export",
}

// writers are the files of the scenario packages that may write files
// themselves, each with the reason; they may not start goroutines or read
// the clock either.
var writers = map[string]string{
	"review/save.go":          "resolving and moderating a finished review rewrite its outputs, after the run, where no protocol is under way",
	"ask/compare/compare.go":  "the comparison harness writes its report after every run it compared has finished",
	"ask/analyze/themes.go":   "themes.json is kept beside the corpus index, written once the naming call has answered",
	"review/empty.go":         "WriteEmpty writes the formats of a review with nothing to review, where no protocol runs",
	"review/resolve.go":       "resolving findings after a run appends each decision of the user to resolutions.jsonl as it is made",
	"ask/indexdir.go":         "OpenIndex makes the corpus index's directory and its .gitignore before a question is planned",
	"debate/graphfile.go":     "the graph file's Save hook that OpenGraph gives the caller, and the index directory made while planning",
	"debate/graph/file.go":    "the graph file's format: SaveIn writes it, and a debate calls it only through the caller's Graph.Save",
	"debate/graph/context.go": "a dry run's retrieval index lives in a temporary directory, as package index opens no in-memory database",
}

// impureCalls are the functions of the standard library a protocol may
// not call itself: they start timers, read the clock or write files.
var impureCalls = map[string][]string{
	"time": {"Now", "Sleep", "After", "AfterFunc", "Tick", "NewTimer", "NewTicker", "Since", "Until"},
	"os":   {"WriteFile", "Create", "CreateTemp", "OpenFile", "Mkdir", "MkdirAll", "MkdirTemp", "Remove", "RemoveAll", "Rename", "Symlink", "Link", "Chmod", "Truncate"},
}

// impureMethods are methods that write files, on whatever they are
// called (an *os.File, a safedir.Dir, a run directory).
var impureMethods = []string{"WriteFile", "OpenFile", "Remove", "RemoveAll", "Rename", "MkdirAll"}

// A scenario's protocol is pure, so that a durable executor can replay
// it from its journal: no non-test file of a scenario package starts a
// goroutine, reads the clock, sleeps or writes a file itself. Each goes
// through the Executor (engine.Detach), the hooks (engine.Hooks.Time),
// a leaf helper (internal/parallel), the scenario runner's writes or a
// hook the caller gives (debate.Graph.Save). Only the files in writers
// write files themselves, each for the reason given. A new subpackage of a
// scenario is checked as soon as it exists.
func TestProtocolsArePure(t *testing.T) {
	top := ".."
	dirs := slices.Clone(scenarioPackages)
	for _, root := range []string{"review", "ask", "debate"} {
		err := filepath.WalkDir(filepath.Join(top, root), func(path string, e fs.DirEntry, err error) error {
			if err != nil || !e.IsDir() {
				return err
			}
			if e.Name() == "testdata" {
				return filepath.SkipDir
			}
			d := filepath.ToSlash(strings.TrimPrefix(path, top+string(filepath.Separator)))
			if gos, _ := filepath.Glob(filepath.Join(path, "*.go")); len(gos) > 0 && !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for _, dir := range dirs {
		names, err := filepath.Glob(filepath.Join(top, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(names) == 0 {
			t.Errorf("%s: no Go file; is it still a scenario package?", dir)
		}
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			rel := dir + "/" + filepath.Base(name)
			seen[rel] = true
			_, writes := writers[rel]
			for _, v := range impurities(t, name) {
				if !(writes && v.write) {
					t.Errorf("%s:%d: %s", rel, v.line, v.what)
				}
			}
		}
	}
	for rel := range writers {
		if !seen[rel] {
			t.Errorf("%s is exempted but is not a file of a scenario package: take it off the list", rel)
		}
	}
}

type impurity struct {
	line  int
	what  string
	write bool // a file write, as opposed to a goroutine or the clock
}

// impurities lists what in the Go file at name a protocol may not do.
func impurities(t *testing.T, name string) []impurity {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	// The names the file gives the packages impureCalls lists.
	local := map[string]string{}
	for _, im := range f.Imports {
		path := strings.Trim(im.Path.Value, `"`)
		if _, ok := impureCalls[path]; !ok {
			continue
		}
		n := path
		if im.Name != nil {
			n = im.Name.Name
		}
		local[n] = path
	}
	var out []impurity
	add := func(n ast.Node, write bool, format string, args ...any) {
		out = append(out, impurity{fset.Position(n.Pos()).Line, fmt.Sprintf(format, args...), write})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			add(n, false, "a go statement: run concurrent work through a leaf helper (internal/parallel) or the Executor (engine.Detach)")
		case *ast.SelectorExpr:
			// A package's function, called or taken as a value.
			if id, ok := n.X.(*ast.Ident); ok {
				if path, ok := local[id.Name]; ok && slices.Contains(impureCalls[path], n.Sel.Name) {
					if path == "time" {
						add(n, false, "%s.%s: read the clock through engine.Hooks", path, n.Sel.Name)
					} else {
						add(n, true, "%s.%s: write files through the scenario runner or a hook", path, n.Sel.Name)
					}
					return true
				}
			}
		case *ast.CallExpr:
			// A method that writes, on anything but a package name.
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && slices.Contains(impureMethods, sel.Sel.Name) {
				if id, ok := sel.X.(*ast.Ident); !ok || local[id.Name] == "" {
					add(n, true, "a call of the method %s: write files through the scenario runner or a hook", sel.Sel.Name)
				}
			}
		}
		return true
	})
	return out
}
