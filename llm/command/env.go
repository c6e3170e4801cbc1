package command

import (
	"runtime"
	"slices"
	"strings"
)

// SystemFileEnv is the environment variable that holds the path of the
// plain-text copy of the system prompt. It is set only when the request has
// a system prompt.
const SystemFileEnv = "SOT_SYSTEM_FILE"

// BaseEnv names the variables of sot's environment that every program the
// backend runs gets, when they are set. A name ending in "*" stands for
// every variable that starts with what comes before it. They are what the
// llm CLI needs to start and find its configuration and keys: the search
// path, the home and temporary directories, the locale and time zone, the
// XDG base directories, and llm's own LLM_* variables. The last group
// (SYSTEMROOT to TMP) matters on Windows only and is rarely set elsewhere.
// Nothing else of sot's environment reaches the program unless
// Config.PassEnv names it.
var BaseEnv = []string{
	"PATH", "HOME", "TMPDIR",
	"LANG", "LANGUAGE", "LC_*", "TZ",
	"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME",
	"LLM_*",
	"SYSTEMROOT", "USERPROFILE", "APPDATA", "LOCALAPPDATA", "PATHEXT", "TEMP", "TMP",
}

// environ returns the program's environment: the variables of
// Config.Environ that BaseEnv or Config.PassEnv name, and SOT_SYSTEM_FILE
// when systemFile is not empty. An inherited SOT_SYSTEM_FILE is never
// passed on. The result is sorted by name; when a name occurs twice in
// Config.Environ, the last occurrence wins, as with os/exec.
func (p *Provider) environ(systemFile string) []string {
	fold := runtime.GOOS == "windows" // variable names ignore case there
	norm := func(s string) string {
		if fold {
			return strings.ToUpper(s)
		}
		return s
	}
	allowed := func(name string) bool {
		n := norm(name)
		if n == norm(SystemFileEnv) {
			return false
		}
		for _, b := range BaseEnv {
			if prefix, ok := strings.CutSuffix(b, "*"); ok {
				if strings.HasPrefix(n, prefix) {
					return true
				}
			} else if n == b {
				return true
			}
		}
		for _, e := range p.cfg.PassEnv {
			if n == norm(e) {
				return true
			}
		}
		return false
	}
	kept := map[string]string{} // normalised name -> "NAME=value"
	for _, kv := range p.cfg.Environ() {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || !allowed(name) {
			continue
		}
		kept[norm(name)] = kv
	}
	if systemFile != "" {
		kept[norm(SystemFileEnv)] = SystemFileEnv + "=" + systemFile
	}
	env := make([]string, 0, len(kept))
	for _, kv := range kept {
		env = append(env, kv)
	}
	slices.Sort(env)
	return env
}
