// Package gcstart holds the collector off from the initialisation of the
// sot command's packages until the command starts its own work. The
// packages allocate about 3 MB as they initialise (the providers' SDKs,
// Temporal's protocol buffers, the regular expressions), and the
// collection the runtime starts at 4 MB took a third of the CPU of a
// command's start. Only cmd/sot imports it: a program that uses sot's
// packages as a library keeps its own collector settings.
//
// The hold is gchold's: it does nothing when GOGC or GOMEMLIMIT is set,
// and it ends by itself at the first collection, which the 64 MB limit it
// sets starts if nothing releases it sooner.
package gcstart

import (
	"os"

	"github.com/sotlabs/sot/internal/gchold"
)

// release is taken while the package initialises, which is before most of
// the command's packages do: the packages are initialised in the order of
// their import paths, each once what it imports is.
var release = gchold.Hold(os.Getenv)

// Release ends the hold; later calls do nothing.
func Release() { release() }
