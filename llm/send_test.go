package llm

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// Gates nest: the outer one runs first, and one that fails stops the
// sending, and the gates after it.
func TestSendGatesNest(t *testing.T) {
	if err := Sending(context.Background()); err != nil {
		t.Fatalf("no gate: %v", err)
	}
	var ran []string
	stop := errors.New("stop")
	gate := func(name string, err error) func() error {
		return func() error { ran = append(ran, name); return err }
	}
	ctx := WithSendGate(WithSendGate(context.Background(), gate("outer", nil)), gate("inner", nil))
	if err := Sending(ctx); err != nil || !slices.Equal(ran, []string{"outer", "inner"}) {
		t.Errorf("ran %v (err %v), want outer then inner", ran, err)
	}
	ran = nil
	ctx = WithSendGate(WithSendGate(context.Background(), gate("outer", stop)), gate("inner", nil))
	if err := Sending(ctx); !errors.Is(err, stop) || !slices.Equal(ran, []string{"outer"}) {
		t.Errorf("ran %v (err %v), want outer's error and nothing after it", ran, err)
	}
}
