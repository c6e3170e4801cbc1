package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/sotlabs/sot/internal/plainfile"
	"github.com/sotlabs/sot/internal/project"
	"github.com/sotlabs/sot/internal/yamlfile"
	"github.com/sotlabs/sot/llm"
)

// sep joins the parts of a flattened key internally; keys such as model
// names may contain dots, so dots cannot be used.
const sep = "\x1f"

// Sources says where each value of a Config came from, keyed by dotted path
// ("providers.openai.base_url").
type Sources map[string]string

// Of returns the source of a key, or "default".
func (s Sources) Of(key string) string {
	if v, ok := s[key]; ok {
		return v
	}
	return "default"
}

// Value is one setting of the merged configuration.
type Value struct {
	Key    string `json:"key"`
	Value  any    `json:"value"`
	Source string `json:"source"`
}

// Loader merges configuration layers. Declare one with the directories and
// files to read (the zero value reads the defaults), add flags with Set,
// then call Load.
type Loader struct {
	// WorkDir is where the search for .sot/config.yaml starts (default: cwd).
	WorkDir string
	// UserDir holds the user's config.yaml (default $XDG_CONFIG_HOME/sot).
	UserDir string
	// File is an extra config file given with --config; it ranks above the
	// project file and below the environment.
	File string
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
	// Trust holds the project files the user trusted with "sot trust"; nil
	// trusts none. An untrusted project file may not set what could run a
	// program, send a key elsewhere, choose the secret sent, or loosen the
	// user's limits (see Ignored).
	Trust *TrustStore

	flags   []flagValue
	ignored []Ignored
	lapsed  []string
}

// Ignored lists the project settings the last Load did not apply.
func (l *Loader) Ignored() []Ignored { return l.ignored }

// Lapsed lists, for each project file the user trusted once but that the
// last Load did not trust, what changed since and how to trust it again.
func (l *Loader) Lapsed() []string { return l.lapsed }

type flagValue struct{ key, value, source string }

// Set records a value given by a flag, such as Set("default_model", "openai:gpt-4.1", "--model").
func (l *Loader) Set(key, value, flag string) {
	l.flags = append(l.flags, flagValue{key, value, "flag " + flag})
}

// UserDir returns $XDG_CONFIG_HOME/sot, or the platform's equivalent.
func UserDir(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "sot")
	}
	if d, err := os.UserConfigDir(); err == nil {
		return filepath.Join(d, "sot")
	}
	return ""
}

// ProjectFile finds .sot/config.yaml in dir or the nearest parent, stopping
// at the repository root. It returns "" when there is none.
func ProjectFile(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".sot", "config.yaml")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil || filepath.Dir(d) == d {
			return ""
		}
	}
}

// envKeys maps environment variables to config keys.
var envKeys = []struct{ env, key string }{
	{"SOT_MODEL", "default_model"},
	{"SOT_CONCURRENCY", "concurrency"},
	{"SOT_RETRIES", "retries"},
	{"SOT_TIMEOUT", "timeout"},
	{"SOT_MAX_CALLS", "budget.max_calls"},
	{"SOT_MAX_TOKENS", "budget.max_tokens"},
	{"SOT_MAX_COST", "budget.max_cost"},
	{"SOT_NO_CACHE", "cache.disabled"},
	{"SOT_CACHE_DIR", "cache.dir"},
	{"OPENAI_BASE_URL", "providers.openai.base_url"},
	{"ANTHROPIC_BASE_URL", "providers.anthropic.base_url"},
	{"OLLAMA_HOST", "providers.ollama.base_url"},
}

