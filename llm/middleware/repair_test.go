package middleware

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

var findingsSchema = json.RawMessage(`{"type":"object","additionalProperties":false,"required":["findings"],
 "properties":{"findings":{"type":"array","items":{"$ref":"#/$defs/finding"}},"summary":{"type":"string"}},
 "$defs":{"finding":{"type":"object","additionalProperties":false,"required":["line","severity","claim"],
  "properties":{"line":{"type":"integer"},"severity":{"type":"string","enum":["must-fix","should-fix","consider"]},
   "claim":{"type":"string"},"confident":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"}}}}}}`)

var linesSchema = json.RawMessage(`{"type":"object","properties":{"lines":{"type":"array","items":{"type":"integer"}}},"additionalProperties":false}`)

// Answers in shape but for what has one reading are mended; anything else
// is left to validation.
func TestRepair(t *testing.T) {
	for _, tc := range []struct {
		name, in, out string
		notes         int
		schema        json.RawMessage // findingsSchema when nil
	}{
		{"valid stays untouched", `{"findings":[]}`, "", 0, nil},
		{"an extra key at the top", `{"findings":[],"notes":"looked at it"}`, `{"findings":[]}`, 1, nil},
		{"an extra key inside a list", `{"findings":[{"line":3,"severity":"consider","claim":"x","why":"y"}]}`,
			`{"findings":[{"claim":"x","line":3,"severity":"consider"}]}`, 1, nil},
		{"a number as a string", `{"findings":[{"line":"12","severity":"consider","claim":"x"}]}`,
			`{"findings":[{"claim":"x","line":12,"severity":"consider"}]}`, 1, nil},
		{"a boolean as a string", `{"findings":[{"line":1,"severity":"consider","claim":"x","confident":"true"}]}`,
			`{"findings":[{"claim":"x","confident":true,"line":1,"severity":"consider"}]}`, 1, nil},
		{"a lone object for a list", `{"findings":{"line":1,"severity":"consider","claim":"x"}}`,
			`{"findings":[{"claim":"x","line":1,"severity":"consider"}]}`, 1, nil},
		{"a lone string for a list", `{"findings":[{"line":1,"severity":"consider","claim":"x","tags":"auth"}]}`,
			`{"findings":[{"claim":"x","line":1,"severity":"consider","tags":["auth"]}]}`, 1, nil},
		{"null for an optional key", `{"findings":[],"summary":null}`, `{"findings":[]}`, 1, nil},
		{"an enum value in another case", `{"findings":[{"line":1,"severity":"Must-Fix","claim":"x"}]}`,
			`{"findings":[{"claim":"x","line":1,"severity":"must-fix"}]}`, 1, nil},
		{"text that is no number stays", `{"findings":[{"line":"twelve","severity":"consider","claim":"x"}]}`, "", 0, nil},
		{"a number in another notation stays", `{"findings":[{"line":"0x10","severity":"consider","claim":"x"}]}`, "", 0, nil},
		{"a fraction for an integer stays", `{"findings":[{"line":"3.5","severity":"consider","claim":"x"}]}`, "", 0, nil},
		{"a number where a string is wanted stays", `{"findings":[{"line":1,"severity":"consider","claim":42}]}`, "", 0, nil},
		{"yes for a boolean stays", `{"findings":[{"line":1,"severity":"consider","claim":"x","confident":"yes"}]}`, "", 0, nil},
		{"null for a required key stays", `{"findings":null}`, "", 0, nil},
		{"a missing required key is not invented", `{"summary":"x"}`, "", 0, nil},
		{"an extra key beside a missing required key is dropped, the rest left to validation", `{"summary":"x","notes":"y"}`, "", 1, nil},
		{"a number for a number-or-list stays", `3`, "", 0, json.RawMessage(`{"type":["number","array"],"items":{"type":"number"}}`)},
		{"an extra key under a schema without a type", `{"a":{"b":1,"c":2}}`, `{"a":{"b":1}}`, 1,
			json.RawMessage(`{"properties":{"a":{"properties":{"b":{"type":"integer"}},"additionalProperties":false}}}`)},
		{"a string for a list of objects stays", `{"findings":"all fine"}`, "", 0, nil},
		{"a number for a list of strings stays", `{"findings":[{"line":1,"severity":"consider","claim":"x","tags":7}]}`, "", 0, nil},
		{"a number as a string for a list of integers", `{"lines":"3"}`, `{"lines":[3]}`, 2, linesSchema},
		{"text for a list of integers stays", `{"lines":"three"}`, "", 0, linesSchema},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := tc.schema
			if schema == nil {
				schema = findingsSchema
			}
			out, notes := Repair(schema, json.RawMessage(tc.in))
			if len(notes) != tc.notes {
				t.Errorf("notes %q, want %d", notes, tc.notes)
			}
			if tc.out == "" {
				if out != nil && Validate(schema, out) == nil {
					t.Errorf("mended into %s, want nothing that validates", out)
				}
				return
			}
			if string(out) != tc.out {
				t.Errorf("mended into %s, want %s", out, tc.out)
			}
			if err := Validate(schema, out); err != nil {
				t.Errorf("the mended answer does not validate: %v", err)
			}
		})
	}
}

