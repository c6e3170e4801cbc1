package debate

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
		{name: "both formats", formats: []string{"markdown", "json"}, stdout: "json"},
		{name: "any case and extension", formats: []string{"MD", "Json"}, stdout: " Markdown"},
		{name: "unknown format", formats: []string{"json", "HTML"},
			want: `--format "HTML": use json or markdown; sot debate writes debate.json, dialectic-log.md and its other outputs on every run and has no other format`},
		{name: "unknown stdout", stdout: "Sarif", want: `--stdout "Sarif": use markdown (dialectic-log.md) or json (debate.json)`},
		{name: "stdout before format", formats: []string{"pdf"}, stdout: "xml",
			want: `--stdout "xml": use markdown (dialectic-log.md) or json (debate.json)`},
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
