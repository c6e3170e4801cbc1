package material

import (
	"regexp"
	"sync"
)

// lazyRE is a regular expression compiled when it is first used. The
// package's rules are many, and a command that never reads a diff (sot
// ask, sot debate) paid for compiling them at start-up.
type lazyRE struct {
	re func() *regexp.Regexp
}

// lazyRegexp is regexp.MustCompile(expr), compiled on first use.
func lazyRegexp(expr string) *lazyRE {
	return &lazyRE{re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })}
}

// MatchString reports whether s contains a match of the expression.
func (l *lazyRE) MatchString(s string) bool { return l.re().MatchString(s) }
