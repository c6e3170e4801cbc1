// Command sot is the Society-of-Thought engine's command line. It only wires
// the process to the command tree in cli/root.
package main

import (
	"os"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/cli/root"
	"github.com/sotlabs/sot/internal/gcstart"
)

func main() {
	f := cmdutil.New()
	f.ReleaseStartup = gcstart.Release
	code := root.Main(f, os.Args[1:])
	cmdutil.RecordExit(os.Getenv, code)
	os.Exit(code)
}
