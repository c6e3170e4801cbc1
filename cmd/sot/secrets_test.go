package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/internal/secrets"
	"github.com/sotlabs/sot/llm/llmtest"
)

// leak is a credential planted in material, in a shape that people paste:
// an OpenAI project key, an AWS access key id with its secret access key,
// a GitHub personal access token. None is real.
type leak struct {
	name, value string
}

var leaks = []leak{
	{"openai project key", "sk-proj-" + "Q7vX2mP9kL4wR8tY1nB6cJ3hF5dG0sA2zE7uI9oK4pM1qW6xN3bV"},
	{"aws access key id", "AKIA" + "QX7Z4M2KD3WP6RLT"},
	{"aws secret access key", "k9Qw2Zr7Lm4Vx8Tn1Bc6Hy3Jp0Gd5Sf2Ae7Uo9i"},
	{"github token", "ghp_" + "R8tY1nB6cJ3hF5dG0sA2zE7uI9oK4pM1qW6xN3"},
}

// planted is text that carries every leak the way a runbook, a note or a
// pasted snippet does.
func planted(title string) string {
	return "# " + title + "\n\n" +
		"The release job was failing, so these went into the notes while we debugged it:\n\n" +
		"    export OPENAI_API_KEY=" + leaks[0].value + "\n" +
		"    aws_access_key_id = " + leaks[1].value + "\n" +
		"    aws_secret_access_key = " + leaks[2].value + "\n" +
		"    GITHUB_TOKEN=" + leaks[3].value + "\n\n" +
		"We decided to rotate them after the billing migration ships in Q4.\n"
}

// plantedGo is a Go file of a change that commits the same credentials.
const plantedGo = `package deploy

// Credentials left in while debugging the release job.
const (
	openAIKey          = "%s"
	awsAccessKeyID     = "%s"
	awsSecretAccessKey = "%s"
	githubToken        = "%s"
)

// Region is where the job deploys.
func Region() string { return "eu-west-1" }
`

func plantedGoFile() string {
	s := plantedGo
	for _, l := range leaks {
		s = strings.Replace(s, "%s", l.value, 1)
	}
	return s
}

// The masker knows every planted shape: were one not detected at all, the
// tests below would prove nothing about where masking is called.
func TestPlantedSecretsAreDetected(t *testing.T) {
	for _, text := range []string{planted("Runbook"), plantedGoFile()} {
		masked := secrets.Mask(text)
		for _, l := range leaks {
			if strings.Contains(masked, tail(l.value)) {
				t.Errorf("secrets.Mask does not mask the %s in:\n%s", l.name, masked)
			}
		}
	}
}

// tail is the part of a secret that its mask never shows (a mask keeps at
// most the first four characters).
func tail(secret string) string { return secret[4:] }

// leakEnv is one scenario's project: a directory, a fake model server, and
// the files that hold planted secrets on purpose (the inputs).
type leakEnv struct {
	t      *testing.T
	dir    string
	srv    *llmtest.Server
	inputs map[string]bool
	// unchecked are files sot writes that a case leaves to another.
	unchecked map[string]bool
	out       bytes.Buffer // every command's stdout and stderr
}

func newLeakEnv(t *testing.T, cfg llmtest.Config) *leakEnv {
	t.Helper()
	e := &leakEnv{t: t, dir: t.TempDir(), srv: llmtest.NewServer(cfg), inputs: map[string]bool{}, unchecked: map[string]bool{}}
	t.Cleanup(e.srv.Close)
	e.write(".gitignore", ".cache/\n.config/\n.state/\nhome/\nout*/\n", false)
	return e
}

// write writes a file of the project; input marks one that holds a
// planted secret on purpose.
func (e *leakEnv) write(name, body string, input bool) {
	e.t.Helper()
	p := filepath.Join(e.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		e.t.Fatal(err)
	}
	if input {
		e.inputs[filepath.ToSlash(name)] = true
	}
}

