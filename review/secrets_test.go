package review

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/llm/llmtest"
)

// leakedSecrets are the user's own key (the one benchOptions gives the
// provider) and five common token formats, as a change might commit them.
var leakedSecrets = map[string]string{
	"user key":  "sk-bench-0123456789",
	"aws":       "AKIAZ7Q3R5T2W6X4Y6LM",
	"github":    "ghp_R8kV2mQ9xL4nT7pW1sY6zB3cF5hJ0dG8aE2u",
	"slack":     "xoxb-2384723948-9238472394823-Hk3JdP9qLm2ZxT7vB4nR8sYw",
	"anthropic": "sk-ant-api03-" + strings.Repeat("Qw7eRt9yUi3oPa5sDf1gHj8kLz2xCv6bNm4", 3)[:93] + "AA",
	"openai":    "sk-proj-Xy7Pq2Lm9Nc4Vb8Zt1Rk5Wd3Hs6Jf0GaT3BlbkFJuV8Qe2Mn5Lp9Kx",
}

// A change that commits secrets, reviewed by a model that quotes every
// secret back: no request carries one, and no file sot writes (the journal,
// the response cache, every REVIEW file and machine output) holds one. The
// specialists still see the kind of each secret and where it is.
func TestSecretsNeverLeave(t *testing.T) {
	repo := benchRepo(t, 0, 0)
	var src strings.Builder
	src.WriteString("package config\n\n")
	for name, s := range leakedSecrets {
		src.WriteString("// " + name + "\n")
		src.WriteString("var " + strings.ReplaceAll(name, " ", "") + "Key = \"" + s + "\"\n")
	}
	if err := os.WriteFile(filepath.Join(repo, "config.go"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var quoted strings.Builder
	for _, s := range leakedSecrets {
		quoted.WriteString(s + " ")
	}
	finding := map[string]any{"perspective": "", "finding": "hard-coded credentials: " + quoted.String(), "severity": "must-fix", "confidence": "HIGH",
		"category": "security", "grounds": "config.go line 4 holds " + quoted.String(), "file": "config.go", "start_line": 4, "end_line": 0,
		"section": "", "warrant": "keys in source leak", "rebuttal_conditions": "unless revoked", "suggested_verification": "grep for " + quoted.String()}
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{
		System: "# You are the ",
		JSON:   map[string]any{"findings": []any{finding}, "examined": "config.go"},
	}}})
	defer srv.Close()
	o := benchOptions(t, repo, srv, "openai:gpt-4.1")
	o.Context.Specialists = "security,testing"
	o.Context.Perspectives = "none"
	cache := t.TempDir()
	o.Config.Cache.Disabled = false
	o.Config.Cache.Dir = cache

	plan, err := Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Execute(context.Background(), plan, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteFormats(plan.OutputDir, out.Result, []string{"json", "sarif", "rdjson"}, "test"); err != nil {
		t.Fatal(err)
	}

	sawShape := false
	for _, r := range srv.Requests() {
		for name, s := range leakedSecrets {
			if bytes.Contains(r.Body, []byte(s)) {
				t.Errorf("a request carried the %s secret", name)
			}
		}
		sawShape = sawShape || bytes.Contains(r.Body, []byte("AKIA…[secret: aws-access-token]"))
	}
	if !sawShape {
		t.Error("no request shows the specialists what kind of secret is committed")
	}
	files := 0
	for _, dir := range []string{plan.OutputDir, cache} {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			files++
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for name, s := range leakedSecrets {
				if bytes.Contains(b, []byte(s)) {
					t.Errorf("%s holds the %s secret", path, name)
				}
			}
			return nil
		})
	}
	for _, name := range []string{"journal.jsonl", "REVIEW-SECURITY.md", "REVIEW-SYNTHESIS.md", "review.json", "review.sarif", "review.rdjsonl"} {
		if _, err := os.Stat(filepath.Join(plan.OutputDir, name)); err != nil {
			t.Errorf("%s was not written, so it was not checked: %v", name, err)
		}
	}
	if entries, _ := os.ReadDir(cache); len(entries) == 0 {
		t.Error("the response cache holds nothing, so it was not checked")
	}
}

// The key of a provider the user configured (not one of the well-known
// variables, and in no format a detector knows) is masked in the material
// too: it is registered before the material is read.
func TestConfiguredKeyMaskedInMaterial(t *testing.T) {
	repo := benchRepo(t, 0, 0)
	const key = "rk-live-9f8e7d6c5b4a3928x"
	os.WriteFile(filepath.Join(repo, "deploy.sh"), []byte("#!/bin/sh\necho "+key+" >> /tmp/notes\n"), 0o755)
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	o := benchOptions(t, repo, srv, "openai:gpt-4.1")
	o.Config.Providers["router"] = config.Provider{Type: "openai", BaseURL: srv.OpenAIBaseURL(), APIKeyEnv: "ROUTER_KEY"}
	o.Getenv = func(k string) string {
		if k == "ROUTER_KEY" {
			return key
		}
		return ""
	}
	plan, err := Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range plan.Material.Files {
		if strings.Contains(f.Text, key) {
			t.Fatalf("%s still holds the configured key:\n%s", f.Path, f.Text)
		}
	}
}
