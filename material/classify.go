package material

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// Skip reasons.
const (
	reasonBinary    = "binary file"
	reasonGenerated = "generated file"
	reasonLock      = "lock file"
	reasonVendored  = "vendored"
	reasonNotUTF8   = "not UTF-8 text"
	reasonSecret    = "looks like a credentials file; never sent to a model"
	reasonKey       = "looks like it holds credentials (a private key); never sent to a model"
	reasonKeyBase64 = "looks like it holds credentials (a base64-encoded private key); never sent to a model"
	reasonKubecfg   = "looks like a credentials file (a kubeconfig); never sent to a model"
	reasonTFState   = "looks like a credentials file (Terraform state, which holds secrets in plain text); never sent to a model"
	reasonToken     = "looks like it holds credentials (a registry auth token); never sent to a model"
)

// secretNames and secretSuffixes name files that usually hold credentials;
// secretPaths are such files known by their directory too, as path
// endings.
var (
	secretNames = map[string]bool{
		".env": true, ".envrc": true, "id_rsa": true, "id_dsa": true, "id_ecdsa": true, "id_ed25519": true,
		".netrc": true, "_netrc": true, ".npmrc": true, ".pypirc": true, ".pgpass": true, ".git-credentials": true,
		"credentials.json": true, ".htpasswd": true, "kubeconfig": true, ".vault-token": true,
	}
	secretPaths = []string{".aws/credentials", ".kube/config", ".docker/config.json"}
	// secretSuffixes: key stores and PuTTY keys, Terraform variable files
	// (which usually carry the secrets the code leaves out), Terraform
	// state and its backups (every resource's attributes, passwords
	// included, in plain text) and environment files such as prod.env.
	secretSuffixes = []string{".pem", ".key", ".p12", ".pfx", ".keystore", ".jks", ".ppk", ".tfvars", ".env", ".tfstate", ".tfstate.backup"}
	// envTemplates are .env variants meant to be committed.
	envTemplates = []string{"example", "sample", "template", "dist"}
)

// isSecretFile reports whether a file name suggests credentials.
func isSecretFile(base string) bool {
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
	return false
}

// isSecretName reports whether a slash-separated path names a file that
// usually holds credentials, by its name or by its name and directory.
func isSecretName(p string) bool {
	return isSecretFile(strings.ToLower(path.Base(p))) || isSecretPath(p)
}

// isSecretPath reports whether a slash-separated path ends with one of
// secretPaths, such as ".aws/credentials".
func isSecretPath(p string) bool {
	lp := "/" + strings.ToLower(p)
	for _, s := range secretPaths {
		if strings.HasSuffix(lp, "/"+s) {
			return true
		}
	}
	return false
}

// isPrivateKeyHeader reports whether a line of text opens a private key:
// after optional indentation (as in a YAML block scalar), it starts with
// "-----BEGIN ", followed by a label of capital letters, digits and spaces
// that ends in "PRIVATE KEY" (an OpenPGP "PRIVATE KEY BLOCK" too), and
// "-----". Only a header at the start of a line counts, so that code and
// prose that merely mention one (a quoted string constant such as
// "-----BEGIN RSA PRIVATE KEY-----" in a parser, a sentence about private
// keys) are still reviewed. A key pasted into a multi-line raw string has
// its header at the start of a line and does count: it is a real key, even
// in a test fixture, and such a file is not sent.
func isPrivateKeyHeader(line string) bool {
	line = strings.TrimLeft(line, " \t")
	rest, ok := strings.CutPrefix(line, "-----BEGIN ")
	if !ok {
		return false
	}
	label, _, ok := strings.Cut(rest, "-----")
	if !ok || !(strings.HasSuffix(label, "PRIVATE KEY") || strings.HasSuffix(label, "PRIVATE KEY BLOCK")) {
		return false
	}
	for _, c := range label {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != ' ' {
			return false
		}
	}
	return true
}

