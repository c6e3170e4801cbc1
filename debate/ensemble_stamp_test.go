package debate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An ensemble file is read whatever zone its generated_at has, seed 003's
// own (no zone) among them; text that is no time is refused with the
// field named.
func TestEnsembleTimestamps(t *testing.T) {
	for _, tc := range []struct {
		stamp string
		want  time.Time
		err   string
	}{
		{`"2025-11-15T09:25:09Z"`, time.Date(2025, 11, 15, 9, 25, 9, 0, time.UTC), ""},
		{`"2025-11-15T10:25:09+01:00"`, time.Date(2025, 11, 15, 9, 25, 9, 0, time.UTC), ""},
		{`"2025-11-15T09:25:09.481230"`, time.Date(2025, 11, 15, 9, 25, 9, 481230000, time.UTC), ""},
		{`"2025-11-15T09:25:09"`, time.Date(2025, 11, 15, 9, 25, 9, 0, time.UTC), ""},
		{`"2025-11-15 09:25:09"`, time.Date(2025, 11, 15, 9, 25, 9, 0, time.UTC), ""},
		{`"2025-11-15"`, time.Date(2025, 11, 15, 0, 0, 0, 0, time.UTC), ""},
		{`null`, time.Time{}, ""},
		{`"last tuesday"`, time.Time{}, `generated_at: "last tuesday" is not a time`},
		{`20251115`, time.Time{}, "generated_at: want a time"},
	} {
		t.Run(tc.stamp, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ensemble_20251115_092509.json")
			body := `{"perspectives": [{"name": "The Phenomenologist", "bias": "Experience comes first.", "focus": "What the speaker lives through.", "blind_spots": ["history"]}],
 "diversity_analysis": {"num_perspectives": 1, "avg_pairwise_distance": 0, "min_pairwise_distance": 0, "max_pairwise_distance": 0, "diversity_score": 0},
 "generated_at": ` + tc.stamp + `}`
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			obs, err := ReadEnsemble(path, false)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || len(obs) != 1 {
				t.Fatalf("observers %v, err %v", obs, err)
			}
		})
	}
	var s Stamp
	if err := s.UnmarshalJSON([]byte(`"2025-11-15T09:25:09.481230"`)); err != nil || !s.Equal(time.Date(2025, 11, 15, 9, 25, 9, 481230000, time.UTC)) {
		t.Errorf("stamp %v, err %v", s, err)
	}
}
