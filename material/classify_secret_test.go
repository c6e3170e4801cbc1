package material

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSecretFilesAreNeverSent(t *testing.T) {
	for name, want := range map[string]bool{
		".env": true, "config/.env.production": true, ".env.example": false, "deploy/tls.key": true, "certs/server.pem": true,
		"home/.ssh/id_ed25519": true, "main.go": false, "keys.go": false, "docs/env.md": false,
		".aws/credentials": true, "home/.aws/credentials": true, ".AWS/Credentials": true, "credentials": false,
		"aws/credentials": false, "docs/credentials.md": false, ".git-credentials": true, ".pgpass": true,
		".envrc": true, ".netrc": true, "_netrc": true, ".npmrc": true, ".pypirc": true, "pgpass.go": false,
	} {
		if got := pathSkipReason(name) == reasonSecret; got != want {
			t.Errorf("%s: secret = %v, want %v", name, got, want)
		}
	}
}

func TestPrivateKeyHeader(t *testing.T) {
	for _, tt := range []struct {
		line string
		want bool
	}{
		{"-----BEGIN PRIVATE KEY-----", true},
		{"-----BEGIN RSA PRIVATE KEY-----", true},
		{"-----BEGIN EC PRIVATE KEY-----", true},
		{"-----BEGIN DSA PRIVATE KEY-----", true},
		{"-----BEGIN OPENSSH PRIVATE KEY-----", true},
		{"-----BEGIN ENCRYPTED PRIVATE KEY-----", true},
		{"-----BEGIN PGP PRIVATE KEY BLOCK-----", true},
		{"-----BEGIN RSA PRIVATE KEY-----\r", true},
		{"    -----BEGIN RSA PRIVATE KEY-----", true}, // in a YAML block scalar
		{"\t-----BEGIN PRIVATE KEY-----", true},
		// Mentions, not keys.
		{`const header = "-----BEGIN RSA PRIVATE KEY-----"`, false},
		{`"-----BEGIN RSA PRIVATE KEY-----\nMIIE..."`, false},
		{"Paste the -----BEGIN PRIVATE KEY----- block here.", false},
		{"Never commit a private key.", false},
		{"-----BEGIN CERTIFICATE-----", false},
		{"-----BEGIN PUBLIC KEY-----", false},
		{"-----BEGIN RSA PRIVATE KEY", false},
		{"-----BEGIN %s PRIVATE KEY-----", false},
		{"", false},
	} {
		if got := isPrivateKeyHeader(tt.line); got != tt.want {
			t.Errorf("isPrivateKeyHeader(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

// pemKey is a private key as it appears in a file: a header at the start of
// a line, then the encoded key. The key itself is not a real one.
func pemKey(kind string) string {
	label := "PRIVATE KEY"
	if kind != "" {
		label = kind + " " + label
	}
	return "-----BEGIN " + label + "-----\nMIIEowIBAAKCAQEAnotarealkeyjustfortesting0123456789abcdef\n-----END " + label + "-----\n"
}

// keyMention is a Go file that names a private key header in a string
// constant and in prose: it holds no key and is reviewed.
const keyMention = `package pemcheck

// header starts a private key; a file with one is never committed.
const header = "-----BEGIN RSA PRIVATE KEY-----"

func IsKey(s string) bool { return len(s) > len(header) && s[:len(header)] == header }
`

func TestDiffCredentials(t *testing.T) {
	r := newRepo(t)
	r.write("keep.go", "package keep\n\nvar A = 1\n")
	r.write(".pgpass", "db:5432:app:app:old\n")
	r.write("config/.envrc", "export TOKEN=old\n")
	r.write("keys/old_key", pemKey("RSA"))
	r.write("k8s/secret.yaml", "kind: Secret\ndata:\n  tls.key: |\n"+indent(pemKey("EC"), "    ")+"other: 1\n")
	r.commit("base")

	// Tracked files, changed.
	r.write("keep.go", "package keep\n\nvar A = 2\n")
	r.write(".pgpass", "db:5432:app:app:new\n")
	r.write("config/.envrc", "export TOKEN=new\n")
	r.remove("keys/old_key") // a key being deleted is still a key
	r.write("k8s/secret.yaml", "kind: Secret\ndata:\n  tls.key: |\n"+indent(pemKey("EC"), "    ")+"other: 2\n")
	// Untracked files.
	r.write(".aws/credentials", "[default]\naws_secret_access_key = x\n")
	r.write(".git-credentials", "https://user:token@example.com\n")
	r.write(".netrc", "machine example.com login u password p\n")
	r.write(".npmrc", "//registry.npmjs.org/:_authToken=abc\n")
	r.write(".pypirc", "[pypi]\npassword = x\n")
	r.write("deploy_key", pemKey("OPENSSH"))
	r.write("certs/pkcs8", pemKey(""))
	r.write("certs/encrypted", pemKey("ENCRYPTED"))
	r.write("certs/dsa", pemKey("DSA"))
	r.write("certs/crlf", strings.ReplaceAll(pemKey("RSA"), "\n", "\r\n"))
	r.write("pemcheck/pemcheck.go", keyMention)
	// Keys whose header is not at the start of a line, and more names.
	r.write("gcp-sa-key.json", `{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n"}`+"\n")
	r.write("fixture/key_test.go", "package fixture\n\nconst key = `-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIIrYSSNQFaA2Hwf1duRSxKtLYX5CB04fSeQ6tF1aY/PuoAoGCCqGSM49\n-----END EC PRIVATE KEY-----`\n")
	r.write("deploy.ppk", "PuTTY-User-Key-File-3: ssh-rsa\n")
	r.write("prod.env", "DB_PASSWORD=x\n")
	r.write("infra/prod.tfvars", "db_password = \"x\"\n")
	r.write(".docker/config.json", `{"auths": {"r": {"auth": "x"}}}`+"\n")
	r.write("kubeconfig", "apiVersion: v1\n")
	r.write(".kube/config", "apiVersion: v1\n")
	r.write("docs/keys.md", "# Keys\n\nStore the private key (the block that starts with -----BEGIN PRIVATE KEY-----) in the vault.\n")

	m := r.diff(DiffOptions{Untracked: true})
	want := map[string]string{
		".pgpass":             reasonSecret,
		"config/.envrc":       reasonSecret,
		".aws/credentials":    reasonSecret,
		".git-credentials":    reasonSecret,
		".netrc":              reasonSecret,
		".npmrc":              reasonSecret,
		".pypirc":             reasonSecret,
		"keys/old_key":        reasonKey,
		"k8s/secret.yaml":     reasonKey,
		"deploy_key":          reasonKey,
		"certs/pkcs8":         reasonKey,
		"certs/encrypted":     reasonKey,
		"certs/dsa":           reasonKey,
		"certs/crlf":          reasonKey,
		"gcp-sa-key.json":     reasonKey,
		"fixture/key_test.go": reasonKey,
		"deploy.ppk":          reasonSecret,
		"prod.env":            reasonSecret,
		"infra/prod.tfvars":   reasonSecret,
		".docker/config.json": reasonSecret,
		"kubeconfig":          reasonSecret,
		".kube/config":        reasonSecret,
	}
	if diff := cmp.Diff(want, skippedMap(m)); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"docs/keys.md", "keep.go", "pemcheck/pemcheck.go"}, m.Paths()); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	for _, s := range m.Skipped {
		if !strings.Contains(s.Reason, "credentials") || !strings.Contains(s.Reason, "never sent to a model") {
			t.Errorf("%s: reason %q does not say why it is not sent", s.Path, s.Reason)
		}
	}
	if text := m.Text(); strings.Contains(text, "MIIE") || strings.Contains(text, "TOKEN=") || strings.Contains(text, "_authToken") {
		t.Errorf("a secret reached the material:\n%s", text)
	}
}

// indent puts prefix in front of every line of s.
func indent(s, prefix string) string {
	lines := splitLines(s)
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestArtifactsCredentials(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "docs", "deploy_key"), pemKey("RSA"))
	writeFile(t, filepath.Join(dir, "docs", "keys.md"), "# Keys\n\nNever paste a private key here.\n")
	writeFile(t, filepath.Join(dir, "docs", "pemcheck.go"), keyMention)
	writeFile(t, filepath.Join(dir, "named.pem.txt"), pemKey("EC"))
	writeFile(t, filepath.Join(dir, ".env"), "TOKEN=x\n")
	t.Chdir(dir)

	m, err := Artifacts([]string{"docs", "named.pem.txt", ".env"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"docs/deploy_key": reasonKey,
		"named.pem.txt":   reasonKey,
		".env":            reasonSecret,
	}
	if diff := cmp.Diff(want, skippedMap(m)); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"docs/keys.md", "docs/pemcheck.go"}, m.Paths()); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}

	// A credentials file named alone gives material with nothing to send,
	// not an error: the caller reports what was skipped.
	m, err = Artifacts([]string{"named.pem.txt"})
	if err != nil || len(m.Files) != 0 || len(m.Skipped) != 1 {
		t.Errorf("only a key: %+v, %v", m, err)
	}
}