// Load merges defaults, the user file, the project file, --config, the
// environment and flags, then validates the result.
func (l *Loader) Load() (*Config, Sources, error) {
	getenv := l.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	wd := l.WorkDir
	if wd == "" {
		wd, _ = os.Getwd()
	}
	userDir := l.UserDir
	if userDir == "" {
		userDir = UserDir(getenv)
	}

	flat := map[string]any{}
	src := Sources{}
	put := func(m map[string]any, source string) {
		for k, v := range m {
			flat[k] = v
			src[strings.ReplaceAll(k, sep, ".")] = source
		}
	}

	def, err := toMap(Defaults())
	if err != nil {
		return nil, nil, err
	}
	for k, v := range flatten(def, "") {
		flat[k] = v
	}

	files := []struct{ path, label string }{
		{filepath.Join(userDir, "config.yaml"), "user config"},
		{ProjectFile(wd), "project config"},
		{l.File, "--config"},
	}
	l.ignored, l.lapsed = nil, nil
	for _, f := range files {
		if f.path == "" || userDir == "" && f.label == "user config" {
			continue
		}
		m, data, err := readFile(f.path, f.label == "--config")
		if err != nil {
			return nil, nil, err
		}
		fm := flatten(m, "")
		for k, v := range fm {
			if x, ok := v.(float64); ok && (math.IsNaN(x) || math.IsInf(x, 0)) {
				return nil, nil, fmt.Errorf("%s (from %s %s): %v is not a number sot can use; write a finite number", strings.ReplaceAll(k, sep, "."), f.label, f.path, x)
			}
		}
		if f.label == "project config" && len(fm) > 0 {
			base, err := decode(flat)
			if err != nil {
				return nil, nil, err
			}
			var ig []Ignored
			trusted := l.trusted(f.path, data, wd)
			if !trusted.Trusted && trusted.Lapsed != "" {
				l.lapsed = append(l.lapsed, LapsedWarning(relTo(wd, f.path), trusted.Lapsed))
			}
			fm, ig = scopeProject(relTo(wd, f.path), filepath.Dir(filepath.Dir(f.path)), data, fm, base, trusted.Trusted)
			l.ignored = append(l.ignored, ig...)
		}
		put(fm, fmt.Sprintf("%s %s", f.label, f.path))
	}

	for _, e := range envKeys {
		v := strings.TrimSpace(getenv(e.env))
		if v == "" {
			continue
		}
		if e.env == "OLLAMA_HOST" && !strings.Contains(v, "://") {
			v = "http://" + v
		}
		parsed, err := parseScalar(e.key, v)
		if err != nil {
			return nil, nil, fmt.Errorf("%s=%q: %w", e.env, v, err)
		}
		put(map[string]any{strings.ReplaceAll(e.key, ".", sep): parsed}, "env "+e.env)
	}
	for _, f := range l.flags {
		parsed, err := parseScalar(f.key, f.value)
		if err != nil {
			return nil, nil, fmt.Errorf("%s %q: %w", strings.TrimPrefix(f.source, "flag "), f.value, err)
		}
		put(map[string]any{strings.ReplaceAll(f.key, ".", sep): parsed}, f.source)
	}

	cfg, err := decode(flat)
	if err != nil {
		return nil, nil, err
	}
	if err := cfg.Validate(src); err != nil {
		return nil, nil, err
	}
	return cfg, src, nil
}

// decode turns flattened settings into a Config.
func decode(flat map[string]any) (*Config, error) {
	b, err := json.Marshal(unflatten(flat))
	if err != nil {
		return nil, err
	}
	var cfg Config
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	return &cfg, nil
}

// trusted checks whether the user trusted the project file at path, whose
// content is data, and the files it runs. A trust store kept inside the
// project itself (a state directory pointed into the checkout) is not the
// user's and trusts nothing.
func (l *Loader) trusted(path string, data []byte, wd string) TrustCheck {
	if l.Trust == nil {
		return TrustCheck{}
	}
	top, _ := project.Top(filepath.Dir(path))
	if _, inside := project.ResolvedWithin(top, l.Trust.Path); inside {
		return TrustCheck{}
	}
	return l.Trust.Check(path, data, wd)
}

