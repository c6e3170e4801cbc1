package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/sotlabs/sot/internal/project"
	"github.com/sotlabs/sot/llm"
)

// Ignored is a setting of a project file that sot did not apply: the file
// is not trusted and the setting could run a program, send a key elsewhere,
// choose which secret is sent or loosen the user's spending limits; or it
// would shadow one of the user's aliases.
type Ignored struct {
	File   string `json:"file"`
	Line   int    `json:"line,omitempty"`
	Key    string `json:"key"`
	Reason string `json:"reason"`
	// Trustable is false when trusting the file would not change anything
	// (a project alias never shadows the user's).
	Trustable bool `json:"trustable"`
}

// Reasons a project setting is ignored.
const (
	whyProgram  = "could run a program"
	whyEndpoint = "would send your key to an endpoint the project chose"
	whySecret   = "would choose which secret is sent"
	whyProvider = "defines a provider of its own"
	whyCache    = "would move the response cache"
	whyNoCache  = "would turn the response cache off, paying again for answers you have"
	whyLimit    = "would loosen your limit"
	whyPrice    = "would lower the prices counted against your budget"
	whyShadow   = "would shadow your alias of the same name"
	whyCorpus   = "would send files from outside the project"
)

// ProjectWarning formats the ignored settings of one file as one warning,
// naming the file, each key and how to trust the file.
func ProjectWarning(items []Ignored) string {
	if len(items) == 0 {
		return ""
	}
	var parts []string
	trustable := false
	for _, it := range items {
		where := ""
		if it.Line > 0 {
			where = fmt.Sprintf("line %d: ", it.Line)
		}
		parts = append(parts, fmt.Sprintf("%s (%s%s)", it.Key, where, it.Reason))
		trustable = trustable || it.Trustable
	}
	msg := fmt.Sprintf("%s is not trusted, so sot ignored %s", items[0].File, strings.Join(parts, "; "))
	if trustable {
		msg += fmt.Sprintf(". If you wrote this file or have read it, trust it as it is now with: sot trust %s", items[0].File)
	}
	return msg
}

// ProjectWarnings groups ignored settings by file, one warning each.
func ProjectWarnings(items []Ignored) []string {
	byFile := map[string][]Ignored{}
	var files []string
	for _, it := range items {
		if _, ok := byFile[it.File]; !ok {
			files = append(files, it.File)
		}
		byFile[it.File] = append(byFile[it.File], it)
	}
	var out []string
	for _, f := range files {
		out = append(out, ProjectWarning(byFile[f]))
	}
	return out
}

