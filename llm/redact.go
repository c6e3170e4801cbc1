package llm

import (
	"os"
	"strings"

	"github.com/sotlabs/sot/internal/lazyre"
	"github.com/sotlabs/sot/internal/secrets"
)

// keyPattern matches strings shaped like common API keys, as a last line of
// defence for keys that were never registered.
var keyPattern = lazyre.New(`\b(sk-[A-Za-z0-9_\-]{8,}|sk-ant-[A-Za-z0-9_\-]{8,}|Bearer [A-Za-z0-9_\-\.]{8,})`)

// RegisterSecret makes Redact hide s, and makes sot mask it wherever it
// appears in material and model answers (see package internal/secrets).
// Providers register every key they load. Values shorter than 6 bytes are
// ignored: hiding them would mangle ordinary text.
func RegisterSecret(s string) { secrets.Register(s) }

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

// Redact replaces every registered secret, every token of a known format
// (an AWS access key, a GitHub or Slack token, a provider's API key, ...;
// gitleaks' rules except its generic ones, which would take ordinary
// configuration values for secrets), anything shaped like an API key, and
// the password of a URL with "[REDACTED]". It is meant for messages and
// logs; model answers and material are masked with package
// internal/secrets, which keeps the kind of each secret.
func Redact(s string) string {
	spans := secrets.Find(s, "")
	if len(spans) > 0 {
		var b strings.Builder
		last := 0
		for _, sp := range spans {
			if sp.Kind != secrets.KnownKind && strings.Contains(sp.Kind, "generic") {
				continue
			}
			b.WriteString(s[last:sp.Start])
			b.WriteString("[REDACTED]")
			last = sp.End
		}
		b.WriteString(s[last:])
		s = b.String()
	}
	s = keyPattern.Re().ReplaceAllString(s, "[REDACTED]")
	return userinfoPattern.Re().ReplaceAllString(s, "${1}[REDACTED]@")
}

// userinfoPattern matches the password of a URL's user information, as in
// https://user:password@host/.
// The password may hold "/" and "+" (base64 tokens often do, unencoded).
var userinfoPattern = lazyre.New(`(://[^/\s:@]+:)[^@\s"']+@`)
