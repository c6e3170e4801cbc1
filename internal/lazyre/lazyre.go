// Package lazyre holds regular expressions that are compiled the first
// time they are used rather than as their package starts. Every sot
// command starts every package of the binary, and compiled the sixty-odd
// expressions of all of them as it started, for the few that one command
// uses.
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled on its first use.
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

var (
	mu  sync.Mutex
	all []*Regexp
)

// New returns expr, to be compiled the first time Re is called. A
// package-level expression is declared with it where it would be with
// regexp.MustCompile.
func New(expr string) *Regexp {
	r := &Regexp{expr: expr}
	mu.Lock()
	all = append(all, r)
	mu.Unlock()
	return r
}

// Re returns the compiled expression, compiling it on the first call; an
// expression that does not compile panics, as with regexp.MustCompile.
func (r *Regexp) Re() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.expr) })
	return r.re
}

// CompileAll compiles every expression New has been given and returns
// how many there are, and the first that does not compile, with its
// error: what regexp.MustCompile would have found as the binary started.
// A test of a package that imports them all calls it.
func CompileAll() (n int, expr string, err error) {
	mu.Lock()
	defer mu.Unlock()
	for _, r := range all {
		if _, err := regexp.Compile(r.expr); err != nil {
			return len(all), r.expr, err
		}
	}
	return len(all), "", nil
}
