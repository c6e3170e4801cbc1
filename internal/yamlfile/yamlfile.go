// Package yamlfile decodes YAML with errors that name the file, line and
// column, the way every sot configuration and persona error is reported.
package yamlfile

import (
	"errors"
	"fmt"

	"github.com/goccy/go-yaml"
	"github.com/sotlabs/sot/internal/lazyre"
)

// Error is a YAML problem at a position in a file.
type Error struct {
	File   string
	Line   int // 1-based; 0 when unknown
	Column int
	Msg    string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

// Decode unmarshals data into v. With strict, keys that v has no field for
// are errors. lineOffset is added to reported lines, for YAML embedded in a
// larger file (frontmatter starts on line 2).
func Decode(file string, data []byte, v any, strict bool, lineOffset int) error {
	var opts []yaml.DecodeOption
	if strict {
		opts = append(opts, yaml.DisallowUnknownField())
	}
	err := yaml.UnmarshalWithOptions(data, v, opts...)
	if err == nil {
		return nil
	}
	return Wrap(file, err, lineOffset)
}

// Wrap converts a go-yaml error into an *Error.
func Wrap(file string, err error, lineOffset int) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		e := &Error{File: file, Msg: plainTypeError(ye.GetMessage())}
		if tok := ye.GetToken(); tok != nil && tok.Position != nil {
			e.Line, e.Column = tok.Position.Line+lineOffset, tok.Position.Column
		}
		return e
	}
	return &Error{File: file, Msg: err.Error()}
}

// typeMismatch is go-yaml's message for a value of the wrong type, which
// names Go's struct and field rather than the key the user wrote.
var typeMismatch = lazyre.New(`^cannot unmarshal (\S+) into Go (?:struct field \S+|value) of type (\S+)$`)

// plainTypeError says a type mismatch in the file's terms; the position
// already points at the value.
func plainTypeError(msg string) string {
	m := typeMismatch.Re().FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	return fmt.Sprintf("got %s where %s is needed", kindName(m[1]), kindName(m[2]))
}

func kindName(t string) string {
	switch {
	case t == "string":
		return "text"
	case t == "bool":
		return "true or false"
	case t == "float64" || t == "float32":
		return "a number"
	case t == "time.Duration":
		return "a duration such as 30s"
	case len(t) > 2 && t[:2] == "[]":
		return "a list"
	case len(t) > 3 && t[:3] == "map":
		return "a mapping"
	case len(t) > 2 && t[:3] == "int", len(t) > 3 && t[:4] == "uint":
		return "a whole number"
	}
	return "a " + t
}
