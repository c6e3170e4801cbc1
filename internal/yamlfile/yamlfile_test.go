package yamlfile

import (
	"errors"
	"strings"
	"testing"
)

func TestDecodeReportsPosition(t *testing.T) {
	type T struct {
		Name  string `yaml:"name"`
		Count int    `yaml:"count"`
	}
	tests := []struct {
		name       string
		in         string
		strict     bool
		offset     int
		line, col  int
		msgContain string
	}{
		{"type mismatch", "name: x\ncount: many\n", false, 0, 2, 8, "got text where a whole number is needed"},
		{"unknown key when strict", "name: x\ncolour: red\n", true, 0, 2, 1, "colour"},
		{"offset for frontmatter", "name: x\ncount: [\n", false, 1, 3, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v T
			err := Decode("f.yaml", []byte(tt.in), &v, tt.strict, tt.offset)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if e.File != "f.yaml" || e.Line != tt.line || (tt.col != 0 && e.Column != tt.col) {
				t.Errorf("got %s, want f.yaml:%d:%d", e, tt.line, tt.col)
			}
			if !strings.Contains(e.Msg, tt.msgContain) || strings.Contains(e.Msg, "Go struct") {
				t.Errorf("message %q should say %q in the file's terms", e.Msg, tt.msgContain)
			}
		})
	}
	var v T
	if err := Decode("f.yaml", []byte("name: ok\n"), &v, true, 0); err != nil || v.Name != "ok" {
		t.Errorf("valid YAML: %v %+v", err, v)
	}
}
