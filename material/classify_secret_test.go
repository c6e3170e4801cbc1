package material

import "testing"

func TestSecretFilesAreNeverSent(t *testing.T) {
	for name, want := range map[string]bool{
		".env": true, "config/.env.production": true, ".env.example": false, "deploy/tls.key": true, "certs/server.pem": true,
		"home/.ssh/id_ed25519": true, "main.go": false, "keys.go": false, "docs/env.md": false,
	} {
		if got := pathSkipReason(name) == reasonSecret; got != want {
			t.Errorf("%s: secret = %v, want %v", name, got, want)
		}
	}
}
