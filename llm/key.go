package llm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// keyVersion changes whenever the meaning of a cached answer changes.
const keyVersion = "sot-request-v1"

// Key returns a content address for the request: a hash of the provider, the
// model and everything sent to it. The label and the streaming callback are
// left out because they never change the answer.
func (r *Request) Key() string {
	c := *r
	c.Label = ""
	c.OnDelta = nil
	b, err := json.Marshal(&c)
	if err != nil { // cannot happen: every field marshals
		panic("llm: marshal request: " + err.Error())
	}
	h := sha256.New()
	h.Write([]byte(keyVersion))
	h.Write([]byte{0})
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}