// hasPrivateKey reports whether a line of text starts a private key (see
// isPrivateKeyHeader), or a key header elsewhere is followed by key
// material (see embeddedKey). Lines are split at "\n"; a line may carry git's
// one-character diff marker in front when marked is true.
func hasPrivateKey(text []byte, marked bool) bool {
	// Nearly every file lacks the phrase, so it is searched for first.
	if !bytes.Contains(text, []byte("PRIVATE KEY")) {
		return false
	}
	whole := text
	for len(text) > 0 {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		if marked && len(line) > 0 {
			line = line[1:]
		}
		if bytes.Contains(line, []byte("PRIVATE KEY")) && isPrivateKeyHeader(string(line)) {
			return true
		}
	}
	return embeddedKey(whole, marked)
}

// embeddedKey reports whether a private key header anywhere in text, not
// only at the start of a line, is followed by key material: a JSON service
// account key holds "-----BEGIN PRIVATE KEY-----\nMIIE..." on one line, and
// a Go file can open a raw string with the header. A header followed by no
// key material (a parser's constant, a sentence) is not a key.
func embeddedKey(text []byte, marked bool) bool {
	const begin = "-----BEGIN "
	for i := bytes.Index(text, []byte(begin)); i >= 0; {
		rest := text[i+len(begin):]
		label, after, ok := bytes.Cut(rest, []byte("-----"))
		if ok && bytes.HasSuffix(label, []byte("PRIVATE KEY")) && isPrivateKeyHeader(begin+string(label)+"-----") {
			if keyMaterialFollows(after, marked) {
				return true
			}
		}
		j := bytes.Index(rest, []byte(begin))
		if j < 0 {
			break
		}
		i += len(begin) + j
	}
	return false
}

// keyMaterialFollows reports whether text, just after a key header, starts
// with at least 40 base64 characters once line breaks (real or escaped as
// \n), quotes, a diff marker and spaces are skipped.
func keyMaterialFollows(text []byte, marked bool) bool {
	for {
		switch {
		case bytes.HasPrefix(text, []byte(`\n`)), bytes.HasPrefix(text, []byte(`\r`)):
			text = text[2:]
			continue
		case len(text) > 0 && (text[0] == '\r' || text[0] == ' ' || text[0] == '\t' || text[0] == '"' || text[0] == '`' || text[0] == '\''):
			text = text[1:]
			continue
		case len(text) > 0 && text[0] == '\n':
			text = text[1:]
			if marked && len(text) > 0 {
				text = text[1:] // the next line's diff marker
			}
			continue
		}
		break
	}
	n := 0
	for _, c := range text {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			break
		}
		n++
	}
	return n >= 40
}

// credentialContent returns why a file that holds text is never sent,
// judged by what it holds, or "" when nothing in it looks like credentials:
// a private key (see hasPrivateKey), one encoded in base64 (as Kubernetes
// stores them), a kubeconfig, Terraform state, or a Yarn configuration
// holding a registry token. p is the file's path; with marked, every line
// of text carries git's one-character diff marker.
func credentialContent(p string, text []byte, marked bool) string {
	switch {
	case hasPrivateKey(text, marked):
		return reasonKey
	case hasEncodedKey(text):
		return reasonKeyBase64
	case isKubeconfig(text, marked):
		return reasonKubecfg
	case isTerraformState(text):
		return reasonTFState
	case isYarnrc(p) && hasYarnToken(text, marked):
		return reasonToken
	}
	return ""
}

// credentialHint reports whether the lines a diff shows of a file suggest
// that the whole file may be one credentialContent recognises, though
// those lines alone do not show it: a kubeconfig's users, Terraform
// state's resources, or any change to a Yarn configuration.
func credentialHint(p string, text []byte) bool {
	return isYarnrc(p) || bytes.Contains(text, []byte("users:")) ||
		bytes.Contains(text, []byte(`"sensitive_attributes"`)) || bytes.Contains(text, []byte(`"terraform_version"`))
}

// encodedKeyHeader is "-----BEGIN" in base64, as it starts the encoding of
// a PEM block.
const encodedKeyHeader = "LS0tLS1CRUdJTi"

