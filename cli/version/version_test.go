package version

import "testing"

func TestPseudoVersion(t *testing.T) {
	tests := []struct{ in, date, commit string }{
		{"v0.0.0-20261124071500-0123456789ab", "2026-11-24T07:15:00Z", "0123456789ab"},
		{"v1.2.4-0.20261124071500-0123456789ab+dirty", "2026-11-24T07:15:00Z", "0123456789ab"},
		{"v1.2.3", "", ""},
	}
	for _, tt := range tests {
		m := pseudo.FindStringSubmatch(tt.in)
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
