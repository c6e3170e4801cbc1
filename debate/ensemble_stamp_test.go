package debate

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/engine"
)

// prototypeEnsemble is an ensemble file in the shape seed 003's prototype
// writes (perspectives of name, bias, focus and three blind spots;
// diversity_analysis; generated_at with microseconds and no zone).
const prototypeEnsemble = "testdata/ensemble-prototype.json"

// withStamp writes the prototype's ensemble with generated_at set to the
// JSON value stamp, and returns its path.
func withStamp(t *testing.T, stamp string) string {
	t.Helper()
	b, err := os.ReadFile(prototypeEnsemble)
	if err != nil {
		t.Fatal(err)
	}
	const orig = `"generated_at": "2025-11-15T09:25:09.123456"`
	if !strings.Contains(string(b), orig) {
		t.Fatalf("%s has no %s", prototypeEnsemble, orig)
	}
	path := filepath.Join(t.TempDir(), "ensemble_20251115_092509.json")
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), orig, `"generated_at": `+stamp, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// An ensemble file is read whatever zone its generated_at has, seed 003's
// own (no zone, read as UTC) among them; text that is no time is refused
// with the file and the field named.
func TestEnsembleTimestamps(t *testing.T) {
	for _, tc := range []struct {
		name, stamp string
		want        time.Time
		err         string
	}{
		{"zone Z", `"2025-11-15T09:25:09Z"`, time.Date(2025, 11, 15, 9, 25, 9, 0, time.UTC), ""},
		{"zone offset", `"2025-11-15T10:25:09+01:00"`, time.Date(2025, 11, 15, 9, 25, 9, 0, time.UTC), ""},
		{"zone offset and fraction", `"2025-11-15T09:25:09.5-05:00"`, time.Date(2025, 11, 15, 14, 25, 9, 500000000, time.UTC), ""},
		{"no zone, microseconds", `"2025-11-15T09:25:09.123456"`, time.Date(2025, 11, 15, 9, 25, 9, 123456000, time.UTC), ""},
		{"no zone, whole seconds", `"2025-11-15T09:25:09"`, time.Date(2025, 11, 15, 9, 25, 9, 0, time.UTC), ""},
		{"no zone, a space for the T", `"2025-11-15 09:25:09.123456"`, time.Date(2025, 11, 15, 9, 25, 9, 123456000, time.UTC), ""},
		{"a space for the T and a zone", `"2025-11-15 09:25:09+00:00"`, time.Date(2025, 11, 15, 9, 25, 9, 0, time.UTC), ""},
		{"to the minute", `"2025-11-15T09:25"`, time.Date(2025, 11, 15, 9, 25, 0, 0, time.UTC), ""},
		{"date only", `"2025-11-15"`, time.Date(2025, 11, 15, 0, 0, 0, 0, time.UTC), ""},
		{"null", `null`, time.Time{}, ""},
		{"empty", `""`, time.Time{}, ""},
		{"words", `"last tuesday"`, time.Time{}, `generated_at: "last tuesday" is not a time`},
		{"an impossible date", `"2025-13-45T09:25:09"`, time.Time{}, `generated_at: "2025-13-45T09:25:09" is not a time`},
		{"a number", `20251115`, time.Time{}, "generated_at: 20251115 is not a time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := withStamp(t, tc.stamp)
			obs, err := ReadEnsemble(path, false)
			if tc.err != "" {
				var ue *engine.UserError
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), path) ||
					!errors.As(err, &ue) || ue.Field != "--observers-from" || strings.Contains(err.Error(), "not an ensemble file") {
					t.Fatalf("err = %v, want a --observers-from error naming %s and %q", err, path, tc.err)
				}
				return
			}
			if err != nil || len(obs) != 3 {
				t.Fatalf("observers %v, err %v", obs, err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var e Ensemble
			if err := json.Unmarshal(b, &e); err != nil {
				t.Fatal(err)
			}
			if !e.GeneratedAt.Equal(tc.want) || e.GeneratedAt.Location() != time.UTC {
				t.Errorf("generated_at read as %v, want %v", e.GeneratedAt, tc.want)
			}
		})
	}
}

// The prototype's own ensemble file gives its observers, as written, to
// --observers-from; sot's ensemble written back has the time with its zone.
func TestReadPrototypeEnsemble(t *testing.T) {
	obs, err := ReadEnsemble(prototypeEnsemble, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 3 {
		t.Fatalf("%d observers, want 3", len(obs))
	}
	o := obs[1]
	if o.Name != "The Seamstress of Gossamer" || len(o.BlindSpots) != 3 || !strings.Contains(o.Focus, "'Gossamer' and the tippet") ||
		!strings.Contains(o.Focus, "\u2014what weather") || o.Origin != "ensemble "+prototypeEnsemble {
		t.Errorf("observer 2: %+v", o)
	}
	b, err := json.Marshal(ensembleOf(obs, &Diversity{}, time.Date(2025, 11, 15, 9, 25, 9, 123456000, time.UTC)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"generated_at":"2025-11-15T09:25:09.123456Z"`) {
		t.Errorf("written back: %s", b)
	}
}