// hasEncodedKey reports whether text holds a private key encoded in
// base64: a run of base64 that starts with encodedKeyHeader and decodes to
// a private key header.
func hasEncodedKey(text []byte) bool {
	for rest := text; ; {
		i := bytes.Index(rest, []byte(encodedKeyHeader))
		if i < 0 {
			return false
		}
		run := rest[i:]
		n := 0
		for n < len(run) && n < 80 && isBase64(run[n]) {
			n++
		}
		buf := make([]byte, base64.StdEncoding.DecodedLen(n))
		k, _ := base64.StdEncoding.Decode(buf, run[:n&^3])
		header, _, _ := bytes.Cut(buf[:k], []byte("\n"))
		if isPrivateKeyHeader(string(header)) {
			return true
		}
		rest = rest[i+len(encodedKeyHeader):]
	}
}

func isBase64(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '='
}

// isKubeconfig reports whether text is a kubeconfig, whatever its name: a
// top-level "kind: Config" and a top-level "users:" key.
func isKubeconfig(text []byte, marked bool) bool {
	kind, users := false, false
	for line := range bytes.Lines(text) {
		if marked && len(line) > 0 {
			line = line[1:]
		}
		line = bytes.TrimRight(line, " \t\r\n")
		switch {
		case bytes.HasPrefix(line, []byte("kind:")):
			v := bytes.Trim(bytes.TrimSpace(line[len("kind:"):]), `"'`)
			kind = kind || string(v) == "Config"
		case bytes.HasPrefix(line, []byte("users:")):
			users = true
		}
	}
	return kind && users
}

// isTerraformState reports whether text is Terraform state: JSON holding
// the version of Terraform that wrote it and the state's lineage.
func isTerraformState(text []byte) bool {
	return bytes.Contains(text, []byte(`"terraform_version"`)) && bytes.Contains(text, []byte(`"lineage"`))
}

// isYarnrc reports whether p names a Yarn configuration file.
func isYarnrc(p string) bool {
	switch strings.ToLower(path.Base(p)) {
	case ".yarnrc.yml", ".yarnrc.yaml", ".yarnrc":
		return true
	}
	return false
}

// hasYarnToken reports whether a Yarn configuration sets a registry
// credential (npmAuthToken, npmAuthIdent, or the _authToken of Yarn 1) to
// a value.
func hasYarnToken(text []byte, marked bool) bool {
	for line := range bytes.Lines(text) {
		if marked && len(line) > 0 {
			line = line[1:]
		}
		line = bytes.TrimSpace(line)
		for _, key := range []string{"npmAuthToken", "npmAuthIdent", "_authToken"} {
			i := bytes.Index(line, []byte(key))
			if i < 0 {
				continue
			}
			v := bytes.TrimLeft(line[i+len(key):], `"' `)
			v = bytes.TrimLeft(v, ":=")
			v = bytes.Trim(bytes.TrimSpace(v), `"'`)
			if len(v) > 0 && !bytes.HasPrefix(v, []byte("${")) {
				return true
			}
		}
	}
	return false
}

