package scenario

import (
	"slices"
	"strings"
)

// FormatName reads the name of an output format as a user may write it:
// in any case, with the spaces around it ignored, and as its file's
// extension (md is markdown, rdjsonl is rdjson). Any other name comes back
// lower-cased, for the scenario to accept or refuse.
func FormatName(f string) string {
	switch f = strings.ToLower(strings.TrimSpace(f)); f {
	case "md":
		return "markdown"
	case "rdjsonl":
		return "rdjson"
	}
	return f
}

// FormatSet declares the formats a scenario accepts in one place (the
// files a run may write, or the one it may print instead), by the names
// FormatName gives them, so that every front end accepts the same ones.
type FormatSet []string

// Has reports whether s holds the format f names, read by FormatName.
func (s FormatSet) Has(f string) bool {
	return slices.Contains(s, FormatName(f))
}
