package llm

import (
	"os"
	"regexp"
	"strings"
	"sync"
)

var (
	secretsMu sync.RWMutex
	secrets   []string
)

// keyPattern matches strings shaped like common API keys, as a last line of
// defence for keys that were never registered.
var keyPattern = regexp.MustCompile(`\b(sk-[A-Za-z0-9_\-]{8,}|sk-ant-[A-Za-z0-9_\-]{8,}|Bearer [A-Za-z0-9_\-\.]{8,})`)

// RegisterSecret makes Redact hide s. Providers register every key they load.
// Values shorter than 6 bytes are ignored: hiding them would mangle ordinary text.
func RegisterSecret(s string) {
	s = strings.TrimSpace(s)
	if len(s) < 6 {
		return
	}
	secretsMu.Lock()
	defer secretsMu.Unlock()
	for _, v := range secrets {
		if v == s {
			return
		}
	}
	secrets = append(secrets, s)
}

// secretEnv lists the environment variables of the built-in providers'
// credentials (keys named by a provider's api_key_env are registered when the
// provider is built).
var secretEnv = []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY"}

// RegisterEnvSecrets registers the values of the known credential variables.
func RegisterEnvSecrets() {
	for _, k := range secretEnv {
		RegisterSecret(os.Getenv(k))
	}
}

// Redact replaces every registered secret, anything shaped like an API key,
// and the password of a URL with "[REDACTED]".
func Redact(s string) string {
	secretsMu.RLock()
	for _, v := range secrets {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, "[REDACTED]")
		}
	}
	secretsMu.RUnlock()
	s = keyPattern.ReplaceAllString(s, "[REDACTED]")
	return userinfoPattern.ReplaceAllString(s, "${1}[REDACTED]@")
}

// userinfoPattern matches the password of a URL's user information, as in
// https://user:password@host/.
// The password may hold "/" and "+" (base64 tokens often do, unencoded).
var userinfoPattern = regexp.MustCompile(`(://[^/\s:@]+:)[^@\s"']+@`)
