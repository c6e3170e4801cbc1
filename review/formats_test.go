package review

import (
	"testing"

	"github.com/sotlabs/sot/engine"
)

func TestCheckFormats(t *testing.T) {
	for _, tc := range []struct {
		name    string
		formats []string
		stdout  string
		want    string // the error's text, "" for none
	}{
		{name: "none"},
		{name: "every format", formats: []string{"markdown", "json", "sarif", "rdjson", "html"}, stdout: "sarif"},
		{name: "any case and extensions", formats: []string{"MD", "Json", "rdjsonl"}, stdout: "RDJSONL"},
		{name: "unknown format", formats: []string{"json", "Yaml"},
			want: `--format "Yaml": use markdown, json, sarif, rdjson (rdjsonl, the file's extension, works too) or html`},
		{name: "unknown stdout", stdout: " XML",
			want: `--stdout "xml": use markdown, json, sarif, rdjson (rdjsonl, the file's extension, works too) or html`},
		{name: "format before stdout", formats: []string{"pdf"}, stdout: "xml",
			want: `--format "pdf": use markdown, json, sarif, rdjson (rdjsonl, the file's extension, works too) or html`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckFormats(tc.formats, tc.stdout)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("CheckFormats: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tc.want {
				t.Fatalf("CheckFormats = %v, want %q", err, tc.want)
			}
			if !engine.IsUserError(err) {
				t.Errorf("%v is no user error", err)
			}
		})
	}
}
