// Package yamlfile decodes YAML with errors that name the file, line and
// column, the way every sot configuration and persona error is reported.
package yamlfile

import (
	"errors"
	"fmt"

	"github.com/goccy/go-yaml"
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
		e := &Error{File: file, Msg: ye.GetMessage()}
		if tok := ye.GetToken(); tok != nil && tok.Position != nil {
			e.Line, e.Column = tok.Position.Line+lineOffset, tok.Position.Column
		}
		return e
	}
	return &Error{File: file, Msg: err.Error()}
}
