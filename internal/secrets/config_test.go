package secrets

import (
	"encoding/base64"
	"regexp/syntax"
	"strings"
	"testing"
)

// settingsXML is a Maven settings.xml with the kinds of server and proxy
// entries it holds in practice.
var settingsXML = `<?xml version="1.0" encoding="UTF-8"?>
<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0"
          xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <localRepository>${user.home}/.m2/repository</localRepository>
  <servers>
    <server>
      <id>nexus-releases</id>
      <username>deployer</username>
      <password>Tr0ub4dor&amp;3</password>
    </server>
    <server>
      <id>nexus-snapshots</id>
      <username>ci</username>
      <password>{COQLCE6DU6GtcS5P=}</password>
    </server>
    <server>
      <id>from-env</id>
      <username>${env.CI_USER}</username>
      <password>${env.CI_PASSWORD}</password>
    </server>
    <server>
      <id>ssh-host</id>
      <username>git</username>
      <privateKey>${user.home}/.ssh/id_ed25519</privateKey>
      <passphrase>correct horse battery staple</passphrase>
      <filePermissions>664</filePermissions>
    </server>
  </servers>
  <proxies>
    <proxy>
      <id>corp</id>
      <active>true</active>
      <protocol>http</protocol>
      <host>proxy.example.com</host>
      <port>8080</port>
      <username>alice</username>
      <password>
        hunter2
      </password>
      <nonProxyHosts>localhost|*.example.com</nonProxyHosts>
    </proxy>
  </proxies>
</settings>
`

var (
	npmToken   = fake("", lower+digits, 8) + "-" + fake("n", lower+digits, 4) + "-4" + fake("p", lower+digits, 3) + "-" + fake("m", lower+digits, 4) + "-" + fake("t", lower+digits, 12)
	dockerAuth = base64.StdEncoding.EncodeToString([]byte("bob:hunter2"))
	curlBearer = fake("eyJ", alnum, 40)
)

func TestFindConfigFilePasswords(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		secrets    []string // the values masked, in order
		kind       string   // the kind of the first
	}{
		{"maven settings.xml", settingsXML, []string{"Tr0ub4dor&amp;3", "{COQLCE6DU6GtcS5P=}", "correct horse battery staple", "hunter2"}, "xml-password"},
		{"xml attribute and namespace", `<cfg:password encrypted="false">s3cret!</cfg:password>`, []string{"s3cret!"}, "xml-password"},
		{"xml dotted name", "<db.password>pw</db.password>\n<jdbc.user>sa</jdbc.user>", []string{"pw"}, "xml-password"},
		{"xml keystore password", "<keyPassword>changeit</keyPassword>", []string{"changeit"}, "xml-password"},
		{"xml CDATA", "<password><![CDATA[ p<a>ss ]]></password>", []string{"p<a>ss"}, "xml-password"},
		{"xml client secret", "<clientSecret>" + fake("cs", alnum, 30) + "</clientSecret>", []string{fake("cs", alnum, 30)}, "xml-secret"},
		{"xml api token", "<apiToken>\n  " + fake("at", alnum, 24) + "\n</apiToken>", []string{fake("at", alnum, 24)}, "xml-secret"},
		{"pypirc", "[distutils]\nindex-servers =\n    pypi\n    internal\n\n[pypi]\nusername = __token__\npassword = hunter2hunter2\n\n[internal]\nrepository: https://pypi.example.com\nusername: bob\npassword: p4ss w0rd \n",
			[]string{"hunter2hunter2", "p4ss w0rd"}, "ini-password"},
		{"ini quoted", "[database]\nhost = db\n; the password\npassword = \"s3cret\"\n", []string{"s3cret"}, "ini-password"},
		{"netrc one line", "machine example.com login bob password s3cretpw\n", []string{"s3cretpw"}, "netrc-password"},
		{"netrc lines", "machine api.heroku.com\n  login me@example.com\n  password hunter2\nmachine git.heroku.com\n  password other-pw\n  login me@example.com\n",
			[]string{"hunter2", "other-pw"}, "netrc-password"},
		{"npmrc token", "registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=" + npmToken + "\n", []string{npmToken}, "npmrc-auth"},
		{"npmrc auth", "//npm.example.com/:_auth=\"" + dockerAuth + "\"\nalways-auth=true\n", []string{dockerAuth}, "npmrc-auth"},
		{"npmrc password", "//npm.example.com/:username=bob\n//npm.example.com/:_password=aHVudGVyMg==\n", []string{"aHVudGVyMg=="}, "npmrc-auth"},
		{"docker config", `{"auths": {"https://index.docker.io/v1/": {"auth": "` + dockerAuth + `"}, "ghcr.io": {"identitytoken": "tok-` + fake("i", alnum, 20) + `"}}}`,
			[]string{dockerAuth, "tok-" + fake("i", alnum, 20)}, "docker-config-auth"},
		{"git-credentials", "https://bob:hunter2@github.com\nhttps://x-access-token:s3cr3t-t0k3n@gitlab.example.com\n", []string{"hunter2", "s3cr3t-t0k3n"}, "url-credentials"},
		{"database url", `DATABASE_URL="postgres://app:app-pw@db.internal:5432/app"`, []string{"app-pw"}, "url-credentials"},
		{"curl header on a later line", "curl https://api.example.com/v1/items \\\n  -X POST \\\n  -d '{}' \\\n  -H \"Authorization: Bearer " + curlBearer + "\"\n",
			[]string{curlBearer}, "curl-auth-header"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spans := Find(tt.text, "")
			var got []string
			for _, s := range spans {
				got = append(got, tt.text[s.Start:s.End])
			}
			if strings.Join(got, "\x00") != strings.Join(tt.secrets, "\x00") {
				t.Fatalf("Find found %q, want %q", got, tt.secrets)
			}
			if spans[0].Kind != tt.kind {
				t.Errorf("the first is a %s, want %s", spans[0].Kind, tt.kind)
			}
			masked := Mask(tt.text)
			for _, s := range tt.secrets {
				rest := s // what a mask must not show: all of a short secret
				if len(s) >= prefixMin {
					rest = s[4:]
				}
				if strings.Contains(masked, rest) {
					t.Errorf("the masked text still holds %q:\n%s", s, masked)
				}
			}
			if strings.Count(masked, "\n") != strings.Count(tt.text, "\n") {
				t.Errorf("the masked text has other lines:\n%s", masked)
			}
		})
	}
}

