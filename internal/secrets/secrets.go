// Package secrets finds credentials in text and masks them, so that sot
// neither sends a key to a model nor writes one to disk.
//
// Two kinds of secret are found. Known secrets are the values registered
// with Register: the API keys sot itself loads. Detected secrets are found
// by gitleaks' default rule set (about 220 rules for cloud, SaaS and
// database credentials, tokens and private keys), which this package
// keeps as gitleaks.json, loads from rules_gen.go (the same rules as Go
// values) and evaluates the way gitleaks does: a rule runs only where one
// of its keywords occurs, its secret group must carry more
// entropy than the rule asks, and its allowlists drop known false
// positives. A few rules of sot's own add the key formats of the providers
// sot talks to that gitleaks' rules only know in their latest exact shape,
// and the passwords of configuration files whose format says what a value
// is (the <password> of a Maven settings.xml and other XML, .pypirc and
// other INI sections, .netrc, .npmrc, the auths of Docker's config.json,
// the password in a URL), which gitleaks' generic rule misses when they do
// not look random enough. gen/ regenerates gitleaks.json from a gitleaks
// release, and TestRulesFileIsCurrent -update regenerates rules_gen.go from
// it; sot's rules live in rules.go.
//
// A masked secret keeps its first four characters, when it is long enough
// for that to give nothing away, and names its kind:
//
//	AKIA…[secret: aws-access-token]
//
// Masking never adds or removes a line break, so line numbers stay right,
// and it is deterministic: the same text and the same registered values
// always give the same result.
package secrets

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// KnownKind is the kind of a masked registered value.
const KnownKind = "configured-api-key"

// Marker starts the kind part of every mask; text containing it holds a
// masked secret.
const Marker = "…[secret: "

// minRegistered is the length below which a registered value is ignored:
// masking every occurrence of a short string would mangle ordinary text.
const minRegistered = 6

// prefixMin is the length from which a mask keeps a secret's first four
// characters, so that at most a quarter of it shows.
const prefixMin = 16

var (
	knownMu sync.Mutex               // serialises Register
	known   atomic.Pointer[[]string] // replaced, never changed: Find reads it without a lock or a copy
)

// Register makes Find and Mask treat every occurrence of value as a secret.
// Surrounding white space is ignored, and so are values shorter than six
// bytes.
func Register(value string) {
	value = strings.TrimSpace(value)
	if len(value) < minRegistered {
		return
	}
	knownMu.Lock()
	defer knownMu.Unlock()
	if old := registered(); !slices.Contains(old, value) {
		next := append(slices.Clip(old), value) // a new array: a reader may hold the old one
		known.Store(&next)
	}
}

// registered returns the registered values, which the caller must not
// change.
func registered() []string {
	if p := known.Load(); p != nil {
		return *p
	}
	return nil
}

// Span is a secret found in a text: the bytes text[Start:End], and the
// kind of secret (a gitleaks rule id such as "aws-access-token", or
// KnownKind).
type Span struct {
	Start, End int
	Kind       string
}

// Find returns the secrets in text, sorted by position and not
// overlapping. path, when not empty, is the name of the file the text comes
// from: a few rules apply only to some kinds of file (Terraform, YAML,
// NuGet configuration), and without a path they apply to any text. A
// file's name never makes a secret in it safe: gitleaks' allowlists by
// path are not applied.
func Find(text, path string) []Span {
	if text == "" {
		return nil // and the rules are not built for it
	}
	var spans []Span
	for _, v := range registered() {
		for i := 0; ; {
			j := strings.Index(text[i:], v)
			if j < 0 {
				break
			}
			spans = append(spans, Span{Start: i + j, End: i + j + len(v), Kind: KnownKind})
			i += j + len(v)
		}
	}
	spans = append(spans, detect(text, path)...)
	return merge(spans)
}

// Warm builds the rules in the background, so that the first text a run
// masks does not wait for them: a command that knows it will mask starts
// them while it waits for something else (git, the disk).
func Warm() { go rules() }

// Mask returns text with every secret Find reports replaced by its mask
// (see Apply).
func Mask(text string) string { return Apply(text, Find(text, "")) }

// Apply replaces the spans, as Find returns them, of text with their
// masks: a secret's first four characters when it has at least sixteen,
// Marker, its kind and "]". A secret that spans lines is masked line by
// line (the later lines without the four characters), so the text keeps
// every line break.
func Apply(text string, spans []Span) string {
	if len(spans) == 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + 32*len(spans))
	last := 0
	for _, s := range spans {
		b.WriteString(text[last:s.Start])
		first := true
		for part := range strings.SplitSeq(text[s.Start:s.End], "\n") {
			if !first {
				b.WriteByte('\n')
			}
			if part != "" {
				if first {
					b.WriteString(replacement(part, s.Kind))
				} else {
					b.WriteString(Marker + s.Kind + "]")
				}
			}
			first = false
		}
		last = s.End
	}
	b.WriteString(text[last:])
	return b.String()
}

// replacement is the mask of one secret of the given kind.
func replacement(secret, kind string) string {
	prefix := ""
	if len(secret) >= prefixMin {
		n := 0
		for i := range secret {
			if n == 4 {
				prefix = secret[:i]
				break
			}
			n++
		}
	}
	return prefix + Marker + kind + "]"
}

// merge sorts spans and joins those that overlap. A joined span takes the
// kind of its most specific part: a registered value first, then any rule
// but a generic one, then the span that starts first.
func merge(spans []Span) []Span {
	if len(spans) < 2 {
		return spans
	}
	slices.SortStableFunc(spans, func(a, b Span) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return b.End - a.End
	})
	out := spans[:1]
	for _, s := range spans[1:] {
		last := &out[len(out)-1]
		if s.Start >= last.End {
			out = append(out, s)
			continue
		}
		last.End = max(last.End, s.End)
		if rank(s.Kind) > rank(last.Kind) {
			last.Kind = s.Kind
		}
	}
	return out
}

// rank orders kinds by how much they say about a secret.
func rank(kind string) int {
	switch {
	case kind == KnownKind:
		return 2
	case strings.Contains(kind, "generic"):
		return 0
	}
	return 1
}
