package llm

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"math"
)

// keyVersion changes whenever the meaning of a cached answer changes.
const keyVersion = "sot-request-v2"

// Key returns a content address for the request: a hash of the provider, the
// model and everything sent to it. The label and the streaming callback are
// left out because they never change the answer. Fields are hashed with
// length prefixes in a fixed order, so no two requests share a key by
// accident of concatenation, and no prompt is re-encoded to compute it.
func (r *Request) Key() string {
	h := sha256.New()
	str(h, keyVersion)
	str(h, r.Model)
	str(h, r.System)
	num(h, uint64(r.SharedPrefix))
	num(h, uint64(len(r.Messages)))
	for _, m := range r.Messages {
		str(h, string(m.Role))
		str(h, m.Content)
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
	return hex.EncodeToString(h.Sum(nil))
}

func num(h hash.Hash, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	h.Write(b[:])
}

func str(h hash.Hash, s string) {
	num(h, uint64(len(s)))
	h.Write([]byte(s))
}
