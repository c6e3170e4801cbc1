package command

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sotlabs/sot/llm"
)

// When SOT_FAKE_LLM is set the test binary behaves like the llm CLI, so the
// backend is exercised with a real subprocess.
func TestMain(m *testing.M) {
	if os.Getenv("SOT_FAKE_LLM") == "1" {
		fakeLLM()
		return
	}
	os.Exit(m.Run())
}

// fakeLLM parses the llm CLI's flags and answers according to the model name.
func fakeLLM() {
	fs := flag.NewFlagSet("llm", flag.ExitOnError)
	model := fs.String("m", "", "")
	system := fs.String("s", "", "")
	// -o takes two words (-o temperature 0.2), which flag cannot express.
	var opts []string
	args := os.Args[1:]
	var rest []string
	for i := 0; i < len(args); i++ {
		if args[i] == "-o" && i+2 < len(args) {
			opts = append(opts, args[i+1], args[i+2])
			i += 2
			continue
		}
		rest = append(rest, args[i])
	}
	fs.Parse(rest)
	stdin, _ := io.ReadAll(os.Stdin)
	switch *model {
	case "echo":
		json.NewEncoder(os.Stdout).Encode(map[string]any{"model": *model, "system": *system, "opts": opts, "stdin": string(stdin)})
	case "json":
		fmt.Println("Here you go:\n```json\n{\"ok\": true}\n```")
	case "fail":
		fmt.Fprintln(os.Stderr, "Error: no key configured for model fail")
		os.Exit(1)
	case "sleep":
		time.Sleep(10 * time.Second)
	case "silent":
	default:
		fmt.Println("answer from " + *model)
	}
}

func newProvider(t *testing.T, timeout time.Duration) *Provider {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return New(Config{Program: exe, Timeout: timeout, Env: append(os.Environ(), "SOT_FAKE_LLM=1")})
}

func TestCommandFollowsLLMConvention(t *testing.T) {
	p := newProvider(t, 30*time.Second)
	resp, err := p.Complete(context.Background(), &llm.Request{
		Model:       "command:echo",
		System:      "be brief",
		Temperature: llm.Float(0.7),
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: "what is 2+2?"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Model, System, Stdin string
		Opts                 []string
	}
	if err := json.Unmarshal([]byte(resp.Text), &got); err != nil {
		t.Fatalf("answer %q: %v", resp.Text, err)
	}
	want := struct {
		Model, System, Stdin string
		Opts                 []string
	}{"echo", "be brief", "what is 2+2?", []string{"temperature", "0.7"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the command received (-want +got):\n%s", diff)
	}
	if resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 {
		t.Errorf("usage not estimated: %+v", resp.Usage)
	}
}

func TestCommandStructuredOutput(t *testing.T) {
	p := newProvider(t, 30*time.Second)
	resp, err := p.Complete(context.Background(), &llm.Request{
		Model:    "command:json",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "status?"}},
		Schema:   &llm.Schema{Name: "status", JSON: json.RawMessage(`{"type":"object"}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.JSON) != `{"ok": true}` {
		t.Errorf("JSON = %s, want the fenced object", resp.JSON)
	}
}

func TestCommandFailures(t *testing.T) {
	tests := []struct {
		name     string
		model    string
		timeout  time.Duration
		program  string
		kind     error
		contains string
	}{
		{"non-zero exit reports stderr", "fail", 30 * time.Second, "", llm.ErrUnavailable, "no key configured for model fail"},
		{"timeout", "sleep", 300 * time.Millisecond, "", llm.ErrTimeout, "ran longer than"},
		{"empty answer", "silent", 30 * time.Second, "", llm.ErrBadResponse, "printed nothing"},
		{"missing program", "x", 30 * time.Second, "sot-no-such-program", llm.ErrConfig, "not found on PATH"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, tt.timeout)
			if tt.program != "" {
				p.cfg.Program = tt.program
			}
			_, err := p.Complete(context.Background(), &llm.Request{Model: "command:" + tt.model,
				Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
			if !errors.Is(err, tt.kind) {
				t.Fatalf("err = %v, want kind %v", err, tt.kind)
			}
			if !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("err = %q, want it to contain %q", err, tt.contains)
			}
		})
	}
}

// When the caller's deadline passes first, the error is the caller's, not
// the command's own timeout.
func TestCommandCallerDeadline(t *testing.T) {
	p := newProvider(t, 30*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := p.Complete(ctx, &llm.Request{Model: "command:sleep", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, llm.ErrTimeout) || strings.Contains(fmt.Sprint(err), "ran longer than") {
		t.Errorf("err = %v, want the caller's deadline", err)
	}
}

func TestCommandLineReference(t *testing.T) {
	exe, _ := os.Executable()
	p := New(Config{Env: append(os.Environ(), "SOT_FAKE_LLM=1")})
	resp, err := p.Complete(context.Background(), &llm.Request{
		Model:    fmt.Sprintf("command:%s -m 'echo'", exe),
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resp.Text, `"model":"echo"`) {
		t.Errorf("a command-line reference should run as written; got %s", resp.Text)
	}
}

func TestSplitArgs(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  bool
	}{
		{"llm -m x", []string{"llm", "-m", "x"}, false},
		{`tool --name "a b" 'c d'`, []string{"tool", "--name", "a b", "c d"}, false},
		{`tool "unterminated`, nil, true},
	}
	for _, tt := range tests {
		got, err := splitArgs(tt.in)
		if (err != nil) != tt.err {
			t.Fatalf("splitArgs(%q) err = %v", tt.in, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("splitArgs(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}
