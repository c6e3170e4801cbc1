package browsertest

import "testing"

// SOT_REQUIRE_BROWSER and SOT_REQUIRE_DOT read the same values: what
// strconv.ParseBool reads, and anything else (a typo) as a requirement.
func TestRequired(t *testing.T) {
	tests := []struct {
		value string
		want  bool
	}{
		{"", false}, {" ", false}, {"0", false}, {"false", false}, {"FALSE", false}, {"f", false},
		{"1", true}, {"true", true}, {"True", true}, {"t", true}, {"yes", true}, {"on", true},
	}
	for _, tt := range tests {
		for _, name := range []string{EnvRequire, "SOT_REQUIRE_DOT"} {
			t.Setenv(name, tt.value)
			if got := Required(name); got != tt.want {
				t.Errorf("%s=%q: Required = %v, want %v", name, tt.value, got, tt.want)
			}
		}
	}
}
