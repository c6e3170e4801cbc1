package secrets

import (
	"bytes"
	"encoding/base64"
	"math"
	"regexp"
	"strings"
	"sync"

	"github.com/sotlabs/sot/internal/keywords"
	"github.com/sotlabs/sot/internal/lazyre"
)

// ruleFile is the format of gitleaks.json, written by gen/; sot loads
// the same rules from rules_gen.go (gitleaksRules), generated from it.
type ruleFile struct {
	Source     string       `json:"source"`
	Allowlists []*allowlist `json:"allowlists"`
	Rules      []*rule      `json:"rules"`
}

// rule is one detection rule, with gitleaks' meaning: Regex finds
// candidates where one of Keywords occurs (case-insensitively); the secret
// is capture group SecretGroup, or the first non-empty group, or the whole
// match; it must have more than Entropy bits of Shannon entropy per
// character when Entropy is set; and no allowlist may allow it.
type rule struct {
	ID          string       `json:"id"`
	Regex       string       `json:"regex"`
	Path        string       `json:"path"`
	SecretGroup int          `json:"secret_group"`
	Entropy     float64      `json:"entropy"`
	Keywords    []string     `json:"keywords"`
	Allowlists  []*allowlist `json:"allowlists"`

	// where, for a rule of sot's own, reports whether a match starting at
	// offset start of text is in a place the rule applies to.
	where func(text string, start int) bool

	once sync.Once
	re   *regexp.Regexp
	path *regexp.Regexp
	// How the rule is searched for; see plan.
	atStart   *regexp.Regexp // the rule anchored at the start of the text
	afterOne  *regexp.Regexp // the rule anchored after one character
	leadClass *[256]bool     // the class of a lead run before the keyword
	lead      int
	reach     int
	loose     bool
	ok        bool
}

// allowlist drops findings that match its regular expressions (applied to
// the secret, the whole match or the whole line, as Target says) or whose
// secret contains one of its stop words. With And, every kind of check it
// has must hold. Checks by path or commit never hold here: a file's name
// does not make a secret safe to send.
type allowlist struct {
	And       bool     `json:"and"`
	Target    string   `json:"target"`
	Regexes   []string `json:"regexes"`
	StopWords []string `json:"stopwords"`
	Paths     []string `json:"paths"`
	Commits   bool     `json:"commits"`

	re *regexp.Regexp // Regexes joined
}

