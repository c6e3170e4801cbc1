package review

import (
	"fmt"
	"maps"
	"slices"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/engine/scenario"
)

// outputFormats are the formats a review writes or prints: markdown, its
// human-readable report, and the machine outputs of Formats.
var outputFormats = append(scenario.FormatSet{"markdown"}, slices.Sorted(maps.Keys(Formats))...)

// CheckFormats checks the formats a review is asked to write (--format)
// and the one it is asked to print instead (--stdout, "" for none), each
// read by scenario.FormatName: markdown, json, sarif, rdjson or html. The
// error is an *engine.UserError naming the first one refused.
func CheckFormats(formats []string, stdout string) error {
	for _, f := range formats {
		if !outputFormats.Has(f) {
			return &engine.UserError{Msg: fmt.Sprintf("--format %q: use markdown, json, sarif, rdjson (rdjsonl, the file's extension, works too) or html", f)}
		}
	}
	if stdout != "" && !outputFormats.Has(stdout) {
		return &engine.UserError{Msg: fmt.Sprintf("--stdout %q: use markdown, json, sarif, rdjson (rdjsonl, the file's extension, works too) or html", scenario.FormatName(stdout))}
	}
	return nil
}