// git runs git in the project.
func (e *leakEnv) git(args ...string) {
	e.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = e.dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// sot runs sot (this test binary) in the project with stdin, and fails
// the test unless it exits with one of the codes allowed (0 when none is
// given). Its environment is the project's own: test keys, the fake
// server, HOME and the XDG directories inside the project.
func (e *leakEnv) sot(stdin string, codes []int, args ...string) {
	e.t.Helper()
	exe, err := os.Executable()
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = e.dir
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = []string{"SOT_TEST_RUN_MAIN=1", "PATH=" + os.Getenv("PATH"), "NO_COLOR=1",
		"HOME=" + filepath.Join(e.dir, "home"), "XDG_CONFIG_HOME=" + filepath.Join(e.dir, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(e.dir, ".cache"), "XDG_STATE_HOME=" + filepath.Join(e.dir, ".state"),
		"SOT_MODEL=openai:gpt-4.1", "OPENAI_BASE_URL=" + e.srv.OpenAIBaseURL(), "OPENAI_API_KEY=sk-leaktest-0123456789",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"}
	err = cmd.Run()
	e.out.Write(out.Bytes())
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			e.t.Fatalf("sot %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	if len(codes) == 0 {
		codes = []int{0}
	}
	if !slices.Contains(codes, code) {
		e.t.Fatalf("sot %s exited with %d, want one of %v:\n%s", strings.Join(args, " "), code, codes, out.String())
	}
}

// check fails the test when a request the model received, a file sot
// wrote, or anything sot printed holds the remainder of a planted secret;
// and when no request carried a masked secret, which would mean the
// material never reached the model and the scenario proved nothing.
func (e *leakEnv) check(from int) {
	e.t.Helper()
	reqs := e.srv.Requests()
	if len(reqs) <= from {
		e.t.Fatalf("the scenario sent no request to the model:\n%s", e.out.String())
	}
	masked := 0
	for i, r := range reqs[from:] {
		if strings.Contains(string(r.Body), "[secret: ") {
			masked++
		}
		for _, l := range leaks {
			if strings.Contains(string(r.Body), tail(l.value)) {
				e.t.Errorf("request %d of %d (%s) holds the %s", from+i+1, len(reqs), label(r), l.name)
			}
		}
	}
	if masked == 0 {
		e.t.Errorf("no request carried a masked secret: the planted material did not reach the model")
	}
	err := filepath.WalkDir(e.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(e.dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if e.inputs[rel] || e.unchecked[rel] || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, l := range leaks {
			if bytes.Contains(b, []byte(tail(l.value))) {
				e.t.Errorf("%s, written by sot, holds the %s", rel, l.name)
			}
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, l := range leaks {
		if strings.Contains(e.out.String(), tail(l.value)) {
			e.t.Errorf("sot printed the %s", l.name)
		}
	}
	if e.t.Failed() {
		e.t.Logf("what sot printed:\n%s", e.out.String())
	}
}

var systemHead = regexp.MustCompile(`# You are the ([A-Za-z -]+?)[\n.,]`)

// label names a request for a failure message: its system prompt's role.
func label(r llmtest.Recorded) string {
	if m := systemHead.FindStringSubmatch(r.System); m != nil {
		return m[1]
	}
	s := r.System
	if len(s) > 60 {
		s = s[:60]
	}
	return strings.ReplaceAll(s, "\n", " ")
}

// specialistFinding is an llmtest answer of the security specialist with
// one finding, so that a review has something for moderator mode.
const specialistFinding = `rules:
  - system: "Moderator mode"
    user: "Your finding"
    json: {verdict: concede, new_evidence: "", reasoning: "the keys were revoked before the change was pushed, so nobody can use them any more."}
  - system: "Moderator mode"
    reply: "Rotate them and read them from the environment."
  - system: "You are the security specialist"
    json:
      examined: "deploy/deploy.go"
      findings:
        - finding: "The region is hard-coded."
          severity: should-fix
          confidence: HIGH
          category: configuration
          grounds: "deploy/deploy.go:4 returns a fixed region"
          file: deploy/deploy.go
          start_line: 4
          end_line: 4
          section: ""
          warrant: "A second region needs a code change."
          rebuttal_conditions: "There is only one region."
          suggested_verification: "Read the region from the environment."
          perspective: ""
  - system: "triage lead"
    json: {clusters: [], narrative: ""}
`

// Every place where material enters sot masks the secrets in it: none
// reaches the model, none is written to a file (reports, journals, the
// response cache, the corpus index, the argument graph, MODERATOR.md) and
// none is printed. Each case fails when its entry point's masking is
// removed (see the report of issue 22 for which were checked so).
func TestPlantedSecretsNeverLeave(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	review := []string{"review", "--perspectives", "none", "--specialists", "security", "--no-cache"}
	debate := []string{"debate", "--rounds", "1", "--branch-rounds", "1", "--observers", "none", "--no-cache"}
	tests := []struct {
		name string
		cfg  string // llmtest rules, YAML
		run  func(e *leakEnv) (from int)
	}{
		{name: "diff", run: func(e *leakEnv) int {
			e.write("deploy/deploy.go", "package deploy\n", false)
			e.git("init", "-q", "-b", "main")
			e.git("add", ".")
			e.git("commit", "-qm", "init")
			e.write("deploy/deploy.go", plantedGoFile(), true)
			e.write("notes/runbook.md", planted("Runbook"), true) // untracked: part of the change
			e.sot("", nil, append(review, "--output-dir", "out")...)
			return 0
		}},
		{name: "artifacts", run: func(e *leakEnv) int {
			e.git("init", "-q", "-b", "main")
			e.write("docs/runbook.md", planted("Runbook"), true)
			e.sot("", nil, append(review, "--artifacts", "docs/runbook.md", "--output-dir", "out")...)
			return 0
		}},
		{name: "freeform from stdin", run: func(e *leakEnv) int {
			e.git("init", "-q", "-b", "main")
			e.sot(planted("Pasted notes"), nil, append(review, "--type", "freeform", "--input", "-", "--output-dir", "out")...)
			return 0
		}},
		{name: "freeform from a file", run: func(e *leakEnv) int {
			e.git("init", "-q", "-b", "main")
			e.write("notes.txt", planted("Notes"), true)
			e.sot("", nil, append(review, "--type", "freeform", "--input", "notes.txt", "--output-dir", "out")...)
			return 0
		}},
		{name: "corpus", run: func(e *leakEnv) int {
			e.git("init", "-q", "-b", "main")
			e.write("notes/2025-07-02-planning.md", planted("Q3 planning"), true)
			e.write("notes/2025-08-20-retro.md", "# Q3 retro\n\nThe billing migration pilot shipped in August; the keys are still to rotate.\n", false)
			e.sot("", []int{0, 1, 3}, "ask", "--no-cache", "--output-dir", "out", "When do we rotate the release keys?", "notes")
			e.sot("", nil, "sources", "show", "Q3 planning")
			return 0
		}},
		{name: "passage from a file", run: func(e *leakEnv) int {
			e.git("init", "-q", "-b", "main")
			e.write("passage.txt", planted("A scene"), true)
			e.sot("", []int{0, 3}, append(debate, "--output-dir", "out", "passage.txt")...)
			return 0
		}},
		{name: "passage from stdin", run: func(e *leakEnv) int {
			e.git("init", "-q", "-b", "main")
			e.sot(planted("A scene"), []int{0, 3}, append(debate, "--output-dir", "out", "-")...)
			return 0
		}},
		{name: "passage as --passage", run: func(e *leakEnv) int {
			e.git("init", "-q", "-b", "main")
			e.sot("", []int{0, 3}, append(debate, "--output-dir", "out", "--passage", planted("A scene"))...)
			// run.json's resume command is the next case's.
			e.unchecked["out/run.json"] = true
			return 0
		}},
		{name: "resume command of --passage",
			run: func(e *leakEnv) int {
				e.git("init", "-q", "-b", "main")
				e.sot("", []int{0, 3}, append(debate, "--output-dir", "out", "--passage", planted("A scene"))...)
				e.sot("", nil, "runs")
				return 0
			}},
		{name: "ask question",
			run: func(e *leakEnv) int {
				e.git("init", "-q", "-b", "main")
				e.write("notes/2025-07-02-planning.md", "# Q3 planning\n\nWe decided to delay the billing migration to Q4.\n", false)
				e.sot("", []int{0, 1, 3}, "ask", "--no-cache", "--output-dir", "out", "Is GITHUB_TOKEN="+leaks[3].value+" still used by the release job?", "notes")
				return 0
			}},
		{name: "review framing",
			run: func(e *leakEnv) int {
				e.git("init", "-q", "-b", "main")
				e.write("notes.txt", planted("Notes"), true)
				e.sot("", nil, append(review, "--type", "freeform", "--input", "notes.txt", "--output-dir", "out",
					"--framing", "Review these notes; export OPENAI_API_KEY="+leaks[0].value+" is the key the job uses.")...)
				return 0
			}},
		{name: "graph context", run: func(e *leakEnv) int {
			e.git("init", "-q", "-b", "main")
			e.write("ants.txt", "The Ants were spending a fine winter's day drying grain collected in the summer time.\n", false)
			e.write("fox.txt", "A famished Fox saw some clusters of ripe black grapes hanging from a trellised vine.\n", false)
			e.sot("", []int{0, 3}, append(debate, "--graph", "g.json", "--output-dir", "out", "ants.txt")...)
			// A graph file that came with the repository, or that someone
			// edited, holds keys in what it says of earlier debates.
			b, err := os.ReadFile(filepath.Join(e.dir, "g.json"))
			if err != nil {
				e.t.Fatal(err)
			}
			note := strings.ReplaceAll(strings.TrimSpace(planted("Debug notes")), "\n", " ")
			g := regexp.MustCompile(`"(topic|resolution|summary)": "`).ReplaceAllString(string(b), `"$1": "`+note+` `)
			if g == string(b) {
				e.t.Fatalf("g.json has no topic, resolution or summary to plant a key in:\n%s", b)
			}
			e.write("g.json", g, true)
			from := len(e.srv.Requests())
			e.sot("", []int{0, 3}, append(debate, "--graph", "g.json", "--output-dir", "out", "fox.txt")...)
			delete(e.inputs, "g.json") // sot rewrote it: it must hold no key now
			return from
		}},
		{name: "moderator input", cfg: specialistFinding, run: func(e *leakEnv) int {
			e.write("deploy/deploy.go", "package deploy\n", false)
			e.git("init", "-q", "-b", "main")
			e.git("add", ".")
			e.git("commit", "-qm", "init")
			e.write("deploy/deploy.go", "package deploy\n\n// Region is where the job deploys.\nfunc Region() string { return \"eu-west-1\" }\n", false)
			e.sot("", nil, append(review, "--interactive", "true", "--output-dir", "out")...)
			from := len(e.srv.Requests())
			e.write("runbook.md", planted("Runbook"), true)
			session := "deeper runbook.md with security\n" + "done\n"
			e.sot(session, nil, "moderate", "--force", "out")
			return from
		}},
		{name: "moderator typed words", cfg: specialistFinding,
			run: func(e *leakEnv) int {
				e.write("deploy/deploy.go", "package deploy\n", false)
				e.git("init", "-q", "-b", "main")
				e.git("add", ".")
				e.git("commit", "-qm", "init")
				e.write("deploy/deploy.go", "package deploy\n\n// Region is where the job deploys.\nfunc Region() string { return \"eu-west-1\" }\n", false)
				e.sot("", nil, append(review, "--interactive", "true", "--output-dir", "out")...)
				from := len(e.srv.Requests())
				session := "ask security is " + leaks[0].value + " still live?\n" +
					"challenge security.1 the token GITHUB_TOKEN=" + leaks[3].value + " was revoked, and so were aws_access_key_id = " + leaks[1].value + " and aws_secret_access_key = " + leaks[2].value + "\n" +
					"done\n"
				e.sot(session, nil, "moderate", "--force", "out")
				return from
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := llmtest.Config{}
			if tt.cfg != "" {
				p := filepath.Join(t.TempDir(), "llmtest.yaml")
				if err := os.WriteFile(p, []byte(tt.cfg), 0o644); err != nil {
					t.Fatal(err)
				}
				c, err := llmtest.LoadConfig(p)
				if err != nil {
					t.Fatal(err)
				}
				cfg = c
			}
			e := newLeakEnv(t, cfg)
			from := tt.run(e)
			e.check(from)
		})
	}
}
