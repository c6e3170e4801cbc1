package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/middleware"
	"github.com/sotlabs/sot/llm/openai"
)

func task(id, group, model, user string) *Task {
	return &Task{ID: id, Group: group, Request: &llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Content: user}}}}
}

// A task whose model cannot be used at all runs again on the fallback
// model, with one warning for its group, and says so in its result; a task
// that merely failed does not; the tasks given are left as they were.
func TestLocalFallsBackOnUnusableModels(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{
		{Model: "retired", Fault: llmtest.Fault401},
		{User: "flaky", Fault: llmtest.Fault500},
	}})
	defer srv.Close()
	backend, err := openai.New(openai.Config{Name: "openai", BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-engine-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	x := &Local{Provider: middleware.Limit(backend, 4, 0), Fallback: "default", Hooks: Hooks{Warn: func(s string) { warnings = append(warnings, s) }}}
	tasks := []*Task{
		task("security/a", "security", "retired", "review a"),
		task("security/b", "security", "retired", "review b"),
		task("testing/a", "testing", "current", "review a"),
		task("flaky/a", "flaky", "current", "flaky"),
	}
	results := x.Execute(context.Background(), tasks)
	type got struct {
		Model    string
		FellFrom string
		Failed   bool
	}
	var gots []got
	for _, r := range results {
		g := got{Model: r.Task.Request.Model, Failed: r.Err != nil}
		if r.FellBack != nil {
			g.FellFrom = r.FellBack.From
			if !errors.Is(r.FellBack.Err, llm.ErrAuth) {
				t.Errorf("%s fell back for %v, want the rejected key", r.Task.ID, r.FellBack.Err)
			}
		}
		gots = append(gots, g)
	}
	want := []got{{"default", "retired", false}, {"default", "retired", false}, {"current", "", false}, {"current", "", true}}
	if diff := cmp.Diff(want, gots); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `model "retired" for security is unavailable`) || !strings.Contains(warnings[0], "using the session default default") {
		t.Errorf("warnings %q, want one for the security group", warnings)
	}
	if tasks[0].Request.Model != "retired" {
		t.Error("the task given was changed")
	}
	if err := SetupFailure(results); err != nil {
		t.Errorf("SetupFailure = %v with calls that ran", err)
	}
}

// A step in which every call failed on its setup (keys, endpoints) did not
// start; one where any call got further is a partial step.
func TestSetupFailure(t *testing.T) {
	auth := &llm.Error{Kind: llm.ErrAuth, Message: "the API key was rejected"}
	tests := []struct {
		name    string
		errs    []error
		failure bool
	}{
		{"none", nil, false},
		{"all setup", []error{auth, &llm.Error{Kind: llm.ErrMissingKey}}, true},
		{"one answered", []error{auth, nil}, false},
		{"one failed otherwise", []error{auth, &llm.Error{Kind: llm.ErrUnavailable}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rs []Result
			for _, err := range tt.errs {
				rs = append(rs, Result{Err: err})
			}
			if got := SetupFailure(rs) != nil; got != tt.failure {
				t.Errorf("SetupFailure = %v, want failure %v", SetupFailure(rs), tt.failure)
			}
		})
	}
}

// The roster: a persona's own model, then its pin, then the pool in turn
// over the others by id, then the default; what cannot be resolved falls
// back to the default, and a pin of an absent persona is pointed out.
func TestRosterAssign(t *testing.T) {
	resolve := func(m string) (string, error) {
		if !strings.Contains(m, ":") {
			return "", errors.New("names no provider")
		}
		return m, nil
	}
	tests := []struct {
		name     string
		roster   Roster
		own      map[string]string
		want     map[string]string
		warnings int
	}{
		{"default", Roster{Default: "openai:d"}, nil,
			map[string]string{"a": "openai:d", "b": "openai:d", "c": "openai:d"}, 0},
		{"pool in turn", Roster{Default: "openai:d", Pool: []string{"openai:x", "anthropic:y"}}, nil,
			map[string]string{"a": "openai:x", "b": "anthropic:y", "c": "openai:x"}, 0},
		{"pins and own", Roster{Default: "openai:d", Pins: map[string]string{"b": "openai:p", "z": "openai:q"}, Pool: []string{"openai:x"}, PinsField: "specialist_models"},
			map[string]string{"a": "anthropic:own"},
			map[string]string{"a": "anthropic:own", "b": "openai:p", "c": "openai:x"}, 1},
		{"unresolvable", Roster{Default: "openai:d", Pins: map[string]string{"a": "gemini-3"}}, nil,
			map[string]string{"a": "openai:d", "b": "openai:d", "c": "openai:d"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.roster.Resolve = resolve
			got, warnings := tt.roster.Assign([]string{"c", "a", "b"}, tt.own)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("models (-want +got):\n%s", diff)
			}
			if len(warnings) != tt.warnings {
				t.Errorf("warnings %q, want %d", warnings, tt.warnings)
			}
		})
	}
}

// Of the calls sharing a prefix at one provider, all but the first read it
// from the cache; a model without a price is named, not counted as free.
func TestEstimates(t *testing.T) {
	prices := llm.PriceTable{"openai:m": {Input: 1, CachedInput: 0.1, Output: 10}}
	calls := []Planned{
		{Model: "openai:m", InputTokens: 1000, PrefixTokens: 800, Prefix: "chunk 0"},
		{Model: "openai:m", InputTokens: 1000, PrefixTokens: 800, Prefix: "chunk 0"},
		{Model: "openai:m", InputTokens: 1000, PrefixTokens: 800, Prefix: "chunk 1"},
		{Model: "ollama:free", InputTokens: 1000, PrefixTokens: 800, Prefix: "chunk 0"},
	}
	e := Estimates(calls, prices, 100)
	if e.InputTokens != 4000 || e.CachedTokens != 800 {
		t.Errorf("input %d, cached %d; want 4000 and 800", e.InputTokens, e.CachedTokens)
	}
	want := (3000-800)*1e-6 + 800*0.1e-6 + 300*10e-6
	if d := e.Cost - want; d > 1e-12 || d < -1e-12 {
		t.Errorf("cost %v, want %v", e.Cost, want)
	}
	if !cmp.Equal(e.Unpriced, []string{"ollama:free"}) {
		t.Errorf("unpriced %v", e.Unpriced)
	}
}
