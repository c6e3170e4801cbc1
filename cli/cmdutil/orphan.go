package cmdutil

import (
	"os"
	"time"
)

// exitWhenOrphaned ends this process once its parent is gone: the command
// a worker drives, whose worker died. Another worker's command then
// serves the run's workflow and takes the run up from its history; this
// one, left running, would serve it beside that one and write the run's
// outputs where nobody reads them. Linux kills the command with its worker
// already (temporal.Driver starts it so); elsewhere on Unix the command is
// handed to another parent, which this notices within a second. Windows
// never reports another parent, and the command runs on to the run's end.
func exitWhenOrphaned() {
	parent := os.Getppid()
	go func() {
		for {
			time.Sleep(time.Second) // polling: no signal tells a process its parent died
			if os.Getppid() != parent {
				os.Exit(ExitInterrupted)
			}
		}
	}()
}
