package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/llm"
)

func TestFakeLLM(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "llm.yaml")
	os.WriteFile(cfg, []byte(`rules:
  - system: "You name observers"
    json: {name: "Observer {{hash}}", bias: "{{words}}"}
  - user: "break"
    fault: 500
  - user: "hello"
    reply: "Hello back, {{words}}."
`), 0o644)
	logf := filepath.Join(dir, "calls.log")
	t.Setenv("FAKE_LLM_CONFIG", cfg)
	t.Setenv("FAKE_LLM_LOG", logf)
	run := func(stdin string, args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		code := FakeLLM(args, strings.NewReader(stdin), &out, &errOut)
		return out.String(), errOut.String(), code
	}
	schema := `{"type":"object","properties":{"name":{"type":"string"},"bias":{"type":"string"}},"required":["name","bias"]}`
	sys := "You name observers.\n\n" + schemaMarker + schema

	out1, _, code := run("first debate", "-m", "gpt-x", "-s", sys, "-o", "temperature", "0.85")
	if code != 0 || !strings.Contains(out1, "```json") {
		_, e, _ := run("first debate", "-m", "gpt-x", "-s", sys)
		t.Fatalf("structured answer %q, exit %d: %s", out1, code, e)
	}
	var a, b struct{ Name, Bias string }
	if err := json.Unmarshal(llm.ExtractJSON(out1), &a); err != nil || !strings.HasPrefix(a.Name, "Observer ") || len(strings.Fields(a.Bias)) != 6 {
		t.Fatalf("answer %q: %+v, %v", out1, a, err)
	}
	out2, _, _ := run("second debate", "-m", "gpt-x", "-s", sys)
	json.Unmarshal(llm.ExtractJSON(out2), &b)
	if a.Name == b.Name {
		t.Errorf("two different calls got the same answer %q", a.Name)
	}
	again, _, _ := run("first debate", "-m", "gpt-x", "-s", sys, "-o", "temperature", "0.85")
	if again != out1 {
		t.Errorf("the same call answered differently: %q, %q", again, out1)
	}

	if out, _, _ := run("hello there", "-m", "gpt-x"); !strings.HasPrefix(out, "Hello back, ") {
		t.Errorf("reply %q", out)
	}
	if _, errOut, code := run("please break", "-m", "gpt-x"); code != 1 || !strings.Contains(errOut, "500") {
		t.Errorf("fault: exit %d, %q", code, errOut)
	}
	// No rule: a schema instance, else a plain line.
	other := "Other.\n\n" + schemaMarker + `{"type":"object","properties":{"n":{"type":"integer","minimum":3}},"required":["n"]}`
	t.Setenv("FAKE_LLM_BARE", "1")
	if out, _, _ := run("x", "-m", "m", "-s", other); strings.TrimSpace(out) != `{"n":3}` {
		t.Errorf("instance %q", out)
	}
	if out, _, _ := run("x", "-m", "m"); !strings.HasPrefix(out, "A plain answer from m") {
		t.Errorf("plain %q", out)
	}
	b2, _ := os.ReadFile(logf)
	if n := strings.Count(string(b2), "\n"); n != 7 {
		t.Errorf("%d calls logged, want 7:\n%s", n, b2)
	}
}

// The fake reads the system prompt from a template file, as llm -t does,
// and logs its arguments and the names of its environment variables.
func TestFakeLLMTemplate(t *testing.T) {
	dir := t.TempDir()
	argvLog, envLog := filepath.Join(dir, "argv.log"), filepath.Join(dir, "env.log")
	t.Setenv("FAKE_LLM_CONFIG", "")
	t.Setenv("FAKE_LLM_BARE", "1")
	t.Setenv("FAKE_LLM_ARGV_LOG", argvLog)
	t.Setenv("FAKE_LLM_ENV_LOG", envLog)
	schema := `{"type":"object","properties":{"price":{"type":"string","const":"$5"}},"required":["price"]}`
	tmpl := filepath.Join(dir, "system.yaml")
	// As llm/command writes it: one double-quoted scalar, every $ doubled.
	b, _ := json.Marshal(map[string]string{"system": strings.ReplaceAll("Costs in $.\n\n"+schemaMarker+schema, "$", "$$")})
	os.WriteFile(tmpl, b, 0o600)
	var out, errOut bytes.Buffer
	if code := FakeLLM([]string{"-m", "m", "-t", tmpl}, strings.NewReader("price?"), &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if got := strings.TrimSpace(out.String()); got != `{"price":"$5"}` {
		t.Errorf("answer %q: the schema in the template was not read", got)
	}
	argv, _ := os.ReadFile(argvLog)
	if want := fmt.Sprintf("[\"-m\",\"m\",\"-t\",%q]\n", tmpl); string(argv) != want {
		t.Errorf("argv log %q, want %q", argv, want)
	}
	env, _ := os.ReadFile(envLog)
	if names := strings.Fields(string(env)); !slices.Contains(names, "FAKE_LLM_ENV_LOG") || !slices.IsSorted(names) {
		t.Errorf("env log %q", env)
	}

	tests := []struct{ in, want, err string }{
		{"no dollars", "no dollars", ""},
		{"$$5 and $$$$", "$5 and $$", ""},
		{"$input", "", "missing variables: input"},
		{"${x}", "", "missing variables: x"},
		{"$5", "", "invalid placeholder"},
		{"end $", "", "invalid placeholder"},
	}
	for _, tt := range tests {
		got, err := expandTemplate(tt.in)
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("expandTemplate(%q) = %q, %v; want %q, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
}
