package main

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/sotlabs/sot/"

// tier names the part of the tree a package belongs to, by its path in
// the module.
func tier(pkg string) string {
	p := strings.TrimPrefix(pkg, module)
	switch {
	case p == "cmd/sot" || p == "cmd/llmtest":
		return "main"
	case strings.HasPrefix(p, "cli/"):
		return "cli"
	case p == "review" || strings.HasPrefix(p, "review/"):
		return "scenario:review"
	case p == "ask" || strings.HasPrefix(p, "ask/"):
		return "scenario:ask"
	case p == "debate" || strings.HasPrefix(p, "debate/"):
		return "scenario:debate"
	case p == "engine" || strings.HasPrefix(p, "engine/"):
		return "engine"
	case p == "llm" || strings.HasPrefix(p, "llm/"):
		return "llm"
	case strings.HasPrefix(p, "internal/"):
		return "internal"
	}
	return "helper" // config, persona, prompt, material, lexical, index, conflict
}

// The tree reads top-down as front ends, scenarios, engine, leaves, and no
// import runs back up: what `go list -deps` shows for every package of the
// module (its non-test imports, followed to the end).
func TestImportsPointDown(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "github.com/sotlabs/sot/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, module) {
				imports[f[0]] = append(imports[f[0]], imp)
			}
		}
		if _, ok := imports[f[0]]; !ok {
			imports[f[0]] = nil
		}
	}
	deps := func(pkg string) []string {
		seen := map[string]bool{}
		var walk func(string)
		walk = func(p string) {
			for _, d := range imports[p] {
				if !seen[d] {
					seen[d] = true
					walk(d)
				}
			}
		}
		walk(pkg)
		var list []string
		for d := range seen {
			list = append(list, d)
		}
		sort.Strings(list)
		return list
	}
	var bad []string
	for pkg := range imports {
		from := tier(pkg)
		for _, dep := range deps(pkg) {
			to := tier(dep)
			switch {
			case to == "main":
				bad = append(bad, pkg+" depends on the command "+dep)
			case to == "cli" && from != "cli" && from != "main":
				bad = append(bad, pkg+" is a library and depends on the CLI package "+dep)
			case strings.HasPrefix(to, "scenario:") && strings.HasPrefix(from, "scenario:") && to != from:
				bad = append(bad, pkg+" is a scenario and depends on another scenario's package "+dep)
			case strings.HasPrefix(to, "scenario:") && (from == "engine" || from == "llm" || from == "internal" || from == "helper"):
				bad = append(bad, pkg+" lies below the scenarios and depends on "+dep)
			case to == "engine" && (from == "llm" || from == "internal" && !strings.HasSuffix(pkg, "/internal/status")):
				bad = append(bad, pkg+" lies below the engine and depends on "+dep)
			}
		}
	}
	slices.Sort(bad)
	for _, b := range bad {
		t.Error(b)
	}
	if len(imports) < 40 {
		t.Fatalf("go list found %d packages; the module has more (is the pattern right?)", len(imports))
	}
}