// languages maps lower-cased file extensions to language names.
var languages = map[string]string{
	".go": "go", ".py": "python", ".pyi": "python",
	".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
	".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
	".java": "java", ".kt": "kotlin", ".kts": "kotlin", ".scala": "scala", ".groovy": "groovy", ".gradle": "groovy",
	".rs": "rust", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp",
	".cs": "csharp", ".fs": "fsharp", ".swift": "swift", ".m": "objc", ".mm": "objc",
	".rb": "ruby", ".php": "php", ".pl": "perl", ".pm": "perl", ".lua": "lua", ".r": "r",
	".dart": "dart", ".ex": "elixir", ".exs": "elixir", ".erl": "erlang", ".hs": "haskell",
	".clj": "clojure", ".ml": "ocaml", ".zig": "zig", ".nim": "nim", ".jl": "julia",
	".sh": "shell", ".bash": "shell", ".zsh": "shell", ".fish": "shell", ".ps1": "powershell",
	".sql": "sql", ".proto": "protobuf", ".graphql": "graphql", ".gql": "graphql",
	".html": "html", ".htm": "html", ".css": "css", ".scss": "scss", ".sass": "scss", ".less": "less",
	".vue": "vue", ".svelte": "svelte", ".xml": "xml", ".svg": "xml",
	".md": "markdown", ".markdown": "markdown", ".mdx": "markdown", ".rst": "restructuredtext",
	".adoc": "asciidoc", ".txt": "text", ".tex": "tex",
	".yaml": "yaml", ".yml": "yaml", ".json": "json", ".jsonc": "json", ".toml": "toml",
	".ini": "ini", ".cfg": "ini", ".conf": "ini", ".properties": "ini", ".env": "dotenv",
	".tf": "terraform", ".tfvars": "terraform", ".hcl": "hcl", ".nix": "nix", ".cue": "cue",
	".mk": "makefile", ".cmake": "cmake", ".bzl": "starlark", ".bazel": "starlark",
}

// languageNames maps lower-cased base names without a telling extension.
var languageNames = map[string]string{
	"dockerfile": "dockerfile", "containerfile": "dockerfile", "makefile": "makefile",
	"gnumakefile": "makefile", "go.mod": "go-mod", "go.work": "go-mod", "cmakelists.txt": "cmake",
	"jenkinsfile": "groovy", "gemfile": "ruby",
	"rakefile": "ruby", "vagrantfile": "ruby", ".gitignore": "gitignore", ".dockerignore": "gitignore",
}

// Language returns the language of a file from its name, e.g. "go",
// "typescript", "markdown", "yaml", or "" if unknown.
func Language(p string) string {
	base := strings.ToLower(path.Base(p))
	if l, ok := languageNames[base]; ok {
		return l
	}
	if strings.HasPrefix(base, "dockerfile.") || strings.HasSuffix(base, ".dockerfile") {
		return "dockerfile"
	}
	return languages[path.Ext(base)]
}

// lockFiles are dependency lock files, skipped as "lock file".
var lockFiles = map[string]bool{
	"go.sum": true, "package-lock.json": true, "npm-shrinkwrap.json": true, "yarn.lock": true,
	"pnpm-lock.yaml": true, "cargo.lock": true, "poetry.lock": true, "gemfile.lock": true,
	"composer.lock": true, "pipfile.lock": true, "uv.lock": true, "bun.lockb": true,
	"packages.lock.json": true, "mix.lock": true, "pubspec.lock": true, "flake.lock": true,
}

// generatedSuffixes are file name endings of generated files.
var generatedSuffixes = []string{
	".pb.go", "_gen.go", ".gen.go", "_generated.go", ".pb.gw.go", "_string.go.generated",
	".min.js", ".min.css", ".map", "_pb2.py", "_pb2_grpc.py", ".pb.cc", ".pb.h", ".g.dart",
}

// vendorDirs are directories of third-party code, skipped as "vendored".
var vendorDirs = []string{"vendor", "node_modules", "third_party", ".yarn"}

// pathSkipReason returns why a file is skipped from its path alone, or "".
func pathSkipReason(p string) string {
	for _, seg := range strings.Split(path.Dir(p), "/") {
		for _, v := range vendorDirs {
			if seg == v {
				return reasonVendored
			}
		}
	}
	base := strings.ToLower(path.Base(p))
	if isSecretName(p) {
		return reasonSecret
	}
	if lockFiles[base] {
		return reasonLock
	}
	for _, s := range generatedSuffixes {
		if strings.HasSuffix(base, s) {
			return reasonGenerated
		}
	}
	return ""
}

// isLockFile reports whether p names a dependency lock file.
func isLockFile(p string) bool { return lockFiles[strings.ToLower(path.Base(p))] }

