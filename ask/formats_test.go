package ask

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
		{name: "every format", formats: []string{"html", "pairs", "markdown", "json"}, stdout: "html"},
		{name: "stdout markdown", stdout: "markdown"},
		{name: "stdout json", stdout: "json"},
		{name: "unknown format", formats: []string{"html", "sarif"},
			want: `--format "sarif": use html or pairs (ANSWER.md and answer.json are always written)`},
		{name: "format names in any case", formats: []string{"HTML", " Pairs"}},
		{name: "unknown stdout", stdout: "pairs", want: `--stdout "pairs": use markdown, json or html`},
		{name: "stdout as a file's extension", stdout: "md"},
		{name: "stdout in any case", stdout: "JSON"},
		{name: "stdout before format", formats: []string{"pdf"}, stdout: "xml", want: `--stdout "xml": use markdown, json or html`},
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
