package reviewcmd

import (
	"strings"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/review"
)

func without(list []string, x string) []string {
	var out []string
	for _, v := range list {
		if v != x {
			out = append(out, v)
		}
	}
	return out
}

// missingKeys refuses, once and before any call, a review whose models
// include one whose provider has no key (cmdutil's Factory.MissingKey). A
// specialist's own model without a key has already been moved to the
// session default; this is the default itself.
func missingKeys(f *cmdutil.Factory, ro *review.Options, p *review.Plan) error {
	models := []string{p.TriageModel}
	for _, m := range p.Models {
		models = append(models, m)
	}
	return f.MissingKey(ro.Config, models...)
}

// formatName reads a format as the user may write it: in any case, and as
// its file's extension (rdjsonl, md).
func formatName(f string) string {
	switch f = strings.ToLower(strings.TrimSpace(f)); f {
	case "rdjsonl":
		return "rdjson"
	case "md":
		return "markdown"
	}
	return f
}