// generatedHeader reports whether the first five lines of a file mark it as
// generated: Go's "Code generated ... DO NOT EDIT." convention, or
// "@generated" as used by many other generators.
func generatedHeader(head []string) bool {
	if len(head) > 5 {
		head = head[:5]
	}
	for _, l := range head {
		if strings.Contains(l, "@generated") {
			return true
		}
		if strings.Contains(l, "Code generated") && strings.Contains(l, "DO NOT EDIT") {
			return true
		}
	}
	return false
}

// headLines returns up to n lines from the start of b.
func headLines(b []byte, n int) []string {
	var out []string
	for len(out) < n && len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i]))
		b = b[i+1:]
	}
	return out
}

// isBinary reports whether b looks binary: a NUL byte in the first 8 KiB.
func isBinary(b []byte) bool {
	if len(b) > 8<<10 {
		b = b[:8<<10]
	}
	return bytes.IndexByte(b, 0) >= 0
}

// normalize strips a UTF-8 byte order mark and turns CRLF line endings
// into LF.
func normalize(b []byte) []byte {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if bytes.IndexByte(b, '\r') >= 0 {
		b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	}
	return b
}

// checkText classifies raw file content: "" if it is reviewable text,
// otherwise the skip reason.
func checkText(b []byte) string {
	if isBinary(b) {
		return reasonBinary
	}
	if !utf8.Valid(b) {
		return reasonNotUTF8
	}
	return ""
}

// sizeLimit describes a byte limit for humans: "1 MiB", "512 KiB", "100 bytes".
func sizeLimit(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// isTestPath reports whether p is a test file: "_test." or ".spec." or
// ".test." in the name, a "test_*.py" file, or a test/, tests/ or
// __tests__/ directory.
func isTestPath(p string) bool {
	lp := strings.ToLower(p)
	base := path.Base(lp)
	if strings.Contains(base, "_test.") || strings.Contains(base, ".spec.") || strings.Contains(base, ".test.") {
		return true
	}
	if strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py") {
		return true
	}
	for _, seg := range strings.Split(path.Dir(lp), "/") {
		if seg == "test" || seg == "tests" || seg == "__tests__" || seg == "testdata" {
			return true
		}
	}
	return false
}

// docLanguages are prose formats.
var docLanguages = map[string]bool{
	"markdown": true, "restructuredtext": true, "asciidoc": true, "text": true, "tex": true,
}

// isDocPath reports whether p is documentation (Markdown, reST, AsciiDoc,
// plain text, or an extensionless README/LICENSE-style file). Python
// dependency lists (requirements*.txt, constraints*.txt) are text files
// but not documentation.
func isDocPath(p string) bool {
	if isRequirementsFile(p) {
		return false
	}
	if docLanguages[Language(p)] {
		return true
	}
	base := strings.ToUpper(path.Base(p))
	for _, n := range []string{"README", "LICENSE", "LICENCE", "CHANGELOG", "CONTRIBUTING", "AUTHORS", "NOTICE", "COPYING"} {
		if base == n {
			return true
		}
	}
	return false
}

// configLanguages are configuration formats.
var configLanguages = map[string]bool{
	"yaml": true, "json": true, "toml": true, "ini": true, "dotenv": true,
	"terraform": true, "hcl": true, "dockerfile": true, "nix": true, "cue": true,
}

// isCodePath reports whether p is source code: a known language that is not
// documentation or configuration.
func isCodePath(p string) bool {
	l := Language(p)
	return l != "" && !docLanguages[l] && !configLanguages[l] && l != "gitignore" && l != "go-mod"
}

// isRequirementsFile reports whether p is a pip requirements or
// constraints file (requirements.txt, requirements-dev.txt,
// constraints.txt, ...).
func isRequirementsFile(p string) bool {
	base := strings.ToLower(path.Base(p))
	return strings.HasSuffix(base, ".txt") && (strings.HasPrefix(base, "requirements") || strings.HasPrefix(base, "constraints"))
}

// IsSecretName reports whether a slash path names a file that usually
// holds credentials, by its name or by its name and directory: a file the
// material leaves out, which any other look into a project (package
// tools) must refuse too.
func IsSecretName(p string) bool { return isSecretName(p) }
