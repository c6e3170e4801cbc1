package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// The middleware puts each held text back where its stand-in is, in the
// body's order whatever the order of holding; a short text is not held;
// and a body that does not hold each stand-in exactly once is refused
// before anything is sent, with ErrHeldTexts.
func TestHeldTexts(t *testing.T) {
	long := func(c string) string { return strings.Repeat(c, heldFrom) }
	tests := []struct {
		name string
		// body makes the body the SDK would send, from the values Hold
		// returned for the texts.
		texts []string
		body  func(h *HeldTexts, got []string) string
		want  []string // the decoded array, or nil for ErrHeldTexts
	}{
		{
			name:  "in order",
			texts: []string{long("a"), "short", long("\"")},
			body:  func(_ *HeldTexts, got []string) string { return quote(got...) },
			want:  []string{long("a"), "short", long("\"")},
		},
		{
			name:  "the body lists them the other way round",
			texts: []string{long("a"), long("b")},
			body:  func(_ *HeldTexts, got []string) string { return quote(got[1], got[0]) },
			want:  []string{long("b"), long("a")},
		},
		{
			name:  "eleven texts, stand-ins 1 and 10 both there",
			texts: []string{long("0"), long("1"), long("2"), long("3"), long("4"), long("5"), long("6"), long("7"), long("8"), long("9"), long("x")},
			body:  func(_ *HeldTexts, got []string) string { return quote(got...) },
			want:  []string{long("0"), long("1"), long("2"), long("3"), long("4"), long("5"), long("6"), long("7"), long("8"), long("9"), long("x")},
		},
		{
			name:  "a short text names a stand-in",
			texts: []string{long("a")},
			body:  func(h *HeldTexts, got []string) string { return quote(got[0], "see "+h.standIn(0)) },
		},
		{
			name:  "a stand-in is missing",
			texts: []string{long("a"), long("b")},
			body:  func(_ *HeldTexts, got []string) string { return quote(got[0]) },
		},
		{
			name:  "a stand-in is there twice",
			texts: []string{long("a")},
			body:  func(_ *HeldTexts, got []string) string { return quote(got[0], got[0]) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHeldTexts()
			var got []string
			for _, s := range tt.texts {
				got = append(got, h.Hold(s))
			}
			if got[0] == tt.texts[0] {
				t.Fatal("a long text was not held")
			}
			req, err := http.NewRequest(http.MethodPost, "http://example.invalid/", strings.NewReader(tt.body(h, got)))
			if err != nil {
				t.Fatal(err)
			}
			var sent []byte
			_, err = h.Middleware(req, func(r *http.Request) (*http.Response, error) {
				sent, _ = io.ReadAll(r.Body)
				if r.ContentLength != int64(len(sent)) {
					t.Errorf("Content-Length %d for a body of %d bytes", r.ContentLength, len(sent))
				}
				return nil, nil
			})
			if tt.want == nil {
				if !errors.Is(err, ErrHeldTexts) || sent != nil {
					t.Fatalf("err %v, sent %d bytes; want ErrHeldTexts and nothing sent", err, len(sent))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			if err := json.Unmarshal(sent, &out); err != nil {
				t.Fatalf("the body sent is not JSON: %v", err)
			}
			if len(out) != len(tt.want) {
				t.Fatalf("%d texts sent, want %d", len(out), len(tt.want))
			}
			for i := range out {
				if out[i] != tt.want[i] {
					t.Errorf("text %d: %.20q…, want %.20q…", i, out[i], tt.want[i])
				}
			}
		})
	}
}

func TestNilHeldTextsHoldNothing(t *testing.T) {
	var h *HeldTexts
	s := strings.Repeat("a", 2*heldFrom)
	if h.Hold(s) != s {
		t.Error("a nil HeldTexts held a text")
	}
}

// quote is a JSON array of the strings.
func quote(ss ...string) string {
	b, _ := json.Marshal(ss)
	return string(b)
}

// A call whose body did not hold its stand-ins goes again, once, without
// any; one that did is not repeated.
func TestHoldingFallsBackOnce(t *testing.T) {
	for _, refused := range []bool{false, true} {
		var calls []bool // whether each call held texts
		resp, err := Holding(func(h *HeldTexts) (*Response, error) {
			calls = append(calls, h != nil)
			if h != nil && refused {
				return nil, fmt.Errorf("text 0: %w", ErrHeldTexts)
			}
			return &Response{Text: "ok"}, nil
		})
		want := []bool{true}
		if refused {
			want = []bool{true, false}
		}
		if err != nil || resp.Text != "ok" || !slices.Equal(calls, want) {
			t.Errorf("refused %v: calls holding %v, want %v (err %v)", refused, calls, want, err)
		}
	}
}
