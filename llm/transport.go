package llm

import (
	"context"
	"errors"
	"net"
	"strings"
)

// IsTimeout reports whether err is a deadline or a network timeout.
func IsTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TransportMessage is the innermost explanation of a connection failure.
func TransportMessage(err error) string {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Error()
	}
	return err.Error()
}

// Clip shortens s to one line of at most 300 bytes, for error messages.
func Clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		cut := 300
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
