package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Spec describes one tool to a model: its name, what it does in one
// sentence, and the JSON Schema of its arguments (an object).
type Spec struct {
	Name        string
	Description string
	Parameters  map[string]any
}

// param is one argument of a tool.
type param struct {
	name, kind, doc string // kind is "string" or "integer"
	required        bool
}

// tool is one look: its spec's parts and how Call runs it.
type tool struct {
	name, doc string
	params    []param
	run       func(ctx context.Context, t *Tools, a args) (Result, error)
}

// args are a call's validated arguments.
type args struct {
	str map[string]string
	num map[string]int
}

var (
	pathParam  = param{"path", "string", "a path relative to the project top, with forward slashes", true}
	startParam = param{"start", "integer", "the first line to show, from 1 (default 1)", false}
	endParam   = param{"end", "integer", "the last line to show, inclusive (default the last line)", false}
)

var catalog = []tool{
	{
		name:   "read_file",
		doc:    "Read a text file of the project, or a range of its lines, numbered from 1.",
		params: []param{pathParam, startParam, endParam},
		run: func(_ context.Context, t *Tools, a args) (Result, error) {
			return t.readFile(a.str["path"], a.num["start"], a.num["end"])
		},
	},
	{
		name: "grep",
		doc:  "Find the lines matching a Go (RE2) regular expression in the project's text files, as path:line: text.",
		params: []param{
			{"pattern", "string", "a Go (RE2) regular expression", true},
			{"glob", "string", `the files to search, a slash-separated pattern where * matches within a directory and ** any number of directories, such as "**/*.go" (default every file)`, false},
		},
		run: func(_ context.Context, t *Tools, a args) (Result, error) {
			return t.grep(a.str["pattern"], a.str["glob"])
		},
	},
	{
		name:   "list_dir",
		doc:    "List a directory of the project, one name a line, directories ending in /.",
		params: []param{{"path", "string", `a directory relative to the project top, with forward slashes (default ".", the top)`, false}},
		run: func(_ context.Context, t *Tools, a args) (Result, error) {
			return t.listDir(a.str["path"])
		},
	},
	{
		name: "git_log",
		doc:  "List the newest commits that changed a path, one line each: short id, date, author and subject.",
		params: []param{pathParam,
			{"max", "integer", "how many commits to list at most", false}},
		run: func(ctx context.Context, t *Tools, a args) (Result, error) {
			return t.gitLog(ctx, a.str["path"], a.num["max"])
		},
	},
	{
		name: "git_show",
		doc:  "Show a file as a commit has it, or a range of its lines, numbered from 1.",
		params: []param{pathParam,
			{"revision", "string", "a commit id, branch or tag name, or a form such as HEAD~2", true},
			startParam, endParam},
		run: func(ctx context.Context, t *Tools, a args) (Result, error) {
			return t.gitShow(ctx, a.str["path"], a.str["revision"], a.num["start"], a.num["end"])
		},
	},
}

// Specs returns the spec of every tool, for a model to choose from.
func Specs() []Spec {
	specs := make([]Spec, 0, len(catalog))
	for _, tl := range catalog {
		props := map[string]any{}
		var required []string
		for _, p := range tl.params {
			props[p.name] = map[string]any{"type": p.kind, "description": p.doc}
			if p.required {
				required = append(required, p.name)
			}
		}
		schema := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if required != nil {
			schema["required"] = required
		}
		specs = append(specs, Spec{Name: tl.name, Description: tl.doc, Parameters: schema})
	}
	return specs
}

// Call runs the tool name with the arguments a model gave as a JSON
// object. An unknown tool, an unknown or missing argument, or one of the
// wrong type is an error that says what is expected, for the model to
// correct its call.
func (t *Tools) Call(ctx context.Context, name string, raw json.RawMessage) (Result, error) {
	i := slices.IndexFunc(catalog, func(tl tool) bool { return tl.name == name })
	if i < 0 {
		names := make([]string, len(catalog))
		for j, tl := range catalog {
			names[j] = tl.name
		}
		return Result{}, fmt.Errorf("there is no tool %q; the tools are %s", name, strings.Join(names, ", "))
	}
	tl := catalog[i]
	a, err := tl.parse(raw)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	return tl.run(ctx, t, a)
}

// parse validates raw against the tool's parameters.
func (tl tool) parse(raw json.RawMessage) (args, error) {
	a := args{str: map[string]string{}, num: map[string]int{}}
	fields := map[string]json.RawMessage{}
	if s := strings.TrimSpace(string(raw)); s != "" && s != "null" {
		if err := json.Unmarshal(raw, &fields); err != nil {
			return a, fmt.Errorf("the arguments must be a JSON object (%s): %w", tl.usage(), err)
		}
	}
	for name := range fields {
		if !slices.ContainsFunc(tl.params, func(p param) bool { return p.name == name }) {
			return a, fmt.Errorf("unknown argument %q; expected %s", name, tl.usage())
		}
	}
	for _, p := range tl.params {
		v, ok := fields[p.name]
		if !ok || string(v) == "null" {
			if p.required {
				return a, fmt.Errorf("missing argument %q (%s); expected %s", p.name, p.kind, tl.usage())
			}
			continue
		}
		switch p.kind {
		case "string":
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return a, fmt.Errorf("argument %q must be a string, not %s; expected %s", p.name, v, tl.usage())
			}
			a.str[p.name] = s
		case "integer":
			var n int
			if err := json.Unmarshal(v, &n); err != nil {
				return a, fmt.Errorf("argument %q must be an integer, not %s; expected %s", p.name, v, tl.usage())
			}
			a.num[p.name] = n
		}
	}
	return a, nil
}

// usage names a tool's arguments and their types, optional ones in
// brackets.
func (tl tool) usage() string {
	var parts []string
	for _, p := range tl.params {
		s := p.name + " (" + p.kind + ")"
		if !p.required {
			s = "[" + s + "]"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
