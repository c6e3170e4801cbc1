package cmdutil

import (
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/sotlabs/sot/internal/termsafe"
)

// What sot prints for a person comes partly from the material and from
// models: a corpus title, a theme name from a planted themes.json, an
// observer's name from an ensemble file, a model's answer. Such a value
// must neither act on the terminal (set its title, clear the screen) nor
// start a line of its own that passes for one of sot's ("sot: warning:
// ..."). The helpers below print it as one line with every control
// character escaped (termsafe.Line); sot's own format text and line breaks
// are kept. JSON output is left as it is: encoding/json escapes the C0
// controls (ESC among them) itself.

// Warn writes "sot: warning: " and s on one line of w, s made safe for a
// terminal.
func Warn(w io.Writer, s string) { fmt.Fprintln(w, "sot: warning: "+termsafe.Line(s)) }

// Note writes "sot: note: " and s on one line of w, s made safe for a
// terminal: something worth knowing that is neither a warning nor
// progress.
func Note(w io.Writer, s string) { fmt.Fprintln(w, "sot: note: "+termsafe.Line(s)) }

// Say writes "sot: " and s on one line of w, s made safe for a terminal:
// the form of the progress lines a run prints.
func Say(w io.Writer, s string) { fmt.Fprintln(w, "sot: "+termsafe.Line(s)) }

// Fprintf is fmt.Fprintf with every argument that is text (a string or a
// type made of one, a slice of them, an error) made one safe line first
// (termsafe.Line), so no value can carry an escape sequence or a line
// break; the format's own text is printed as it is. Numbers and other
// values are formatted as fmt formats them.
func Fprintf(w io.Writer, format string, args ...any) (int, error) {
	return fmt.Fprintf(w, format, Safe(args...)...)
}

// Safe returns args with every argument that is text made one safe line
// (termsafe.Line), for fmt functions: see Fprintf.
func Safe(args ...any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = safeArg(a)
	}
	return out
}

// Line makes one untrusted value safe as (part of) a line on a terminal:
// termsafe.Line.
func Line(s string) string { return termsafe.Line(s) }

// Text makes untrusted text of several lines (a source's text, a prompt)
// safe for a terminal: its line breaks and tabs are kept, every other
// control character escaped (termsafe.Text).
func Text(s string) string { return termsafe.Text(s) }

func safeArg(a any) any {
	switch v := a.(type) {
	case nil:
		return nil
	case string:
		return termsafe.Line(v)
	case []string:
		out := make([]string, len(v))
		for i, s := range v {
			out[i] = termsafe.Line(s)
		}
		return out
	case error:
		return termsafe.Line(v.Error())
	}
	rv := reflect.ValueOf(a)
	switch {
	case rv.Kind() == reflect.String:
		return termsafe.Line(text(rv))
	case rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.String:
		out := make([]string, rv.Len())
		for i := range out {
			out[i] = termsafe.Line(text(rv.Index(i)))
		}
		return out
	}
	return a
}

// text is what fmt prints for a value of a string type: its String
// method's result when it has one.
func text(v reflect.Value) string {
	if s, ok := v.Interface().(fmt.Stringer); ok {
		return s.String()
	}
	return v.String()
}

// MissingPart is one missing part of a run, as a command lists it.
type MissingPart struct {
	// Name says which part ("review/security", "map, s1 (Notes)").
	Name string
	// Error is why it is missing; Budget, that a budget stopped it.
	Error  string
	Budget bool
}

// PrintMissing lists missing parts, each line "  - NAMES: ERROR": parts
// that failed the same way share a line, and the parts a budget stopped
// share one line that does not repeat the budget's message (the command
// says it once).
func PrintMissing(w io.Writer, parts []MissingPart) {
	var errs, budget []string
	names := map[string][]string{}
	for _, m := range parts {
		if m.Budget {
			budget = append(budget, m.Name)
			continue
		}
		if _, ok := names[m.Error]; !ok {
			errs = append(errs, m.Error)
		}
		names[m.Error] = append(names[m.Error], m.Name)
	}
	for _, e := range errs {
		Fprintf(w, "  - %s: %s\n", strings.Join(names[e], "; "), e)
	}
	if len(budget) > 0 {
		Fprintf(w, "  - not run, the budget was reached: %s\n", strings.Join(budget, "; "))
	}
}