// An answer with one harmless extra key is taken as it is, mended, without
// asking again; the request keeps the strict schema and the response says
// what was mended.
func TestSchemaMendsAnExtraKey(t *testing.T) {
	p, srv := backend(t, llmtest.Config{Rules: []llmtest.Rule{
		{JSON: map[string]any{"verdict": "yes", "score": "3", "notes": "I double-checked"}},
	}})
	resp := complete(t, CheckSchema(p), structured(1))
	if srv.Count() != 1 {
		t.Errorf("%d requests, want the answer mended without asking again", srv.Count())
	}
	if string(resp.JSON) != `{"score":3,"verdict":"yes"}` {
		t.Errorf("JSON = %s", resp.JSON)
	}
	if len(resp.Repairs) != 2 || !strings.Contains(strings.Join(resp.Repairs, ";"), `"notes"`) {
		t.Errorf("repairs %q", resp.Repairs)
	}
	if !strings.Contains(string(srv.Requests()[0].Body), `"additionalProperties":false`) {
		t.Errorf("the request lost its strict schema")
	}
	var back llm.Response
	b, _ := json.Marshal(resp)
	if json.Unmarshal(b, &back) != nil || len(back.Repairs) != 2 {
		t.Errorf("the repairs are not in the journaled form: %s", b)
	}
}

