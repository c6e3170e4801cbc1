package llmtest

import (
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
)

// schemaMarker is how sot's command: provider appends a request's JSON
// Schema to the system prompt (llm/command).
const schemaMarker = "Answer with one JSON value that validates against this JSON Schema, and nothing else (no prose, no code fence):\n"

// FakeLLM is a stand-in for Simon Willison's llm command, for tests of the
// command: provider: a test binary that finds itself run as "llm" calls it
// from TestMain and exits with its result. It reads the model from -m, the
// system prompt from the template file -t names (see LoadTemplate) or from
// -s, the options from -o and the prompt from stdin, as llm does, and
// answers from the rules of the llmtest config file that FAKE_LLM_CONFIG
// names (the first rule whose Model, System and User match; Times is not
// kept across calls, each call being a process of its own). A rule's Fault
// makes the call fail (exit 1); its Latency, or else FAKE_LLM_LATENCY, is
// slept first. In Reply and in the strings of JSON, {{hash}} becomes a
// short hash of the call's input and {{words}} six words picked by it, so
// that different calls get different answers and the same call the same
// one. A structured call (the system prompt carries the schema) that no
// rule answers gets Instance of the schema. JSON answers are wrapped in a
// line of prose and a code fence, as chat models often write them, unless
// FAKE_LLM_BARE is set.
//
// Three variables name files to which each call appends what it saw:
// FAKE_LLM_LOG one line with the model and the first line of the prompt,
// FAKE_LLM_ARGV_LOG one line with its arguments as a JSON array, and
// FAKE_LLM_ENV_LOG one line with the sorted names of the environment
// variables it received, separated by spaces. The command: provider passes
// a program only a minimal environment, so a test that sets these
// variables lists them in the provider's env (config.Provider.Env).
func FakeLLM(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("llm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("m", "", "model")
	system := fs.String("s", "", "system prompt")
	template := fs.String("t", "", "template file")
	var opts []string
	fs.Func("o", "option", func(s string) error { opts = append(opts, s); return nil })
	if err := fs.Parse(args); err != nil {
		return 2
	}
	// -o takes two words (-o temperature 0.7): the second is left over.
	in, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintln(stderr, "llm:", err)
		return 1
	}
	prompt := string(in)
	if *template != "" && *system == "" {
		// llm's -s wins over the template's system prompt.
		if *system, err = LoadTemplate(*template); err != nil {
			fmt.Fprintln(stderr, "Error:", err)
			return 1
		}
	}
	if path := os.Getenv("FAKE_LLM_ARGV_LOG"); path != "" {
		b, _ := json.Marshal(args)
		appendLine(path, string(b))
	}
	if path := os.Getenv("FAKE_LLM_ENV_LOG"); path != "" {
		var names []string
		for _, kv := range os.Environ() {
			if name, _, ok := strings.Cut(kv, "="); ok && name != "" {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		appendLine(path, strings.Join(names, " "))
	}
	if path := os.Getenv("FAKE_LLM_LOG"); path != "" {
		first, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%s\t%s\n", *model, first)
			f.Close()
		}
	}
	var cfg Config
	if path := os.Getenv("FAKE_LLM_CONFIG"); path != "" {
		if cfg, err = LoadConfig(path); err != nil {
			fmt.Fprintln(stderr, "llm:", err)
			return 1
		}
	}
	h := fnv.New64a()
	io.WriteString(h, *system+"\x00"+prompt)
	sum := h.Sum64()
	latency, _ := time.ParseDuration(os.Getenv("FAKE_LLM_LATENCY"))

	sys, schema, structured := strings.Cut(*system, schemaMarker)
	var reply, jsonOut string
	matched := false
	for _, r := range cfg.Rules {
		// The llm CLI is offered no tools, so every call is round 1 of no
		// tool loop: rules that script tool calls or later rounds pass.
		if len(r.ToolCalls) > 0 || r.Round > 1 || !r.matches(*model, sys, func() string { return prompt }) {
			continue
		}
		matched = true
		if r.Latency > 0 {
			latency = r.Latency
		}
		if r.Fault != "" {
			time.Sleep(latency)
			fmt.Fprintf(stderr, "llm: Error: the model failed (%s)\n", r.Fault)
			return 1
		}
		reply = fill(r.Reply, sum)
		if r.JSON != nil {
			b, err := json.Marshal(fillJSON(r.JSON, sum))
			if err != nil {
				fmt.Fprintln(stderr, "llm:", err)
				return 1
			}
			jsonOut = string(b)
		}
		break
	}
	time.Sleep(latency)
	if !matched && structured {
		inst, err := Instance(json.RawMessage(schema))
		if err != nil {
			fmt.Fprintln(stderr, "llm: cannot answer the schema:", err)
			return 1
		}
		jsonOut = string(inst)
	}
	switch {
	case jsonOut != "" && os.Getenv("FAKE_LLM_BARE") != "":
		fmt.Fprintln(stdout, jsonOut)
	case jsonOut != "":
		fmt.Fprintf(stdout, "Here is the answer you asked for:\n\n```json\n%s\n```\n\nLet me know if you need anything else.\n", jsonOut)
	case reply != "":
		fmt.Fprintln(stdout, reply)
	default:
		fmt.Fprintf(stdout, "A plain answer from %s (%s).\n", *model, fill("{{words}}", sum))
	}
	return 0
}

// appendLine appends one line to the file at path, ignoring errors: the
// logs are for the tests to read, and a test that misses a line fails.
func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintln(f, line)
	f.Close()
}

