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
)

// schemaMarker is how sot's command: provider appends a request's JSON
// Schema to the system prompt (llm/command).
const schemaMarker = "Answer with one JSON value that validates against this JSON Schema, and nothing else (no prose, no code fence):\n"

// FakeLLM is a stand-in for Simon Willison's llm command, for tests of the
// command: provider: a test binary that finds itself run as "llm" calls it
// from TestMain and exits with its result. It reads the model from -m, the
// system prompt from -s, the options from -o and the prompt from stdin, as
// llm does, and answers from the rules of the llmtest config file that
// FAKE_LLM_CONFIG names (the first rule whose Model, System and User
// match; Times is not kept across calls, each call being a process of its
// own). A rule's Fault makes the call fail (exit 1); its Latency, or else
// FAKE_LLM_LATENCY, is slept first. In Reply and in the strings of JSON,
// {{hash}} becomes a short hash of the call's input and {{words}} six
// words picked by it, so that different calls get different answers and the
// same call the same one. A structured call (the system prompt carries the
// schema) that no rule answers gets Instance of the schema. JSON answers
// are wrapped in a line of prose and a code fence, as chat models often
// write them, unless FAKE_LLM_BARE is set. FAKE_LLM_LOG names a file to
// which each call appends one line: the model and the first line of the
// prompt.
func FakeLLM(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("llm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("m", "", "model")
	system := fs.String("s", "", "system prompt")
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
		if !r.matches(*model, sys, func() string { return prompt }) {
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
