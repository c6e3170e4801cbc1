package llmtest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
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
