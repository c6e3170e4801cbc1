package material

import (
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// kubeconfig is a kubeconfig whose user holds a token; the cluster section
// is long enough that a change to the token does not show "kind: Config".
func kubeconfig(token string) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nclusters:\n")
	for i := range 30 {
		b.WriteString("- cluster:\n    server: https://10.0.0." + string(rune('0'+i%10)) + ":6443\n  name: c" + string(rune('a'+i%26)) + "\n")
	}
	b.WriteString("current-context: ca\nkind: Config\npreferences: {}\n")
	for i := range 20 {
		b.WriteString("# note " + string(rune('a'+i)) + "\n")
	}
	b.WriteString("users:\n- name: admin\n  user:\n    token: " + token + "\n")
	return b.String()
}

// tfState is Terraform state holding a database password.
const tfState = `{
  "version": 4,
  "terraform_version": "1.9.0",
  "serial": 3,
  "lineage": "4b8e1e4e-0000-0000-0000-000000000000",
  "resources": [{"type": "aws_db_instance", "instances": [{"attributes": {"password": "hunter2hunter2"}, "sensitive_attributes": []}]}]
}
`

// encodedPEM is a made-up private key as Kubernetes stores it in a
// secret: base64 of the whole PEM block.
var encodedPEM = base64.StdEncoding.EncodeToString([]byte(pemKey("RSA")))

// encodedCert is a certificate stored the same way: not a secret.
var encodedCert = base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUnotacertificatejustfortesting0123\n-----END CERTIFICATE-----\n"))

func TestDiffCredentialsByContentAndOldName(t *testing.T) {
	r := newRepo(t)
	envFile := "DB_HOST=db\nDB_PORT=5432\nDB_NAME=app\nDB_USER=app\nDB_PASSWORD=old\nLOG_LEVEL=info\n"
	r.write(".env", envFile)
	r.write("ops/cluster.yaml", kubeconfig("old-token-value"))
	r.write("keep.go", "package keep\n")
	r.commit("base")

	r.mv(".env", "config/settings.txt") // a credentials file under an innocent name
	r.write("config/settings.txt", strings.Replace(envFile, "=old", "=new", 1))
	r.write("ops/cluster.yaml", kubeconfig("new-token-value")) // only the users section shows
	r.write("deploy/admin.yaml", kubeconfig("t"))
	r.write("terraform.tfstate", tfState)
	r.write("envs/prod.tfstate", tfState)
	r.write("terraform.tfstate.backup", tfState)
	r.write("infra/state.json", tfState)
	r.write(".vault-token", "hvs.x\n")
	r.write(".yarnrc.yml", "npmRegistryServer: https://npm.example.com\nnpmAuthToken: \"abcdef012345\"\n")
	r.write("tools/.yarnrc.yml", "npmAuthToken: \"${NPM_TOKEN}\"\n") // a reference, not a token
	r.write("k8s/tls.yaml", "kind: Secret\ndata:\n  tls.key: "+encodedPEM+"\n")
	r.write("k8s/ca.yaml", "kind: ConfigMap\ndata:\n  ca.crt: "+encodedCert+"\n")

	want := map[string]string{
		"config/settings.txt":      reasonSecret,
		"ops/cluster.yaml":         reasonKubecfg,
		"deploy/admin.yaml":        reasonKubecfg,
		"terraform.tfstate":        reasonSecret,
		"envs/prod.tfstate":        reasonSecret,
		"terraform.tfstate.backup": reasonSecret,
		"infra/state.json":         reasonTFState,
		".vault-token":             reasonSecret,
		".yarnrc.yml":              reasonToken,
		"k8s/tls.yaml":             reasonKeyBase64,
	}
	for _, tt := range []struct {
		name string
		o    DiffOptions
	}{
		{"working tree", DiffOptions{Untracked: true}},
		{"commit range", DiffOptions{Range: "HEAD~1..HEAD"}}, // files read from git's objects
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.o.Range != "" {
				r.commit("change")
				defer r.git("reset", "-q", "--soft", "HEAD~1")
			}
			m := r.diff(tt.o)
			if diff := cmp.Diff(want, skippedMap(m)); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"k8s/ca.yaml", "tools/.yarnrc.yml"}, m.Paths()); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			for _, s := range m.Skipped {
				if !strings.Contains(s.Reason, "credentials") || !strings.Contains(s.Reason, "never sent to a model") {
					t.Errorf("%s: reason %q does not say why it is not sent", s.Path, s.Reason)
				}
			}
			if text := m.Text(); strings.Contains(text, "token-value") || strings.Contains(text, "hunter2") || strings.Contains(text, encodedPEM[:20]) {
				t.Errorf("a credential reached the material:\n%s", text)
			}
		})
	}
}

func TestArtifactsAndFreeformCredentialsByContent(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "docs", "cluster.yml"), kubeconfig("t0ken"))
	writeFile(t, filepath.Join(dir, "docs", "tls.yaml"), "data:\n  tls.key: "+encodedPEM+"\n")
	writeFile(t, filepath.Join(dir, "docs", "guide.md"), "# Guide\n\nRun kubectl with your own kubeconfig.\n")
	t.Chdir(dir)
	m, err := Artifacts([]string{"docs"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"docs/cluster.yml": reasonKubecfg, "docs/tls.yaml": reasonKeyBase64}
	if diff := cmp.Diff(want, skippedMap(m)); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}

	for _, tt := range []struct{ name, text, reason string }{
		{"cluster.yaml", kubeconfig("t0ken"), reasonKubecfg},
		{"stdin", tfState, reasonTFState},
		{"notes.txt", "key: " + encodedPEM + "\n", reasonKeyBase64},
		{".env", "A=1\n", reasonSecret},
	} {
		m, err := Freeform(tt.name, strings.NewReader(tt.text))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if len(m.Files) != 0 || len(m.Skipped) != 1 || m.Skipped[0].Reason != tt.reason {
			t.Errorf("%s: files %v, skipped %+v; want it skipped as %q", tt.name, m.Paths(), m.Skipped, tt.reason)
		}
	}
}

func TestEncodedKey(t *testing.T) {
	for _, tt := range []struct {
		text string
		want bool
	}{
		{encodedPEM, true},
		{"tls.key: \"" + encodedPEM + "\"", true},
		{base64.StdEncoding.EncodeToString([]byte(pemKey("OPENSSH"))), true},
		{base64.StdEncoding.EncodeToString([]byte(pemKey("ENCRYPTED"))), true},
		{encodedCert, false},
		{base64.StdEncoding.EncodeToString([]byte("-----BEGIN PUBLIC KEY-----\nMIIB\n")), false},
		{"LS0tLS1CRUdJTi is how a PEM block starts in base64", false},
		{"", false},
	} {
		if got := hasEncodedKey([]byte(tt.text)); got != tt.want {
			t.Errorf("hasEncodedKey(%.40q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}