// scopeProject drops from an untrusted project file's flattened settings
// every one that only the user may make, judged against base (the
// configuration of the defaults and the user's file) by the key's Policy.
// A trusted file keeps everything but aliases that would shadow the user's.
func scopeProject(file, top string, data []byte, flat map[string]any, base *Config, trusted bool) (map[string]any, []Ignored) {
	kept := map[string]any{}
	var ignored []Ignored
	drop := func(key, why string) {
		ignored = append(ignored, Ignored{File: file, Key: strings.ReplaceAll(key, sep, "."), Reason: why, Trustable: why != whyShadow})
	}
	keys := make([]string, 0, len(flat))
	for k := range flat {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	droppedProvider := map[string]bool{}
	prices := map[string]map[string]any{}
	for _, k := range keys {
		v := flat[k]
		parts := strings.Split(k, sep)
		if parts[0] == "aliases" && len(parts) == 2 {
			if _, ok := base.Aliases[parts[1]]; ok {
				drop(k, whyShadow)
				continue
			}
		}
		if trusted {
			kept[k] = v
			continue
		}
		if parts[0] == "providers" && len(parts) >= 2 {
			if _, ok := base.Providers[parts[1]]; !ok {
				if !droppedProvider[parts[1]] {
					droppedProvider[parts[1]] = true
					drop("providers"+sep+parts[1], whyProvider)
				}
				continue
			}
		}
		if parts[0] == "prices" && len(parts) >= 3 {
			// Judged per model, once all its fields are known.
			if prices[parts[1]] == nil {
				prices[parts[1]] = map[string]any{}
			}
			prices[parts[1]][parts[2]] = v
			continue
		}
		if why := policyOf(parts).allows(v, parts, base, top); why != "" {
			drop(k, why)
			continue
		}
		kept[k] = v
	}
	if !trusted {
		ignored = append(ignored, scopeModels(file, kept, base)...)
		ignored = append(ignored, scopePrices(file, kept, prices, base)...)
	}
	lines := keyLines(data, ignored)
	for i := range ignored {
		ignored[i].Line = lines[ignored[i].Key]
	}
	// In the file's order, as a reader meets them.
	sort.SliceStable(ignored, func(i, j int) bool {
		if ignored[i].Line != ignored[j].Line {
			return ignored[i].Line < ignored[j].Line
		}
		return ignored[i].Key < ignored[j].Key
	})
	return kept, ignored
}

// scopeModels drops project aliases and a default model that name a model
// run by a program: a command provider, directly or through an alias.
func scopeModels(file string, kept map[string]any, base *Config) []Ignored {
	var ignored []Ignored
	merged := &Config{Aliases: map[string]string{}, Providers: base.Providers}
	for a, t := range base.Aliases {
		merged.Aliases[a] = t
	}
	for k, v := range kept {
		if parts := strings.Split(k, sep); parts[0] == "aliases" && len(parts) == 2 {
			if s, ok := v.(string); ok {
				merged.Aliases[parts[1]] = s
			}
		}
	}
	var bad []string
	for k, v := range kept {
		parts := strings.Split(k, sep)
		isModel := k == "default_model" || parts[0] == "aliases" && len(parts) == 2
		if s, ok := v.(string); ok && isModel && merged.RunsProgram(s) {
			bad = append(bad, k)
		}
	}
	sort.Strings(bad)
	for _, k := range bad {
		delete(kept, k)
		ignored = append(ignored, Ignored{File: file, Key: strings.ReplaceAll(k, sep, "."), Reason: whyProgram, Trustable: true})
	}
	return ignored
}

// scopePrices keeps a project's price of a model only where it does not
// lower what sot would otherwise count for that model.
func scopePrices(file string, kept map[string]any, prices map[string]map[string]any, base *Config) []Ignored {
	var ignored []Ignored
	table := llm.DefaultPrices().Merge(base.Prices)
	names := make([]string, 0, len(prices))
	for n := range prices {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		fields := prices[name]
		b, _ := json.Marshal(fields)
		var p llm.Price
		if json.Unmarshal(b, &p) != nil {
			continue // the strict decode of the file has reported it
		}
		if cur, ok := table.Lookup(name); ok && lowerPrice(p, cur) {
			ignored = append(ignored, Ignored{File: file, Key: "prices." + name, Reason: whyPrice, Trustable: true})
			continue
		}
		for f, v := range fields {
			kept["prices"+sep+name+sep+f] = v
		}
	}
	return ignored
}

// lowerPrice reports whether p charges less than cur for any kind of token.
func lowerPrice(p, cur llm.Price) bool {
	eff := func(v, fallback float64) float64 {
		if v == 0 {
			return fallback
		}
		return v
	}
	return p.Input < cur.Input || p.Output < cur.Output ||
		eff(p.CachedInput, p.Input) < eff(cur.CachedInput, cur.Input) ||
		eff(p.CacheWrite, p.Input) < eff(cur.CacheWrite, cur.Input)
}

// RunsProgram reports whether a model reference (or alias) resolves to a
// provider that runs a local program.
func (c *Config) RunsProgram(model string) bool {
	ref, err := c.ResolveModel(model)
	if err != nil {
		// An unresolvable name runs nothing, unless it is spelled as one.
		return strings.HasPrefix(strings.TrimSpace(strings.ToLower(model)), llm.ProviderCommand+":")
	}
	return c.ProviderType(ref.Provider) == llm.ProviderCommand
}

// tighterCount: a positive count no higher than the current one (0 means
// none is set).
func tighterCount(v any, cur int) bool {
	n, ok := number(v)
	return ok && n >= 1 && (cur <= 0 || n <= float64(cur))
}

// tighterBudget: a positive limit no higher than the current one (0 means
// no limit), or the same as the current one.
func tighterBudget(v any, cur float64) bool {
	n, ok := number(v)
	return ok && (n == cur || n > 0 && (cur <= 0 || n < cur))
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// keyLines finds the line of each ignored key in the YAML source.
func keyLines(data []byte, items []Ignored) map[string]int {
	out := map[string]int{}
	if len(items) == 0 {
		return out
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil || len(f.Docs) == 0 {
		return out
	}
	for _, it := range items {
		parts := strings.Split(it.Key, ".")
		// Model names in prices contain dots: after the section, the rest
		// is one key.
		if len(parts) > 2 && parts[0] == "prices" {
			parts = []string{"prices", strings.Join(parts[1:], ".")}
		}
		if line := lineOf(f.Docs[0].Body, parts); line > 0 {
			out[it.Key] = line
		}
	}
	return out
}

// lineOf walks nested mappings along path and returns the line of the last
// key, or 0.
func lineOf(node ast.Node, path []string) int {
	line := 0
	for _, name := range path {
		var values []*ast.MappingValueNode
		switch n := node.(type) {
		case *ast.MappingNode:
			values = n.Values
		case *ast.MappingValueNode:
			values = []*ast.MappingValueNode{n}
		default:
			return 0
		}
		found := false
		for _, mv := range values {
			if k := strings.Trim(mv.Key.String(), `"'`); k == name {
				line, node, found = mv.Key.GetToken().Position.Line, mv.Value, true
				break
			}
		}
		if !found {
			return 0
		}
	}
	return line
}

// insideProject reports whether path, relative to the project's top or
// absolute, stays inside the project once symlinks are resolved; a path
// that does not exist yet is judged by its text.
func insideProject(top, path string) bool {
	if !filepath.IsAbs(path) {
		path = filepath.Join(top, path)
	}
	if _, ok := project.ResolvedWithin(top, path); ok {
		return true
	}
	if _, err := os.Lstat(path); err == nil {
		return false
	}
	rel, err := filepath.Rel(top, filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
