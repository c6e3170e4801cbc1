package jsonlayout

import (
	"encoding/json"
	"testing"
)

func TestLayout(t *testing.T) {
	src := `{"run_id": "r1", "empty": [], "none": {}, "sources": [{"id": "a", "tags": ["x", "y"]}, {"id": "b,\"}"}],
	"analysis": {"total": 2, "pairs": [{"s": {"n": 1}}, {"s": {"n": 2}}], "themes": ["p", "q"]}, "n": [1, 2]}`
	want := `{
  "run_id": "r1",
  "empty": [],
  "none": {},
  "sources": [
    {"id":"a","tags":["x","y"]},
    {"id":"b,\"}"}
  ],
  "analysis": {
    "total": 2,
    "pairs": [
      {"s":{"n":1}},
      {"s":{"n":2}}
    ],
    "themes": ["p","q"]
  },
  "n": [1,2]
}
`
	got, err := Layout([]byte(src), 2)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	var a, b any
	json.Unmarshal([]byte(src), &a)
	if err := json.Unmarshal(got, &b); err != nil {
		t.Fatalf("the layout is not JSON: %v", err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Error("the layout changed the document")
	}
	if _, err := Layout([]byte(`{"a":`), 2); err == nil {
		t.Error("a broken document was laid out")
	}
}
