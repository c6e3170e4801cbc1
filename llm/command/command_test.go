package command

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/middleware"
)

// When SOT_FAKE_LLM is set the test binary behaves like the llm CLI, so the
// backend is exercised with a real subprocess.
func TestMain(m *testing.M) {
	if os.Getenv("SOT_FAKE_LLM") == "1" {
		os.Exit(fakeLLM())
	}
	os.Exit(m.Run())
}

// seen is what the fake llm reports about one run of it.
type seen struct {
	Model  string
	System string   // from the template -t names
	Opts   []string // the words after -o
	Stdin  string
	Argv   []string // its arguments, the program left out
	Env    []string // the names of its environment variables, sorted
	Values map[string]string

	Template     string // the path after -t
	TemplateMode string // its permissions, "" when there was none
	DirMode      string // those of the directory that holds it
	SystemFile   string // $SOT_SYSTEM_FILE
	SystemText   string // what that file holds
	SystemMode   string // its permissions
}

// fakeLLM parses the llm CLI's flags and answers according to the model
// name. When FAKE_SEEN names a file, it first appends what it saw there as
// a line of JSON, so that tests can look at runs that fail.
func fakeLLM() int {
	fs := flag.NewFlagSet("llm", flag.ExitOnError)
	model := fs.String("m", "", "")
	tmpl := fs.String("t", "", "")
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
	s := seen{Model: *model, Opts: opts, Stdin: string(stdin), Argv: args, Template: *tmpl, Values: map[string]string{}}
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		s.Env = append(s.Env, name)
		s.Values[name] = value
	}
	slices.Sort(s.Env)
	mode := func(path string) string {
		if fi, err := os.Stat(path); err == nil {
			return fi.Mode().Perm().String()
		}
		return ""
	}
	if *tmpl != "" {
		s.TemplateMode, s.DirMode = mode(*tmpl), mode(filepath.Dir(*tmpl))
		system, err := llmtest.LoadTemplate(*tmpl)
		if err != nil {
			fmt.Fprintln(os.Stderr, "Error:", err)
			return 1
		}
		s.System = system
	}
	if path := os.Getenv(SystemFileEnv); path != "" {
		b, _ := os.ReadFile(path)
		s.SystemFile, s.SystemText, s.SystemMode = path, string(b), mode(path)
	}
	if path := os.Getenv("FAKE_SEEN"); path != "" {
		b, _ := json.Marshal(s)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err == nil {
			f.Write(append(b, '\n'))
			f.Close()
		}
	}
	switch *model {
	case "echo":
		json.NewEncoder(os.Stdout).Encode(s)
	case "json":
		fmt.Println("Here you go:\n```json\n{\"ok\": true}\n```")
	case "fail":
		fmt.Fprintln(os.Stderr, "Error: no key configured for model fail")
		return 1
	case "sleep":
		time.Sleep(10 * time.Second)
	case "silent":
	default:
		fmt.Println("answer from " + *model)
	}
	return 0
}

// fakeConfig runs this test binary as the llm program. The environment the
// program's variables are picked from is this process's with env added;
// the provider passes SOT_FAKE_LLM and the names in env on.
func fakeConfig(t *testing.T, timeout time.Duration, env ...string) Config {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env = append([]string{"SOT_FAKE_LLM=1"}, env...)
	var pass []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		pass = append(pass, name)
	}
	return Config{Program: exe, Timeout: timeout, PassEnv: pass,
		Environ: func() []string { return append(os.Environ(), env...) }}
}

func newProvider(t *testing.T, timeout time.Duration, env ...string) *Provider {
	t.Helper()
	return New(fakeConfig(t, timeout, env...))
}

// echo runs a request on the model "echo" and returns what the program saw.
func echo(t *testing.T, p *Provider, req *llm.Request) (seen, *llm.Response) {
	t.Helper()
	if req.Model == "" {
		req.Model = "command:echo"
	}
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var got seen
	if err := json.Unmarshal([]byte(resp.Text), &got); err != nil {
		t.Fatalf("answer %.200q: %v", resp.Text, err)
	}
	return got, resp
}

