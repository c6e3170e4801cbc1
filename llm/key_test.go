package llm

import "testing"

func TestKey(t *testing.T) {
	base := func() *Request {
		return &Request{Model: "openai:gpt-4.1", System: "sys", SharedPrefix: 2, MaxTokens: 10, Temperature: Float(0.2),
			Messages: []Message{{Role: RoleUser, Content: "hi"}}, Schema: &Schema{Name: "s", JSON: []byte(`{"type":"object"}`)}}
	}
	k := base().Key()
	relabelled := base()
	relabelled.Label, relabelled.OnDelta = "another/step", func(string) {}
	if relabelled.Key() != k {
		t.Error("the label and the callback must not change the key")
	}
	changes := map[string]func(r *Request){
		"model":          func(r *Request) { r.Model = "openai:gpt-4.1-mini" },
		"system":         func(r *Request) { r.System = "sys2" },
		"shared prefix":  func(r *Request) { r.SharedPrefix = 3 },
		"message":        func(r *Request) { r.Messages[0].Content = "hello" },
		"role":           func(r *Request) { r.Messages[0].Role = RoleAssistant },
		"extra message":  func(r *Request) { r.Messages = append(r.Messages, Message{Role: RoleUser}) },
		"temperature":    func(r *Request) { r.Temperature = Float(0.3) },
		"no temperature": func(r *Request) { r.Temperature = nil },
		"max tokens":     func(r *Request) { r.MaxTokens = 11 },
		"schema":         func(r *Request) { r.Schema.JSON = []byte(`{"type":"array"}`) },
		"no schema":      func(r *Request) { r.Schema = nil },
		"boundary":       func(r *Request) { r.System, r.Messages[0].Content = "sy", "shi" },
		"tools": func(r *Request) {
			r.Tools = []Tool{{Name: "read_file", Description: "Read a file.", Parameters: []byte(`{"type":"object"}`)}}
		},
		"tool call": func(r *Request) {
			r.Messages = append(r.Messages, Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "read_file", Arguments: []byte(`{"path":"a.go"}`)}}})
		},
		"tool result": func(r *Request) {
			r.Messages = append(r.Messages, Message{Role: RoleTool, ToolCallID: "c1", Content: "x"})
		},
	}
	// The key of a request without tools is the one it had before tools
	// existed: journals and caches written by older versions still answer.
	if want := "bbe8c3cb193257902257bb1fb349e15640b61c30999ea012429c911227320140"; k != want {
		t.Errorf("key of a request without tools = %s, want %s", k, want)
	}
	for name, change := range changes {
		r := base()
		change(r)
		if r.Key() == k {
			t.Errorf("changing the %s must change the key", name)
		}
	}
}
