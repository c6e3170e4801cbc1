package middleware

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sotlabs/sot/llm"
)

// SchemaError is a structured answer that failed validation twice.
// It unwraps to llm.ErrSchema.
type SchemaError struct {
	Label  string
	Model  string
	Reason string // the validation error of the last answer
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("%s: %s gave an answer that does not match the schema, twice: %s", e.Label, e.Model, e.Reason)
}

// Unwrap returns llm.ErrSchema.
func (e *SchemaError) Unwrap() error { return llm.ErrSchema }

var compiled sync.Map // schema text -> *jsonschema.Resolved or error

func resolve(raw json.RawMessage) (*jsonschema.Resolved, error) {
	key := string(raw)
	if v, ok := compiled.Load(key); ok {
		if err, isErr := v.(error); isErr {
			return nil, err
		}
		return v.(*jsonschema.Resolved), nil
	}
	var res *jsonschema.Resolved
	s, err := decodeSchema(raw)
	if err == nil {
		res, err = s.Resolve(nil)
	}
	if err != nil {
		err = fmt.Errorf("invalid JSON Schema: %w", err)
		compiled.Store(key, err)
		return nil, err
	}
	compiled.Store(key, res)
	return res, nil
}

// Validate checks a JSON document against a JSON Schema.
func Validate(schema, doc json.RawMessage) error {
	res, err := resolve(schema)
	if err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return res.Validate(v)
}

// CheckSchema validates structured answers against the request's schema.
// An answer that validates is passed on as it came. One that does not is
// first mended where that has one reading (Repair: a key the schema does
// not have ignored, "3" read as 3, a lone object as a list of one); the
// mended JSON is passed on with its Repairs, which the journal keeps and
// --verbose logs. The request keeps its strict schema. An answer that
// still does not validate is asked for once more, with the validation
// error of the mended answer (what the model must still change); if the
// second answer fails too (mended or not) the call fails with a
// *SchemaError. An invalid answer is never passed on.
//
// A round of tool calls (Response.ToolCalls) is not the answer yet: it is
// passed on unchecked, and the answer the loop ends with is checked when
// it comes.
func CheckSchema(next llm.Provider) llm.Provider {
	return llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		if req.Schema == nil {
			return next.Complete(ctx, req)
		}
		if _, err := resolve(req.Schema.JSON); err != nil {
			return nil, fmt.Errorf("%s: %w", req.Label, err)
		}
		resp, err := next.Complete(ctx, req)
		if err != nil {
			return nil, err
		}
		if len(resp.ToolCalls) > 0 {
			return resp, nil
		}
		problem := check(req.Schema.JSON, resp)
		if problem == nil {
			return resp, nil
		}
		if problem = mend(req, resp, problem); problem == nil {
			return resp, nil
		}
		ask := "That answer does not validate against the required JSON Schema: " +
			problem.Error() + "\nReply again with only one JSON value that validates against the schema, and nothing else."
		if cut(resp) {
			// Asked again as it was, the model would run into the same
			// limit: it is told to be brief.
			ask = fmt.Sprintf("That answer was cut off at the output limit (%s) before its JSON was complete. "+
				"Reply again with one complete JSON value that validates against the schema and nothing else, written more briefly so that it fits.", limit(req))
		}
		repair := req.Clone()
		repair.Messages = append(repair.Messages,
			llm.Message{Role: llm.RoleAssistant, Content: orPlaceholder(resp.Text)},
			llm.Message{Role: llm.RoleUser, Content: ask})
		second, err := next.Complete(ctx, repair)
		if err != nil {
			return nil, err
		}
		second.Usage = second.Usage.Add(resp.Usage)
		second.Calls = calls(resp) + calls(second)
		if len(second.ToolCalls) > 0 {
			// Asked again, the model chose to look first: its calls go
			// back to the caller's loop.
			return second, nil
		}
		if problem = check(req.Schema.JSON, second); problem != nil {
			if problem = mend(req, second, problem); problem != nil {
				reason := problem.Error()
				if cut(second) {
					reason = fmt.Sprintf("the answer was cut off at the output limit (%s) before its JSON was complete", limit(req))
				}
				return nil, &SchemaError{Label: req.Label, Model: req.Model, Reason: reason}
			}
		}
		return second, nil
	})
}

// mend repairs resp's structured answer where that has one reading
// (Repair). When the mended answer validates, resp holds it and its
// notes, which are logged at Debug (--verbose shows them; a library caller
// with the default logger sees nothing), and mend returns
// nil. Otherwise resp is left as it came and mend returns what still
// fails: the mended answer's validation error, so that a second request
// names what the model must change rather than what sot would have
// ignored, or problem when nothing could be mended.
func mend(req *llm.Request, resp *llm.Response, problem error) error {
	if resp.JSON == nil {
		return problem
	}
	fixed, notes := Repair(req.Schema.JSON, resp.JSON)
	if fixed == nil {
		return problem
	}
	if err := Validate(req.Schema.JSON, fixed); err != nil {
		return err
	}
	resp.JSON, resp.Repairs = fixed, notes
	slog.Debug("structured answer mended", "call", req.Label, "model", req.Model, "repairs", strings.Join(notes, "; "))
	return nil
}

func calls(r *llm.Response) int { return max(r.Calls, 1) }

// cut reports whether the answer stopped at its output limit.
func cut(r *llm.Response) bool { return r.FinishReason == llm.FinishLength }

// limit names the request's output limit for a message.
func limit(req *llm.Request) string {
	if req.MaxTokens > 0 {
		return fmt.Sprintf("%d tokens", req.MaxTokens)
	}
	return "the provider's default"
}

func orPlaceholder(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(empty answer)"
	}
	return s
}

// check validates resp against schema, filling resp.JSON from the text when the
// backend did not.
func check(schema json.RawMessage, resp *llm.Response) error {
	if len(bytes.TrimSpace(resp.JSON)) == 0 {
		resp.JSON = llm.ExtractJSON(resp.Text)
	}
	if resp.JSON == nil {
		return fmt.Errorf("the answer contains no JSON value")
	}
	return Validate(schema, resp.JSON)
}
