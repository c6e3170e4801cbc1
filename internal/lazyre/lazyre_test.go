package lazyre

import (
	"strings"
	"testing"
)

// An expression is compiled once, on its first use, and matches as
// regexp.MustCompile's would; CompileAll names one that does not compile,
// which only its first use would otherwise find.
func TestCompiledOnFirstUse(t *testing.T) {
	r := New(`^a+b$`)
	if r.re != nil {
		t.Fatal("compiled before its first use")
	}
	if !r.Re().MatchString("aab") || r.Re().MatchString("ba") {
		t.Error("does not match as its expression does")
	}
	if first := r.Re(); first != r.Re() {
		t.Error("compiled again on its second use")
	}
	if n, expr, err := CompileAll(); err != nil || n != 1 {
		t.Fatalf("CompileAll: %d expressions, %s: %v; want the one, compiling", n, expr, err)
	}
	bad := New(`(unclosed`)
	if n, expr, err := CompileAll(); err == nil || n != 2 || expr != `(unclosed` || !strings.Contains(err.Error(), "missing closing )") {
		t.Errorf("CompileAll = %d, %q, %v; want the unclosed expression named, of two", n, expr, err)
	}
	defer func() {
		if recover() == nil {
			t.Error("the first use of an expression that does not compile did not panic")
		}
	}()
	bad.Re()
}