func TestCommandFollowsLLMConvention(t *testing.T) {
	p := newProvider(t, 30*time.Second)
	got, resp := echo(t, p, &llm.Request{
		System:      "be brief",
		Temperature: llm.Float(0.7),
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: "what is 2+2?"}},
	})
	want := []string{"-m", "echo", "-t", got.Template, "-o", "temperature", "0.7"}
	if diff := cmp.Diff(want, got.Argv); diff != "" {
		t.Errorf("argv (-want +got):\n%s", diff)
	}
	if filepath.Base(got.Template) != "system.yaml" || !filepath.IsAbs(got.Template) {
		t.Errorf("template path %q, want an absolute path ending in system.yaml", got.Template)
	}
	if got.Model != "echo" || got.System != "be brief" || got.Stdin != "what is 2+2?" || !slices.Equal(got.Opts, []string{"temperature", "0.7"}) {
		t.Errorf("the command received model %q, system %q, stdin %q, options %q", got.Model, got.System, got.Stdin, got.Opts)
	}
	if got.SystemText != "be brief" || filepath.Dir(got.SystemFile) != filepath.Dir(got.Template) {
		t.Errorf("$%s = %q holds %q", SystemFileEnv, got.SystemFile, got.SystemText)
	}
	if resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 {
		t.Errorf("usage not estimated: %+v", resp.Usage)
	}

	// Without a system prompt there is no template.
	got, _ = echo(t, p, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if diff := cmp.Diff([]string{"-m", "echo"}, got.Argv); diff != "" || got.SystemFile != "" {
		t.Errorf("argv without a system prompt (-want +got):\n%s\n$%s = %q", diff, SystemFileEnv, got.SystemFile)
	}
}

// A passage of 200 KB went into argv as -s and failed with "argument list
// too long". Now the system prompt reaches the program whole, through the
// template, and argv holds none of it.
func TestCommandLargeSystemPrompt(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 200<<10; i++ {
		fmt.Fprintf(&b, "MATERIAL-%06d costs $%d ($HOME, ${x}, $$) \"quoted\" \\ back\ttab\r\n", i, i)
	}
	system := b.String()
	schema := `{"type":"object","properties":{"ok":{"type":"boolean"}}}`
	p := newProvider(t, 30*time.Second)
	got, _ := echo(t, p, &llm.Request{
		System:   system,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "summarise"}},
		Schema:   &llm.Schema{Name: "s", JSON: json.RawMessage(schema)},
	})
	want := system + "\n\n" + schemaInstruction + schema
	if got.System != want {
		t.Errorf("the template's system prompt differs from the request's (%d bytes, want %d)", len(got.System), len(want))
	}
	if got.SystemText != want {
		t.Errorf("$%s holds %d bytes, want the %d of the system prompt", SystemFileEnv, len(got.SystemText), len(want))
	}
	n := 0
	for _, a := range got.Argv {
		n += len(a)
		if strings.Contains(a, "MATERIAL-") || strings.Contains(a, "quoted") {
			t.Errorf("argv holds material: %.80q", a)
		}
	}
	if n > 300 {
		t.Errorf("argv is %d bytes long: %q", n, got.Argv)
	}
}

// The system prompt's files are private while the program runs and gone
// when the call ends, however it ends.
func TestCommandRemovesSystemFiles(t *testing.T) {
	tests := []struct {
		name    string
		model   string
		timeout time.Duration
		cancel  time.Duration // the caller's deadline, 0 for none
		program string        // instead of the fake llm
		kind    error         // nil for success
		ran     bool          // whether the program got to look at the files
	}{
		{"success", "echo", 30 * time.Second, 0, "", nil, true},
		{"program fails", "fail", 30 * time.Second, 0, "", llm.ErrUnavailable, true},
		{"timeout", "sleep", 500 * time.Millisecond, 0, "", llm.ErrTimeout, true},
		{"caller deadline", "sleep", 30 * time.Second, 500 * time.Millisecond, "", context.DeadlineExceeded, true},
		{"program not found", "x", 30 * time.Second, 0, "sot-no-such-program", llm.ErrConfig, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp) // os.TempDir() on Unix
			t.Setenv("TMP", tmp)    // and on Windows
			log := filepath.Join(t.TempDir(), "seen.jsonl")
			p := newProvider(t, tt.timeout, "FAKE_SEEN="+log)
			if tt.program != "" {
				p.cfg.Program = tt.program
			}
			ctx := context.Background()
			if tt.cancel > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.cancel)
				defer cancel()
			}
			_, err := p.Complete(ctx, &llm.Request{Model: "command:" + tt.model, System: "secret system prompt",
				Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
			if tt.kind == nil && err != nil || tt.kind != nil && !errors.Is(err, tt.kind) {
				t.Fatalf("err = %v, want %v", err, tt.kind)
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("left behind in the temporary directory: %v", left)
			}
			b, _ := os.ReadFile(log)
			if !tt.ran {
				if len(b) != 0 {
					t.Errorf("the program ran: %s", b)
				}
				return
			}
			var s seen
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatalf("what the program saw (%q): %v", b, err)
			}
			if runtime.GOOS != "windows" && (s.TemplateMode != "-rw-------" || s.SystemMode != "-rw-------" || s.DirMode != "-rwx------") {
				t.Errorf("modes: template %s, system file %s, directory %s; want -rw-------, -rw------- and -rwx------", s.TemplateMode, s.SystemMode, s.DirMode)
			}
			if !strings.HasPrefix(s.Template, tmp) || s.System != "secret system prompt" {
				t.Errorf("template %q in %q holds %q", s.Template, tmp, s.System)
			}
			for _, f := range []string{s.Template, s.SystemFile, filepath.Dir(s.Template)} {
				if _, err := os.Lstat(f); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s still exists after the call (%v)", f, err)
				}
			}
		})
	}
}