// LoadTemplate reads the llm template at path, as llm -t PATH does (llm
// 0.24.1 and later), and returns its system prompt as llm uses it when the
// template has no prompt of its own: expanded as Python's string.Template
// expands it, with "$$" standing for "$". The prompt comes from stdin then,
// so a template that uses $input or any other variable is an error, as llm
// reports missing variables; so is a "$" followed by no name.
func LoadTemplate(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("invalid template: %w", err)
	}
	var t struct {
		System string `yaml:"system"`
	}
	if err := yaml.Unmarshal(b, &t); err != nil {
		return "", fmt.Errorf("invalid YAML: %w", err)
	}
	return expandTemplate(t.System)
}

// expandTemplate expands s as Python's string.Template.substitute does
// with no variables: "$$" becomes "$", and $name, ${name} or a "$" followed
// by anything else is an error.
func expandTemplate(s string) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '$' {
			b.WriteByte('$')
			i++
			continue
		}
		rest := strings.TrimPrefix(s[i+1:], "{")
		n := 0
		for n < len(rest) && (rest[n] == '_' || 'a' <= rest[n]|0x20 && rest[n]|0x20 <= 'z' || n > 0 && '0' <= rest[n] && rest[n] <= '9') {
			n++
		}
		if n == 0 {
			return "", fmt.Errorf("invalid placeholder in string at byte %d", i)
		}
		return "", fmt.Errorf("missing variables: %s", rest[:n])
	}
	return b.String(), nil
}

// fakeWords are what {{words}} picks from.
var fakeWords = strings.Fields(`ash brook cedar dawn ember fern glade harbor iris juniper kestrel lantern
meadow north orchard pebble quarry river stone thistle umber valley willow yarrow
anchor bridge candle drift echo forge garnet hollow ink jetty knot ledger mirror
needle oracle prism quill rope signal tide veil wheel`)

func fill(s string, sum uint64) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	s = strings.ReplaceAll(s, "{{hash}}", fmt.Sprintf("%08x", uint32(sum)))
	if strings.Contains(s, "{{words}}") {
		// Six distinct words, drawn by a splitmix64 sequence seeded with
		// the input's hash.
		var w []string
		x := sum
		for len(w) < 6 {
			x += 0x9e3779b97f4a7c15
			z := (x ^ x>>30) * 0xbf58476d1ce4e5b9
			z = (z ^ z>>27) * 0x94d049bb133111eb
			z ^= z >> 31
			if word := fakeWords[z%uint64(len(fakeWords))]; !slices.Contains(w, word) {
				w = append(w, word)
			}
		}
		s = strings.ReplaceAll(s, "{{words}}", strings.Join(w, " "))
	}
	return s
}

// fillJSON fills the strings of a value decoded from YAML.
func fillJSON(v any, sum uint64) any {
	switch x := v.(type) {
	case string:
		return fill(x, sum)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fillJSON(e, sum)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = fillJSON(e, sum)
		}
		return out
	}
	return v
}
