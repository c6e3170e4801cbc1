package reviewcmd

import (
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
