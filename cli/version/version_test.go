package version

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/sotlabs/sot/cli/cmdutil"
)

// A release build's version and commit are what sot version prints, one
// field a line, and --json says the same as an object.
func TestRunPrintsTheBuild(t *testing.T) {
	defer func(v, c string) { Version, Commit = v, c }(Version, Commit)
	Version, Commit = "v1.2.3", "0123456789ab"

	var out bytes.Buffer
	if err := Run(&Options{IO: &cmdutil.IOStreams{Out: &out}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 5 || lines[0] != "sot v1.2.3" || !strings.HasPrefix(lines[1], "commit: 0123456789ab") ||
		!strings.HasPrefix(lines[2], "date: ") || lines[3] != "go: "+runtime.Version() || !strings.HasPrefix(lines[4], "module: github.com/sotlabs/sot") {
		t.Errorf("sot version printed:\n%s", out.String())
	}

	out.Reset()
	if err := Run(&Options{IO: &cmdutil.IOStreams{Out: &out}, JSON: true}); err != nil {
		t.Fatal(err)
	}
	var info Info
	if err := json.Unmarshal(out.Bytes(), &info); err != nil {
		t.Fatalf("--json printed %q: %v", out.String(), err)
	}
	if info.Version != "v1.2.3" || info.Go != runtime.Version() || info.Date == "" {
		t.Errorf("--json printed %+v", info)
	}
}

func TestPseudoVersion(t *testing.T) {
	tests := []struct{ in, date, commit string }{
		{"v0.0.0-20261124071500-0123456789ab", "2026-11-24T07:15:00Z", "0123456789ab"},
		{"v1.2.4-0.20261124071500-0123456789ab+dirty", "2026-11-24T07:15:00Z", "0123456789ab"},
		{"v1.2.3", "", ""},
	}
	for _, tt := range tests {
		m := pseudo.Re().FindStringSubmatch(tt.in)
		if tt.commit == "" {
			if m != nil {
				t.Errorf("%s: read %v as a pseudo-version", tt.in, m)
			}
			continue
		}
		if m == nil || m[2] != tt.commit || m[1] != tt.date[:4]+tt.date[5:7]+tt.date[8:10]+tt.date[11:13]+tt.date[14:16]+tt.date[17:19] {
			t.Errorf("%s: got %v", tt.in, m)
		}
	}
}
