// Command sot is the Society-of-Thought engine's command line. It only wires
// the process to the command tree in internal/cmd/root.
package main

import (
	"os"

	"github.com/sotlabs/sot/internal/cmd/root"
	"github.com/sotlabs/sot/internal/cmdutil"
)

func main() {
	os.Exit(root.Main(cmdutil.New(), os.Args[1:]))
}