func TestMaskSettingsXML(t *testing.T) {
	got := Mask(settingsXML)
	for _, want := range []string{
		"<password>" + Marker + "xml-password]</password>", // only the value; the tags stay
		"<password>{COQ" + Marker + "xml-password]</password>",
		"<password>${env.CI_PASSWORD}</password>",
		"<privateKey>${user.home}/.ssh/id_ed25519</privateKey>",
		"<passphrase>corr" + Marker + "xml-password]</passphrase>",
		"<password>\n        " + Marker + "xml-password]\n      </password>",
		"<username>deployer</username>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the masked settings.xml has no %q:\n%s", want, got)
		}
	}
}

func TestConfigLookalikesAreNoSecrets(t *testing.T) {
	for _, text := range []string{
		"<password>${env.NEXUS_PASSWORD}</password>",
		"<password>${nexus.password}</password>",
		"<password>$PASSWORD</password>",
		"<password>{{ .Values.password }}</password>",
		"<password>%DB_PASSWORD%</password>",
		"<password>@db.password@</password>",
		"<password>********</password>",
		"<password></password>\n<password/>",
		"<privateKey>/home/me/.ssh/id_rsa</privateKey>",
		`<input type="password" name="password">`,
		`<label for="password">Password</label>`,
		"<token>ENOENT</token>",
		"<nextPageToken>" + fake("np", alnum, 24) + "</nextPageToken>",
		"password = getPassword()",
		"[section]\npassword = ${DB_PASSWORD}\n",
		"//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
		`{"auth": "required"}`,
		"https://user:password@example.com/path",
		"postgres://app:${DB_PASS}@localhost/db",
		"postgresql://{user}:{password}@{host}/{db}",
		"git@github.com:org/repo.git and ssh://git@host:22/repo",
		"the default password is admin",
	} {
		if spans := Find(text, ""); len(spans) != 0 {
			var got []string
			for _, s := range spans {
				got = append(got, s.Kind+" "+text[s.Start:s.End])
			}
			t.Errorf("Find(%q) = %q, want nothing", text, got)
		}
	}
}

func TestNewlinesOfRepeatedLines(t *testing.T) {
	for _, tt := range []struct {
		expr  string
		n     int
		loose bool
	}{
		{`key\s{0,3}=\s{0,3}value`, 6, true},
		{`key(?:[ \t]*\n){0,2}value`, 2, true},
		{`key(?:[^\n]*\n){0,2}value`, 2, false}, // the lines between hold letters
		{`machine(?:\s+(?:login|account)\s+\S+){0,2}\s+password`, -1, false},
		{`a(?:b\n)?c`, 1, true},
	} {
		t.Run(tt.expr, func(t *testing.T) {
			re, err := syntax.Parse(tt.expr, syntax.Perl)
			if err != nil {
				t.Fatal(err)
			}
			n, loose := newlines(re)
			if n != tt.n || n >= 0 && loose != tt.loose {
				t.Errorf("newlines = %d, %v; want %d, %v", n, loose, tt.n, tt.loose)
			}
		})
	}
}
