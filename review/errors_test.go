package review

import (
	"context"
	"errors"
	"testing"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/material"
)

// What the caller must fix comes back as an *engine.UserError, so a front
// end maps it to a usage error by type, never by reading its text; the
// cause stays testable with errors.Is.
func TestPrepareReportsUserErrorsByType(t *testing.T) {
	repo := benchRepo(t, 1, 10)
	tests := []struct {
		name  string
		edit  func(o *Options)
		cause error
	}{
		{"no model configured", func(o *Options) { o.Config.DefaultModel = "" }, nil},
		{"a model that is not provider:model", func(o *Options) { o.Model = "openai" }, nil},
		{"a bad diff range", func(o *Options) { o.Diff = "no-such-rev..HEAD" }, material.ErrBadRange},
		{"contradictory material", func(o *Options) { o.Content = "x"; o.Staged = true }, nil},
		{"an unknown specialist", func(o *Options) { o.Context.Specialists = "no-such-specialist" }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := benchOptionsAt(t, repo, "http://127.0.0.1:1", "openai:gpt-4.1")
			tt.edit(o)
			_, err := Prepare(context.Background(), o)
			if !engine.IsUserError(err) {
				t.Fatalf("err = %v (%T), want an *engine.UserError", err, err)
			}
			if tt.cause != nil && !errors.Is(err, tt.cause) {
				t.Errorf("err = %v, want it to wrap %v", err, tt.cause)
			}
		})
	}
}