// sotRules are sot's own rules:
//   - the keys of the providers sot talks to in every shape they have had,
//     where gitleaks' rules know only the newest exact format (a
//     93-character sk-ant-api03 key, an OpenAI key with its T3BlbkFJ
//     marker);
//   - the passwords of configuration files whose format says what the
//     value is, so that a password is found however little entropy it
//     has, where gitleaks' generic rule wants a random-looking value after
//     an "=" or ":" and misses the rest: an XML element such as Maven's
//     settings.xml <password> and <passphrase>, a password in an INI
//     section (.pypirc), a .netrc entry, the auth lines of an .npmrc, the
//     auths of a Docker config.json and the password of a URL
//     (.git-credentials, a database URL).
//
// Only the value is masked, never the key or the tags around it. A value
// that is a reference to a password kept elsewhere (${env.PASS}, $PASS,
// {{ .pass }}, %PASS%, <your-password>, ****) is no secret and is left
// alone; Maven's encrypted passwords, {...}, are masked.
var sotRules = []*rule{
	{ID: "anthropic-api-key", Regex: `\bsk-ant-[A-Za-z0-9_-]{20,}`, Keywords: []string{"sk-ant-"}, Entropy: 3},
	{ID: "openai-api-key", Regex: `\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`, Keywords: []string{"sk-"}, Entropy: 3},

	// <password>, <passphrase>, <keyPassword>, <db.password>, <ns:passwd>:
	// any value, in a CDATA section or not.
	{ID: "xml-password", Regex: `(?i)<(?:[\w.-]+:)?[\w.-]*(?:password|passwd|passphrase)(?:[ \t\r\n][^<>]*)?>` + xmlValue +
		`</(?:[\w.-]+:)?[\w.-]*(?:password|passwd|passphrase)[ \t\r\n]*>`,
		Keywords: []string{"password", "passwd", "passphrase"}},
	// <clientSecret>, <apiToken>, <apiKey>, <secretKey>, <token>: a value
	// with some entropy, as the name alone says less; the tokens that page
	// through results are not secrets.
	{ID: "xml-secret", Regex: `(?i)<(?:[\w.-]+:)?[\w.-]*(?:secret|token|api[_.-]?key|secret[_.-]?key)(?:[ \t\r\n][^<>]*)?>` + xmlValue +
		`</(?:[\w.-]+:)?[\w.-]*(?:secret|token|key)[ \t\r\n]*>`,
		Keywords: []string{"secret", "token", "apikey", "api_key", "api-key", "api.key"}, Entropy: 3,
		Allowlists: []*allowlist{{Target: "match", Regexes: []string{`(?i)^<(?:[\w.-]+:)?[\w.-]*(?:page|continuation|resumption|sync|next|csrf|cancellation)[_.-]?token\b`}}}},
	// A password in a section of an INI file (.pypirc, setup.cfg, ...):
	// a line of the section, which the header of an INI section must
	// precede (see inSection).
	{ID: "ini-password", Regex: `(?im)^[ \t]*[\w.-]*(?:password|passwd|passphrase)[ \t]*[=:][ \t]*["']?([^\s"'](?:[^\r\n"']*[^\s"'])?)["']?[ \t]*$`,
		Keywords: []string{"password", "passwd", "passphrase"}, where: inSection},
	// machine HOST [login USER] [account ACCOUNT] password PASS, on one
	// line or many, in any order after the host.
	{ID: "netrc-password", Regex: `\bmachine` + netrcSep + `\S+(?:` + netrcSep + `(?:login|account|port)` + netrcSep + `\S+){0,3}` +
		netrcSep + `password` + netrcSep + `(\S+)`,
		Keywords: []string{"machine"}},
	// _authToken=, _auth= and _password= in an .npmrc, alone on a line or
	// after a registry's //host/path/:.
	{ID: "npmrc-auth", Regex: `(?im)(?:^[ \t]*|:)_(?:authToken|auth|password)=["']?([^\s"']+)`,
		Keywords: []string{"_auth", "_password"}},
	// The auths of a Docker config.json: base64 of user:password, or an
	// identity token.
	{ID: "docker-config-auth", Regex: `"auth"[ \t]*:[ \t]*"([A-Za-z0-9+/]{8,}={0,2})"`, Keywords: []string{`"auth"`}},
	{ID: "docker-config-token", Regex: `(?i)"(?:identitytoken|registrytoken)"[ \t]*:[ \t]*"([^"\s]{8,})"`,
		Keywords: []string{"identitytoken", "registrytoken"}},
	// scheme://user:password@host, as in .git-credentials or a database
	// URL.
	{ID: "url-credentials", Regex: `(?i)\b[a-z][a-z0-9+.-]{0,20}://[^\s/?#@:'"<>]+:([^\s/?#@'"<>]+)@[a-z0-9\[]`,
		Keywords: []string{"://"}},
}

// netrcSep separates the tokens of a .netrc entry: blanks, or a line
// break.
const netrcSep = `(?:[ \t]+|[ \t]*\r?\n[ \t]*)`

// inSection reports whether the line at offset start of text lies in a
// section of an INI file: going up at most 40 lines, the first line that
// starts with "[" is a section header, "[name]".
func inSection(text string, start int) bool {
	end := strings.LastIndexByte(text[:start], '\n')
	for range 40 {
		if end < 0 {
			return false
		}
		begin := strings.LastIndexByte(text[:end], '\n') + 1
		line := strings.TrimSpace(text[begin:end])
		if strings.HasPrefix(line, "[") {
			return sectionHeader.Re().MatchString(line)
		}
		end = begin - 1
	}
	return false
}

// sectionHeader is the header of a section of an INI file.
var sectionHeader = lazyre.New(`^\[[\w .:/-]+\]$`)