// The program gets a minimal environment: no secret of sot's reaches it
// unless the user's configuration lists it.
func TestCommandEnvironment(t *testing.T) {
	home := t.TempDir()
	parent := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"LLM_USER_PATH=" + filepath.Join(home, "llm"),
		"LC_ALL=C.UTF-8",
		"OPENAI_API_KEY=sk-parent-secret",
		"AWS_SECRET_ACCESS_KEY=aws-parent-secret",
		"GITHUB_TOKEN=ghp_parentsecret",
		"SSH_AUTH_SOCK=/tmp/agent",
		"MY_TOOL_KEY=listed",
		"SOT_SYSTEM_FILE=/inherited/not/ours",
		"SOT_FAKE_LLM=1",
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := New(Config{Program: exe, PassEnv: []string{"SOT_FAKE_LLM", "MY_TOOL_KEY", "UNSET_NAME"},
		Environ: func() []string { return parent }})
	got, _ := echo(t, p, &llm.Request{System: "sys", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	want := []string{"HOME", "LC_ALL", "LLM_USER_PATH", "MY_TOOL_KEY", "PATH", "SOT_FAKE_LLM", "SOT_SYSTEM_FILE"}
	if runtime.GOOS == "windows" {
		want = append(want, "SYSTEMROOT") // os/exec adds it
		slices.Sort(want)
	}
	if diff := cmp.Diff(want, got.Env); diff != "" {
		t.Errorf("the program's environment (-want +got):\n%s", diff)
	}
	if got.Values["MY_TOOL_KEY"] != "listed" || got.Values["HOME"] != home || got.Values[SystemFileEnv] == "/inherited/not/ours" {
		t.Errorf("values: %v", got.Values)
	}
}

func TestEnviron(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("names are matched without case on Windows")
	}
	parent := []string{"PATH=/bin", "HOME=/h", "LLM_MODEL=m", "LLMX=no", "LC_CTYPE=C", "LANG=C", "TZ=UTC", "TMPDIR=/t",
		"XDG_CONFIG_HOME=/c", "OPENAI_API_KEY=sk", "path=/lower", "EMPTY=", "PATH=/usr/bin", "=weird", "SOT_SYSTEM_FILE=/old"}
	tests := []struct {
		name string
		pass []string
		file string
		want []string
	}{
		{"base only", nil, "", []string{"HOME=/h", "LANG=C", "LC_CTYPE=C", "LLM_MODEL=m", "PATH=/usr/bin", "TMPDIR=/t", "TZ=UTC", "XDG_CONFIG_HOME=/c"}},
		{"listed", []string{"OPENAI_API_KEY", "EMPTY", "NOT_SET"}, "/f", []string{"EMPTY=", "HOME=/h", "LANG=C", "LC_CTYPE=C", "LLM_MODEL=m",
			"OPENAI_API_KEY=sk", "PATH=/usr/bin", "SOT_SYSTEM_FILE=/f", "TMPDIR=/t", "TZ=UTC", "XDG_CONFIG_HOME=/c"}},
		{"a listed SOT_SYSTEM_FILE is still ours", []string{"SOT_SYSTEM_FILE"}, "", []string{"HOME=/h", "LANG=C", "LC_CTYPE=C", "LLM_MODEL=m", "PATH=/usr/bin", "TMPDIR=/t", "TZ=UTC", "XDG_CONFIG_HOME=/c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(Config{PassEnv: tt.pass, Environ: func() []string { return parent }})
			if diff := cmp.Diff(tt.want, p.environ(tt.file)); diff != "" {
				t.Errorf("environ (-want +got):\n%s", diff)
			}
		})
	}
}

// Failures certain to repeat are not retried; a program that exits
// non-zero is.
func TestCommandNotRetried(t *testing.T) {
	notExec := filepath.Join(t.TempDir(), "llm")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	tests := []struct {
		name     string
		model    string
		program  string
		tmpdir   string
		kind     error
		attempts int64
		contains string
	}{
		{"program not found", "command:x", "sot-no-such-program", "", llm.ErrConfig, 1, "not found on PATH"},
		{"program path not found", "command:x", filepath.Join(t.TempDir(), "missing"), "", llm.ErrConfig, 1, "not found"},
		{"argument list too long", "command:" + exe + " -m echo " + strings.Repeat("x", 3<<20), "", "", llm.ErrBadRequest, 1, "argument list too long"},
		{"template cannot be written", "command:echo", "", filepath.Join(t.TempDir(), "no", "such", "dir"), llm.ErrConfig, 1, "cannot write the system prompt"},
		{"program fails", "command:fail", "", "", llm.ErrUnavailable, 3, "no key configured"},
	}
	if runtime.GOOS != "windows" {
		tests = append(tests, struct {
			name     string
			model    string
			program  string
			tmpdir   string
			kind     error
			attempts int64
			contains string
		}{"not executable", "command:x", notExec, "", llm.ErrConfig, 1, "not executable"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "argument list too long" && runtime.GOOS == "windows" {
				t.Skip("Windows reports a long command line differently")
			}
			if tt.tmpdir != "" {
				t.Setenv("TMPDIR", tt.tmpdir)
				t.Setenv("TMP", tt.tmpdir)
			}
			p := newProvider(t, 30*time.Second)
			if tt.program != "" {
				p.cfg.Program = tt.program
			}
			var n atomic.Int64
			counted := llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
				n.Add(1)
				return p.Complete(ctx, req)
			})
			r := middleware.Retry(counted, middleware.RetryOptions{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond})
			_, err := r.Complete(context.Background(), &llm.Request{Model: tt.model, System: "sys",
				Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
			if !errors.Is(err, tt.kind) || !strings.Contains(fmt.Sprint(err), tt.contains) {
				t.Fatalf("err = %.300v, want kind %v and %q", err, tt.kind, tt.contains)
			}
			if got := n.Load(); got != tt.attempts {
				t.Errorf("%d attempt(s), want %d", got, tt.attempts)
			}
		})
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
		{"a missing key points at the provider's env", "fail", 30 * time.Second, "", llm.ErrUnavailable, "under providers.command.env"},
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

// TestCommandRefusesTools: a request that offers tools fails as a bad
// request, not retried, before any program runs (this one does not exist,
// and would fail as ErrConfig).
func TestCommandRefusesTools(t *testing.T) {
	p := New(Config{Program: "sot-no-such-program"})
	req := &llm.Request{Model: "command:x", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}},
		Tools: []llm.Tool{{Name: "read_file", Parameters: json.RawMessage(`{"type":"object"}`)}}}
	_, err := p.Complete(context.Background(), req)
	var e *llm.Error
	if !errors.Is(err, llm.ErrBadRequest) || !errors.As(err, &e) || !strings.Contains(err.Error(), "cannot offer a model tools") {
		t.Errorf("err = %v, want a bad request about tools", err)
	}
	if llm.SupportsTools(req.Model) {
		t.Error("SupportsTools says the command provider takes tools")
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

// A whole command line runs as written, with the template and the options
// appended.
func TestCommandLineReference(t *testing.T) {
	cfg := fakeConfig(t, 30*time.Second)
	exe := cfg.Program
	cfg.Program = ""
	p := New(cfg)
	got, _ := echo(t, p, &llm.Request{
		Model:       fmt.Sprintf("command:%s -m 'echo'", exe),
		System:      "a $5 system prompt",
		Temperature: llm.Float(0),
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: "hi"}},
	})
	want := []string{"-m", "echo", "-t", got.Template, "-o", "temperature", "0"}
	if diff := cmp.Diff(want, got.Argv); diff != "" {
		t.Errorf("argv (-want +got):\n%s", diff)
	}
	if got.System != "a $5 system prompt" || got.SystemText != "a $5 system prompt" {
		t.Errorf("system prompt %q, file %q", got.System, got.SystemText)
	}
}

// The template holds any text, and reads back as the llm CLI reads it.
func TestEncodeTemplateRoundTrip(t *testing.T) {
	var big strings.Builder
	for i := 0; big.Len() < 200<<10; i++ {
		big.WriteRune(rune(i%0x2FF + 1)) // C0 and C1 controls, Latin, IPA…
		big.WriteString("$\r\n\t ")
	}
	tests := []struct{ name, in, want string }{
		{"plain", "be brief", ""},
		{"lines", "line one\nline two\n\n\n", ""},
		{"leading spaces", "  indented\nnext", ""},
		{"leading tab", "\t tab\nx", ""},
		{"trailing spaces", "a  \nb  ", ""},
		{"carriage returns", "crlf\r\nline\r\nlone\rcr", ""},
		{"controls", "nul \x00 bell \a esc \x1b del \x7f", ""},
		{"dollars", "$input ${input} $$ $5 $ $HOME", ""},
		{"YAML syntax", "---\n...\n# not a comment\n- item\nkey: value\n{flow: [1]}\n&a *a !tag |\n>", ""},
		{"quotes and backslashes", `"double" 'single' \n \\ \x41`, ""},
		{"unicode", "é 中文 😀 \u2028 \u2029 \u0085 \ufeff \ufffe \uffff", ""},
		{"empty lines only", "\n", ""},
		{"invalid UTF-8", "bad \xff\xfe byte", "bad \uFFFD byte"},
		{"200 KB", big.String(), ""},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		if tt.want == "" {
			tt.want = tt.in
		}
		t.Run(tt.name, func(t *testing.T) {
			b, err := encodeTemplate(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, fmt.Sprintf("t%d.yaml", i))
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := llmtest.LoadTemplate(path)
			if err != nil {
				t.Fatalf("%v\n%.300s", err, b)
			}
			if got != tt.want {
				t.Errorf("read back %.200q, want %.200q\nfile: %.300s", got, tt.want, b)
			}
			if strings.Count(string(b), "\n") != 1 {
				t.Errorf("the template is not one line: %.300q", b)
			}
		})
	}

	// The llm CLI reads the template with PyYAML and expands it with
	// string.Template: check against them when they are installed.
	t.Run("PyYAML", func(t *testing.T) {
		py, err := exec.LookPath("python3")
		if err != nil || exec.Command(py, "-c", "import yaml").Run() != nil {
			t.Skip("python3 with PyYAML is not installed")
		}
		const script = `import json, string, sys, yaml
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        t = yaml.safe_load(f)
    print(json.dumps(string.Template(t["system"]).substitute(input="")))`
		var paths []string
		for i := range tests {
			paths = append(paths, filepath.Join(dir, fmt.Sprintf("t%d.yaml", i)))
		}
		out, err := exec.Command(py, append([]string{"-c", script}, paths...)...).Output()
		if err != nil {
			t.Fatalf("python3: %v", err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != len(tests) {
			t.Fatalf("python3 printed %d lines for %d templates", len(lines), len(tests))
		}
		for i, tt := range tests {
			want := tt.want
			if want == "" {
				want = tt.in
			}
			var got string
			if err := json.Unmarshal([]byte(lines[i]), &got); err != nil || got != want {
				t.Errorf("%s: PyYAML read %.200q (%v), want %.200q", tt.name, got, err, want)
			}
		}
	})
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

// The call yields (llm.Yield) once the program has started with the
// request: what is left is waiting for its answer, and the caller may let
// another call build its request meanwhile.
func TestCommandYieldsOnceStarted(t *testing.T) {
	p := newProvider(t, 30*time.Second)
	yields := 0
	ctx := llm.WithYield(context.Background(), func() { yields++ })
	if _, err := p.Complete(ctx, &llm.Request{Model: "echo", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if yields == 0 {
		t.Error("the call did not yield once its program had started")
	}
}

// The program starts only once the call's send gate lets it (the
// journal's, while the answers before it reach the disk); a gate that
// fails starts nothing.
func TestCommandWaitsForTheSendGate(t *testing.T) {
	p := newProvider(t, 30*time.Second)
	req := &llm.Request{Model: "echo", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	var order []string
	ctx := llm.WithSendGate(context.Background(), func() error { order = append(order, "gate"); return nil })
	ctx = llm.WithYield(ctx, func() { order = append(order, "started") })
	if _, err := p.Complete(ctx, req); err != nil {
		t.Fatal(err)
	}
	if len(order) < 2 || order[0] != "gate" || order[1] != "started" {
		t.Errorf("order %v: the program started before the gate let it", order)
	}
	stop := errors.New("the journal cannot sync")
	started := false
	ctx = llm.WithSendGate(context.Background(), func() error { return stop })
	ctx = llm.WithYield(ctx, func() { started = true })
	if _, err := p.Complete(ctx, req); !errors.Is(err, stop) {
		t.Errorf("err = %v, want the gate's", err)
	}
	if started {
		t.Error("the program started though the gate failed")
	}
}