// LapsedWarning is the warning for a file whose trust lapsed: what changed
// (why) and the command that trusts it again.
func LapsedWarning(file, why string) string {
	return fmt.Sprintf("the trust you gave %s lapsed: %s; sot treats it as untrusted. Read what changed, then trust it again with: sot trust %s", file, why, file)
}

// readFile decodes one config file. A missing file is skipped unless it was
// named explicitly.
func readFile(path string, mustExist bool) (map[string]any, []byte, error) {
	data, err := plainfile.Read(path)
	if errors.Is(err, fs.ErrNotExist) && !mustExist {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read config: %w", err)
	}
	// Decode once strictly into the typed struct, for errors with positions
	// and unknown keys; then into a map, to merge only what the file sets.
	var typed Config
	if err := yamlfile.Decode(path, data, &typed, true, 0); err != nil {
		return nil, nil, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, nil, yamlfile.Wrap(path, err, 0)
	}
	return m, data, nil
}

// parseScalar turns a flag or environment string into the type its key needs.
func parseScalar(key, v string) (any, error) {
	switch key {
	case "concurrency", "retries", "budget.max_calls", "budget.max_tokens":
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("not a whole number")
		}
		return n, nil
	case "budget.max_cost":
		f, err := strconv.ParseFloat(strings.TrimPrefix(v, "$"), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("not a number of dollars")
		}
		return f, nil
	case "cache.disabled":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("not true or false")
		}
		return b, nil
	}
	return v, nil
}

func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}

// flatten turns nested maps into sep-joined keys; lists and scalars are leaves,
// and empty or null values are dropped.
func flatten(m map[string]any, prefix string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + sep + k
		}
		switch vv := v.(type) {
		case map[string]any:
			for k2, v2 := range flatten(vv, key) {
				out[k2] = v2
			}
		case nil:
		case string:
			if vv != "" {
				out[key] = vv
			}
		default:
			out[key] = vv
		}
	}
	return out
}

func unflatten(flat map[string]any) map[string]any {
	root := map[string]any{}
	for k, v := range flat {
		parts := strings.Split(k, sep)
		m := root
		for _, p := range parts[:len(parts)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		m[parts[len(parts)-1]] = v
	}
	return root
}

// isSecret reports whether a config key holds a credential, whose value is
// never shown. It judges the key's last segment, so that a setting such as
// budget.max_tokens (a count) is shown while an api_key or an auth_token is
// not.
func isSecret(key string) bool {
	k := strings.ToLower(key)
	if i := strings.LastIndexByte(k, '.'); i >= 0 {
		k = k[i+1:]
	}
	return k == "api_key" || k == "token" || strings.HasSuffix(k, "_token") ||
		strings.Contains(k, "secret") || strings.Contains(k, "password")
}

// Values lists every setting of cfg with its source, sorted by key, with
// secrets replaced by "[REDACTED]".
func Values(cfg *Config, src Sources) ([]Value, error) {
	m, err := toMap(cfg)
	if err != nil {
		return nil, err
	}
	flat := flatten(m, "")
	vals := make([]Value, 0, len(flat))
	for k, v := range flat {
		key := strings.ReplaceAll(k, sep, ".")
		if n, ok := v.(float64); ok && n == 0 {
			if _, set := src[key]; !set {
				continue // an unset number is noise
			}
		}
		if b, ok := v.(bool); ok && !b {
			if _, set := src[key]; !set {
				continue
			}
		}
		if isSecret(key) {
			v = "[REDACTED]"
		} else if str, ok := v.(string); ok {
			v = llm.Redact(str) // a password in a base URL, a key pasted in the wrong field
		}
		vals = append(vals, Value{Key: key, Value: v, Source: src.Of(key)})
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i].Key < vals[j].Key })
	return vals, nil
}

// relTo names path relative to dir when it can, for messages.
func relTo(dir, path string) string {
	if rel, err := filepath.Rel(dir, path); err == nil {
		return rel
	}
	return path
}