// xmlValue is the value of an XML element: in a CDATA section, or text
// without markup, with the white space around it left out.
const xmlValue = `[ \t\r\n]*(?:<!\[CDATA\[[ \t\r\n]*([^\]]*[^\]\s])[ \t\r\n]*\]\]>|([^<>\s](?:[^<>]*[^<>\s])?))[ \t\r\n]*`

// validators add checks of sot's own to some rules, to drop what gitleaks
// reports but a review must still see.
var validators = map[string]func(secret string) bool{
	// gitleaks' rule runs from a private key's header to the next
	// "KEY-----", however far: in code that only names headers (a parser,
	// its tests) it would mask whole functions. A key holds key material.
	"private-key": hasKeyMaterial,

	"xml-password":        notReference,
	"xml-secret":          notReference,
	"ini-password":        notReference,
	"netrc-password":      notReference,
	"npmrc-auth":          notReference,
	"docker-config-auth":  basicAuth,
	"docker-config-token": notReference,
	"url-credentials":     func(s string) bool { return notReference(s) && !urlPlaceholder.Re().MatchString(s) },
}

// reference matches a value that stands for a secret kept elsewhere: a
// Maven, shell or Make variable (${env.PASS}, ${PASS}, $PASS, $(PASS)), a
// template ({{ .Pass }}, #{pass}, %(pass)s), a Windows or Ant variable
// (%PASS%, @pass@), a placeholder in angle brackets, or a run of *, x or
// dots. Maven's encrypted passwords, {...}, are not references.
var reference = lazyre.New(`^(?:\$\{[^{}]*\}|\$\([^()]*\)|\$[A-Za-z_][A-Za-z0-9_]*|\{\{.*\}\}|#\{[^{}]*\}|%\([A-Za-z_]\w*\)s|%[A-Za-z_][A-Za-z0-9_]*%|@[A-Za-z_][\w.-]*@|<[^<>]*>|\*+|x+|X+|\.+|…)$`)

// urlPlaceholder matches the words documentation puts in a URL for a
// password, and a template's {password} or :password.
var urlPlaceholder = lazyre.New(`(?i)^(?:pass(?:word|wd)?|pwd|secret|token|api[_-]?key|\{\w+\}|\[\w+\]|:\w+)$`)

// basicAuth reports whether s is base64 of user:password.
func basicAuth(s string) bool {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(s)
	}
	return err == nil && bytes.IndexByte(b, ':') > 0
}

// notReference reports whether s is a value rather than a reference to
// one (see reference).
func notReference(s string) bool { return !reference.Re().MatchString(s) }

// hasKeyMaterial reports whether s holds a run of at least 40 base64
// characters.
func hasKeyMaterial(s string) bool {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '=' {
			n++
			if n >= 40 {
				return true
			}
		} else {
			n = 0
		}
	}
	return false
}

// ruleSet is every rule with the keyword index over them.
type ruleSet struct {
	rules  []*rule
	global []*allowlist
	index  *keywords.Index
	words  []string // the keywords of index, by id
	// ruleKeywords lists, per rule, the ids of its keywords in index.
	ruleKeywords [][]int
}

// rules loads the rule set once; regular expressions are compiled when a
// rule first runs.
var rules = sync.OnceValue(loadRules)

// loadRules builds the rule set: gitleaks' rules and sot's, and the
// keyword index over them. Every process that masks anything builds it
// once (BenchmarkLoadRules).
func loadRules() *ruleSet {
	f := gitleaksRules
	rs := &ruleSet{rules: append(f.Rules[:len(f.Rules):len(f.Rules)], sotRules...), global: f.Allowlists}
	for _, a := range rs.global {
		a.compile()
	}
	ids := map[string]int{}
	var words []string
	for _, r := range rs.rules {
		var kw []int
		for _, k := range r.Keywords {
			k = strings.ToLower(k)
			id, ok := ids[k]
			if !ok {
				id = len(words)
				ids[k] = id
				words = append(words, k)
			}
			kw = append(kw, id)
		}
		rs.ruleKeywords = append(rs.ruleKeywords, kw)
	}
	rs.index = keywords.New(words)
	rs.words = words
	return rs
}

