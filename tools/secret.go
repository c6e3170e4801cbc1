package tools

import (
	"fmt"
	"path"
	"strings"
)

// The names below copy material's secretNames, secretPaths, secretSuffixes
// and envTemplates (material/classify.go), which material does not export:
// a tool refuses exactly the files the material leaves out as credentials.
// Keep the two lists the same.
var (
	secretNames = map[string]bool{
		".env": true, ".envrc": true, "id_rsa": true, "id_dsa": true, "id_ecdsa": true, "id_ed25519": true,
		".netrc": true, "_netrc": true, ".npmrc": true, ".pypirc": true, ".pgpass": true, ".git-credentials": true,
		"credentials.json": true, ".htpasswd": true, "kubeconfig": true, ".vault-token": true,
	}
	secretPaths    = []string{".aws/credentials", ".kube/config", ".docker/config.json"}
	secretSuffixes = []string{".pem", ".key", ".p12", ".pfx", ".keystore", ".jks", ".ppk", ".tfvars", ".env", ".tfstate", ".tfstate.backup"}
	envTemplates   = []string{"example", "sample", "template", "dist"}
)

// isSecretName reports whether a slash path names a file that usually
// holds credentials, by its name or by its name and directory; it is
// material's isSecretName.
func isSecretName(p string) bool {
	base := strings.ToLower(path.Base(p))
	if secretNames[base] {
		return true
	}
	if rest, ok := strings.CutPrefix(base, ".env."); ok {
		for _, t := range envTemplates {
			if rest == t {
				return false
			}
		}
		return true
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(base, s) {
			return true
		}
	}
	lp := "/" + strings.ToLower(p)
	for _, s := range secretPaths {
		if strings.HasSuffix(lp, "/"+s) {
			return true
		}
	}
	return false
}

// errSecret says that a file is refused as credentials.
func errSecret(p string) error {
	return fmt.Errorf("%s looks like a credentials file and is never shown to a model; do not ask for it again", p)
}
