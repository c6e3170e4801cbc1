package llm

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"math"
)

// keyVersion changes whenever the meaning of a cached answer changes. v3:
// answers are stored with secrets masked, so older entries, which may hold
// a key a model quoted back, are never served.
const keyVersion = "sot-request-v3"

// Key returns a content address for the request: a hash of the provider, the
// model and everything sent to it. The label and the streaming callback are
// left out because they never change the answer. Fields are hashed with
// length prefixes in a fixed order, so no two requests share a key by
// accident of concatenation, and no prompt is re-encoded to compute it.
func (r *Request) Key() string {
	h := keyHash{Hash: sha256.New(), buf: make([]byte, 1<<10)}
	str(h, keyVersion)
	str(h, r.Model)
	str(h, r.System)
	num(h, uint64(r.SharedPrefix))
	num(h, uint64(len(r.Messages)))
	for _, m := range r.Messages {
		if len(m.ToolCalls) == 0 && m.ToolCallID == "" {
			str(h, string(m.Role))
			str(h, m.Content)
			continue
		}
		// A role never holds a NUL: a message with tool calls never
		// hashes like one without.
		str(h, string(m.Role)+"\x00tools")
		str(h, m.Content)
		str(h, m.ToolCallID)
		num(h, uint64(len(m.ToolCalls)))
		for _, c := range m.ToolCalls {
			str(h, c.ID)
			str(h, c.Name)
			str(h, string(c.Arguments))
		}
	}
	if r.Temperature != nil {
		num(h, 1)
		num(h, math.Float64bits(*r.Temperature))
	} else {
		num(h, 0)
	}
	num(h, uint64(r.MaxTokens))
	if r.Schema != nil {
		num(h, 1)
		str(h, r.Schema.Name)
		str(h, string(r.Schema.JSON))
	} else {
		num(h, 0)
	}
	// Tools come last, and only when offered, so a request without them
	// keeps the key it had before tools existed.
	if len(r.Tools) > 0 {
		str(h, "tools")
		num(h, uint64(len(r.Tools)))
		for _, t := range r.Tools {
			str(h, t.Name)
			str(h, t.Description)
			str(h, string(t.Parameters))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// keyHash feeds strings to the hash through one reused buffer instead of
// copying each prompt.
type keyHash struct {
	hash.Hash
	buf []byte
}

func num(h keyHash, v uint64) {
	h.Write(binary.LittleEndian.AppendUint64(h.buf[:0], v))
}

func str(h keyHash, s string) {
	num(h, uint64(len(s)))
	for len(s) > 0 {
		n := copy(h.buf, s)
		h.Write(h.buf[:n])
		s = s[n:]
	}
}