// compile compiles the rule's expressions once and reports whether they
// compiled (the tests make sure every rule does).
func (r *rule) compile() bool {
	r.once.Do(func() {
		var err error
		if r.re, err = regexp.Compile(r.Regex); err != nil {
			return
		}
		if r.Path != "" {
			if r.path, err = regexp.Compile(r.Path); err != nil {
				return
			}
		}
		for _, a := range r.Allowlists {
			if !a.compile() {
				return
			}
		}
		r.plan()
		r.ok = true
	})
	return r.ok
}

// check appends to spans the secret of a match of r at text[start:end], if
// it is one: the match's line breaks at either end are left out, the
// secret is taken from its capture groups, and it must pass the entropy
// threshold and every allowlist.
func (r *rule) check(spans []Span, text string, start, end int, global []*allowlist) []Span {
	for start < end && text[start] == '\n' {
		start++
	}
	for end > start && text[end-1] == '\n' {
		end--
	}
	if start == end {
		return spans
	}
	match := text[start:end]
	s, e := start, end
	// Like gitleaks, the secret group is taken from the expression run
	// again on the match alone.
	if g := r.re.FindStringSubmatchIndex(match); len(g) >= 4 {
		switch {
		case r.SecretGroup > 0:
			k := 2 * r.SecretGroup
			if k+1 >= len(g) || g[k] < 0 {
				return spans
			}
			s, e = start+g[k], start+g[k+1]
		default:
			for k := 2; k+1 < len(g); k += 2 {
				if g[k] >= 0 && g[k+1] > g[k] {
					s, e = start+g[k], start+g[k+1]
					break
				}
			}
		}
	}
	if s == e {
		return spans
	}
	secret := text[s:e]
	if r.Entropy != 0 && entropy(secret) <= r.Entropy {
		return spans
	}
	if v := validators[r.ID]; v != nil && !v(secret) {
		return spans
	}
	if r.where != nil && !r.where(text, start) {
		return spans
	}
	line := lineAround(text, start, end)
	if allowedBy(global, secret, match, line) || allowedBy(r.Allowlists, secret, match, line) {
		return spans
	}
	return append(spans, Span{Start: s, End: e, Kind: r.ID})
}

// lineAround returns the whole lines of text that hold text[start:end].
func lineAround(text string, start, end int) string {
	i := strings.LastIndexByte(text[:start], '\n') + 1
	j := strings.IndexByte(text[end:], '\n')
	if j < 0 {
		return text[i:]
	}
	return text[i : end+j]
}

func (a *allowlist) compile() bool {
	if len(a.Regexes) == 0 {
		return true
	}
	re, err := regexp.Compile("(?:" + strings.Join(a.Regexes, ")|(?:") + ")")
	if err != nil {
		return false
	}
	a.re = re
	return true
}

// allowedBy reports whether one of lists allows a finding.
func allowedBy(lists []*allowlist, secret, match, line string) bool {
	for _, a := range lists {
		if a.allows(secret, match, line) {
			return true
		}
	}
	return false
}

func (a *allowlist) allows(secret, match, line string) bool {
	target := secret
	switch a.Target {
	case "match":
		target = match
	case "line":
		target = line
	}
	byRegex := a.re != nil && a.re.MatchString(target)
	byWord := false
	if len(a.StopWords) > 0 {
		lower := strings.ToLower(secret)
		for _, w := range a.StopWords {
			if strings.Contains(lower, w) {
				byWord = true
				break
			}
		}
	}
	if !a.And {
		return byRegex || byWord
	}
	if len(a.Paths) > 0 || a.Commits {
		return false
	}
	checked := false
	if a.re != nil {
		if !byRegex {
			return false
		}
		checked = true
	}
	if len(a.StopWords) > 0 {
		if !byWord {
			return false
		}
		checked = true
	}
	return checked
}

// entropy is the Shannon entropy of s in bits, computed as gitleaks does:
// characters are counted, and their frequencies are taken over the length
// in bytes.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	counts := make(map[rune]int, len(s))
	for _, c := range s {
		counts[c]++
	}
	n := float64(len(s))
	var h float64
	for _, c := range counts {
		p := float64(c) / n
		h -= p * math.Log2(p)
	}
	return h
}