// CheckSchema mends an answer that has one reading without asking again,
// leaves an answer that validates as it came, and asks once more, as
// before, only when the mended answer still does not validate.
func TestCheckSchemaMends(t *testing.T) {
	const valid = `{"findings":[{"line":1,"severity":"consider","claim":"x"}]}`
	for _, tc := range []struct {
		name    string
		answers []string // the provider's answers, in order
		calls   int      // requests the provider gets
		json    string   // the answer passed on; "" for a *SchemaError
		repairs int
	}{
		{"an answer that validates is passed on as it came", []string{valid}, 1, valid, 0},
		{"an extra key at the top", []string{`{"findings":[],"notes":"x"}`}, 1, `{"findings":[]}`, 1},
		{"an extra key in an object of a list", []string{`{"findings":[{"line":1,"severity":"consider","claim":"x","why":"y"}]}`}, 1,
			`{"findings":[{"claim":"x","line":1,"severity":"consider"}]}`, 1},
		{`"3" for an integer`, []string{`{"findings":[{"line":"3","severity":"consider","claim":"x"}]}`}, 1,
			`{"findings":[{"claim":"x","line":3,"severity":"consider"}]}`, 1},
		{"a lone object for a list", []string{`{"findings":{"line":1,"severity":"consider","claim":"x"}}`}, 1,
			`{"findings":[{"claim":"x","line":1,"severity":"consider"}]}`, 1},
		{"null for an optional key", []string{`{"findings":[],"summary":null}`}, 1, `{"findings":[]}`, 1},
		{"an extra key in prose and a fenced block", []string{"Here you go:\n\n```json\n{\"findings\": [], \"notes\": \"x\"}\n```\n\nAnything else?"}, 1,
			`{"findings":[]}`, 1},
		{"still invalid when mended, then valid", []string{`{"notes":"x"}`, valid}, 2, valid, 0},
		{"still invalid when mended, then mended", []string{`{"findings":"all fine"}`, `{"findings":[],"notes":"x"}`}, 2, `{"findings":[]}`, 1},
		{"invalid twice", []string{`{"findings":[{"line":"twelve","severity":"consider","claim":"x"}]}`, `{"summary":"none"}`}, 2, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var reqs []*llm.Request
			p := llm.ProviderFunc(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
				reqs = append(reqs, req)
				return &llm.Response{Text: tc.answers[min(len(reqs), len(tc.answers))-1]}, nil
			})
			req := ask(1)
			req.Schema = &llm.Schema{Name: "findings", JSON: findingsSchema}
			resp, err := CheckSchema(p).Complete(context.Background(), req)
			if len(reqs) != tc.calls {
				t.Errorf("%d requests, want %d", len(reqs), tc.calls)
			}
			for _, r := range reqs {
				if string(r.Schema.JSON) != string(findingsSchema) {
					t.Errorf("a request went out without the strict schema: %s", r.Schema.JSON)
				}
			}
			if tc.calls == 2 && !strings.Contains(reqs[1].LastUser(), "does not validate") {
				t.Errorf("the second request does not carry the validation error: %q", reqs[1].LastUser())
			}
			if tc.json == "" {
				var se *SchemaError
				if !errors.As(err, &se) || resp != nil {
					t.Fatalf("resp %v, err %v; want a *SchemaError", resp, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(resp.JSON) != tc.json {
				t.Errorf("JSON %s, want %s", resp.JSON, tc.json)
			}
			if len(resp.Repairs) != tc.repairs {
				t.Errorf("repairs %q, want %d", resp.Repairs, tc.repairs)
			}
			if want := max(tc.calls, 1); calls(resp) != want {
				t.Errorf("the answer counts %d call(s), want %d", calls(resp), want)
			}
		})
	}
}

// A mended answer is journaled with its repairs, and a resumed run gets
// them back with the mended JSON, without a call.
func TestJournalKeepsRepairs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run", "journal.jsonl")
	p, srv := backend(t, llmtest.Config{Rules: []llmtest.Rule{
		{JSON: map[string]any{"verdict": "yes", "score": "3", "notes": "I double-checked"}},
	}})
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	first := complete(t, j.Wrap(CheckSchema(p)), structured(1))
	j.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"repairs":[`) {
		t.Errorf("the journal does not hold the repairs: %s", b)
	}

	j2, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	again := complete(t, j2.Wrap(CheckSchema(p)), structured(1))
	if srv.Count() != 1 || again.Source != llm.SourceJournal {
		t.Errorf("%d requests, source %q: want the journaled answer", srv.Count(), again.Source)
	}
	if string(again.JSON) != string(first.JSON) || strings.Join(again.Repairs, ";") != strings.Join(first.Repairs, ";") {
		t.Errorf("replayed %s %q, want %s %q", again.JSON, again.Repairs, first.JSON, first.Repairs)
	}
}

// A mended answer is logged at Debug, which --verbose shows, with the call
// and what was mended; at Info (the default logger's level, a library
// caller's) and above nothing is logged.
func TestMendIsLogged(t *testing.T) {
	for _, tc := range []struct {
		level  slog.Level
		logged bool
	}{
		{slog.LevelDebug, true},
		{slog.LevelInfo, false},
		{slog.LevelWarn, false},
	} {
		t.Run(tc.level.String(), func(t *testing.T) {
			var buf bytes.Buffer
			prev := slog.Default()
			slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tc.level})))
			t.Cleanup(func() { slog.SetDefault(prev) })
			p := llm.ProviderFunc(func(context.Context, *llm.Request) (*llm.Response, error) {
				return &llm.Response{Text: `{"findings":[],"notes":"x"}`}, nil
			})
			req := ask(7)
			req.Schema = &llm.Schema{Name: "findings", JSON: findingsSchema}
			complete(t, CheckSchema(p), req)
			got := buf.String()
			if logged := strings.Contains(got, "structured answer mended") && strings.Contains(got, "call=test/7") &&
				strings.Contains(got, `\"notes\"`); logged != tc.logged {
				t.Errorf("logged %q, want a line: %v", got, tc.logged)
			}
		})
	}
}

// When an answer still does not validate once mended, the second request
// names what the model must still change, not what sot mends or ignores
// on its own (the validator reports one error, and the first it finds in
// the answer as it came is the extra key or the "3"); a *SchemaError
// names it too.
func TestCheckSchemaAsksForWhatStillFails(t *testing.T) {
	for _, tc := range []struct {
		name, first string
		want        string // in the second request
	}{
		{"an extra key beside a missing required key", `{"notes":"x"}`, `missing properties: ["findings"]`},
		{"a number as a string and an extra key beside a missing required key",
			`{"findings":[{"line":"3","severity":"consider","why":"y"}],"notes":"x"}`, `missing properties: ["claim"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := Validate(findingsSchema, json.RawMessage(tc.first)); err == nil || strings.Contains(err.Error(), tc.want) {
				t.Fatalf("the answer as it came fails with %v: the case does not test the mended error", err)
			}
			var reqs []*llm.Request
			p := llm.ProviderFunc(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
				reqs = append(reqs, req)
				return &llm.Response{Text: tc.first}, nil
			})
			req := ask(1)
			req.Schema = &llm.Schema{Name: "findings", JSON: findingsSchema}
			_, err := CheckSchema(p).Complete(context.Background(), req)
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			again := reqs[1].LastUser()
			if !strings.Contains(again, tc.want) || strings.Contains(again, "additional") || strings.Contains(again, `has type "string"`) {
				t.Errorf("the second request says %q, want only %q", again, tc.want)
			}
			var se *SchemaError
			if !errors.As(err, &se) || !strings.Contains(se.Reason, tc.want) {
				t.Errorf("err %v, want a *SchemaError naming %q", err, tc.want)
			}
		})
	}
}
