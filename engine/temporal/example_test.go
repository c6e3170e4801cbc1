package temporal_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine/temporal"
	"github.com/sotlabs/sot/llm/stack"
)

// A library user sends a stack's calls to Temporal workers by putting a
// Remote where the stack's providers would be: the stack's journal, cache,
// meter and schema check stay in this process. (Start the workers with
// `sot worker`, or temporal.NewWorker in a process of your own.)
func ExampleNewRemote() {
	cfg := config.Defaults()
	cfg.Executor = config.Executor{Kind: config.ExecutorTemporal, Address: "127.0.0.1:7233", TaskQueue: "sot"}
	e := temporal.Settings(cfg.Executor)
	c, err := temporal.Dial(e, os.Getenv, slog.Default())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	blobs, err := temporal.OpenBlobs(context.Background(), e, os.Getenv)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer blobs.Close()
	remote := temporal.NewRemote(c, blobs, e.TaskQueue, temporal.RunInput{MaxCalls: 100}, e.MaxInFlight)
	remote.Attach("my-tool run-1", nil) // the workflow's name: the same name joins it again
	st, err := stack.New(&cfg, stack.Options{Getenv: os.Getenv, Backend: remote})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	// st is an llm.Provider: give it to an engine.Local, or to a scenario
	// through scenario.Options.NewStack, and call remote.Finish when done.
	_ = remote.Finish(context.Background())
}
