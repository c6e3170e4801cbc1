package debate

import (
	"fmt"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/engine/scenario"
)

// outputFormats are the formats a debate writes, every run, and may print:
// markdown (dialectic-log.md) and json (debate.json).
var outputFormats = scenario.FormatSet{"markdown", "json"}

// CheckFormats checks the formats a debate is asked to write (--format)
// and the one it is asked to print instead (--stdout, "" for none), each
// read by scenario.FormatName: markdown or json, as a debate writes both
// on every run and has no other. The error is an *engine.UserError naming
// the first one refused, the printed one first.
func CheckFormats(formats []string, stdout string) error {
	if stdout != "" && !outputFormats.Has(stdout) {
		return &engine.UserError{Msg: fmt.Sprintf("--stdout %q: use markdown (dialectic-log.md) or json (debate.json)", stdout)}
	}
	for _, f := range formats {
		if !outputFormats.Has(f) {
			return &engine.UserError{Msg: fmt.Sprintf("--format %q: use json or markdown; sot debate writes debate.json, dialectic-log.md and its other outputs on every run and has no other format", f)}
		}
	}
	return nil
}
