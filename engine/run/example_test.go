package run_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/sotlabs/sot/engine/run"
)

// A scenario keeps its run in a directory: the id names the run by what it
// does, the record carries the scenario's payload, signed with the user's
// key, and a later process reads it back to resume.
func Example() {
	top, _ := os.MkdirTemp("", "sot-run-example")
	defer os.RemoveAll(top)

	id := run.NewID("example-v1")
	id.Add("question", "what changed?")
	dir := filepath.Join(top, ".sot", "answers", id.String())

	type answer struct {
		Question string `json:"question"`
	}
	layout := run.Layout{Owns: func(name string) bool { return name == "ANSWER.md" }}
	key := []byte("a key of at least thirty-two bytes, kept by the user")

	d, err := run.Open(top, dir, layout, key)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	st := run.State{RunID: id.String(), Seed: run.Seed(id.String()), Payload: &answer{Question: "what changed?"}}
	if err := d.Save(st); err != nil {
		fmt.Println(err)
		return
	}

	var a answer
	again := d.State(&a)
	fmt.Println(again.RunID == id.String(), again.Authentic, a.Question)
	fmt.Println(run.Check(top, dir, layout) == nil)
	// Output:
	// true true what changed?
	// true
}
