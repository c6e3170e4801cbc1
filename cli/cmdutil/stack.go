package cmdutil

import (
	"fmt"
	"slices"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/llm/stack"
)

// StackOptions are what differs between the stacks commands build.
type StackOptions struct {
	// NoCache neither reads nor writes the response cache (--fresh).
	NoCache bool
}

// NewStack returns the function a scenario calls to build its provider
// stack, journaling to the path it is given. The stack logs through the
// factory's Logger as it is when the stack is built (a live display may
// have taken it over by then), and notes once per command.
func (f *Factory) NewStack(cfg *config.Config, so StackOptions) func(journal string) (*stack.Stack, error) {
	return func(journal string) (*stack.Stack, error) {
		return stack.New(cfg, stack.Options{JournalPath: journal, Getenv: f.Getenv, Logger: f.Logger, Note: f.Note, NoCache: so.NoCache})
	}
}

// MissingKey refuses, once and before any call, a run whose models include
// one whose provider has no key: every call on it would fail with the same
// error. It is a usage error that names the provider and what to set.
func (f *Factory) MissingKey(cfg *config.Config, models ...string) error {
	models = slices.Clone(models)
	slices.Sort(models)
	for _, m := range slices.Compact(models) {
		if err := stack.MissingKey(cfg, f.Getenv, m); err != nil {
			return AsUsage(fmt.Errorf("%w; no model was called (sot doctor checks every configured model)", err))
		}
	}
	return nil
}
