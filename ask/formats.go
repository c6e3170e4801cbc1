package ask

import (
	"fmt"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/engine/scenario"
)

// Ask reads format names as review and debate do (scenario.FormatName:
// any case, md for markdown).
var (
	// writeFormats are the formats Options.Formats may name: html and
	// FormatPairs add files; markdown and json, always written, are
	// accepted and change nothing.
	writeFormats = scenario.FormatSet{"html", "markdown", "json", FormatPairs}
	// printFormats are the formats an answer may also be printed in.
	printFormats = scenario.FormatSet{"markdown", "json", "html"}
)

// CheckFormats checks the formats an answer is asked to write (--format:
// html or pairs) and the one it is asked to also print (--stdout:
// markdown, json or html, "" for none). The error is an *engine.UserError
// naming the first one refused, the printed one first. A caller hands
// Execute the names as scenario.FormatName reads them.
func CheckFormats(formats []string, stdout string) error {
	if stdout != "" && !printFormats.Has(stdout) {
		return &engine.UserError{Msg: fmt.Sprintf("--stdout %q: use markdown, json or html", stdout)}
	}
	for _, f := range formats {
		if !writeFormats.Has(f) {
			return &engine.UserError{Msg: fmt.Sprintf("--format %q: use html or pairs (ANSWER.md and answer.json are always written)", f)}
		}
	}
	return nil
}
