package run

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// StateFile is a run's record in its directory.
const StateFile = "run.json"

// State is a run's record: what a resumed run must repeat (its nonce and
// seed), what it wrote, and the scenario's own Payload, whose fields sit in
// run.json between the engine's.
type State struct {
	RunID   string
	Nonce   string
	Seed    int64
	Created time.Time
	// Payload is the scenario's part of the record: a pointer to a struct
	// whose JSON object is spliced into run.json. Its field names must not
	// be the engine's (run_id, nonce, seed, created, written, mac).
	Payload any
	// Written names the files the run wrote in its directory, so a later,
	// different run there removes those and nothing else.
	Written []string
	// MAC authenticates the record with the user's key (see Key): a
	// run.json that arrived with a repository, under a run id computed in
	// advance, must not choose the fence's nonce, have its journal replayed
	// as answers, or name models to run.
	MAC string

	// Authentic is set when the record was read and its MAC checked out.
	Authentic bool
}

// head is the engine's part of run.json, before the payload.
type head struct {
	RunID   string    `json:"run_id"`
	Nonce   string    `json:"nonce"`
	Seed    int64     `json:"seed"`
	Created time.Time `json:"created"`
}

// tail is the engine's part of run.json, after the payload.
type tail struct {
	Written []string `json:"written,omitempty"`
	MAC     string   `json:"mac,omitempty"`
}

// MarshalJSON writes the engine's fields with the payload's in between.
func (st State) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	for i, part := range []any{head{st.RunID, st.Nonce, st.Seed, st.Created}, st.Payload, tail{st.Written, st.MAC}} {
		if part == nil {
			continue
		}
		obj, err := json.Marshal(part)
		if err != nil {
			return nil, fmt.Errorf("record the run: %w", err)
		}
		inner := bytes.TrimSpace(obj)
		if string(inner) == "null" {
			continue
		}
		if len(inner) < 2 || inner[0] != '{' {
			return nil, fmt.Errorf("record the run: part %d is not a JSON object", i)
		}
		inner = inner[1 : len(inner)-1]
		if len(inner) == 0 {
			continue
		}
		if b.Len() == 0 {
			b.WriteByte('{')
		} else {
			b.WriteByte(',')
		}
		b.Write(inner)
	}
	if b.Len() == 0 {
		b.WriteByte('{')
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Sign sets st's MAC under key (none without a key).
func (st *State) Sign(key []byte) {
	st.MAC = ""
	if key != nil {
		st.MAC = st.mac(key)
	}
}

func (st State) mac(key []byte) string {
	st.MAC = ""
	b, _ := json.Marshal(st)
	return macOf(key, b)
}

// macOf signs the compact JSON of a record without its MAC.
func macOf(key, compact []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("sot-run-state-v1\n"))
	m.Write(compact)
	return hex.EncodeToString(m.Sum(nil))
}

// authentic checks a record's MAC against the bytes on disk, so that the
// check needs no knowledge of the payload: the record was signed compact,
// with the MAC as its last member, then indented.
func authentic(b []byte, mac string, key []byte) bool {
	var c bytes.Buffer
	if json.Compact(&c, b) != nil {
		return false
	}
	quoted, _ := json.Marshal(mac)
	suffix := append([]byte(`,"mac":`), quoted...)
	suffix = append(suffix, '}')
	body, ok := bytes.CutSuffix(c.Bytes(), suffix)
	if !ok {
		return false
	}
	return hmac.Equal([]byte(mac), []byte(macOf(key, append(body, '}'))))
}

// ParseState decodes a run's record, its payload into payload (a pointer;
// when nil, the payload is kept as read, so that saving the record again
// keeps it unchanged), and checks its MAC under key. Without a key nothing can be
// checked and no record counts as authentic: such a run can be neither
// resumed nor moderated, but nothing on disk is trusted. A record that does
// not decode is the zero State.
func ParseState(b []byte, payload any, key []byte) State {
	var h head
	var t tail
	if json.Unmarshal(b, &h) != nil || json.Unmarshal(b, &t) != nil {
		return State{}
	}
	if payload == nil {
		raw, err := rawPayload(b)
		if err != nil {
			return State{}
		}
		payload = raw
	} else if json.Unmarshal(b, payload) != nil {
		return State{}
	}
	st := State{RunID: h.RunID, Nonce: h.Nonce, Seed: h.Seed, Created: h.Created, Payload: payload, Written: t.Written, MAC: t.MAC}
	if key != nil && st.MAC != "" {
		st.Authentic = authentic(b, st.MAC, key)
	}
	return st
}

// jsonIndent is the run.json layout: indented by two spaces, one newline
// at the end.
func jsonIndent(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// rawObject is a payload kept as it was read, its members in order, when
// the reader does not know the scenario's type: writing the record back
// then keeps the payload byte for byte.
type rawObject []member

type member struct {
	key   string
	value json.RawMessage
}

func (o rawObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		if err := json.Compact(&b, m.value); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// engineKeys are the members of run.json that are the engine's.
var engineKeys = map[string]bool{"run_id": true, "nonce": true, "seed": true, "created": true, "written": true, "mac": true}

// rawPayload reads the members of a record that are not the engine's.
func rawPayload(b []byte) (rawObject, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out rawObject
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if !engineKeys[key] {
			out = append(out, member{key, v})
		}
	}
	return out, nil
}

// Resign signs a run record again with key, keeping everything else it
// holds: a record that travels to another machine (a run a worker drives
// for the user) is vouched for there by that machine's key. The caller
// must have checked the record under the key it came with; a record that
// does not decode is refused.
func Resign(b, key []byte) ([]byte, bool) {
	st := ParseState(b, nil, nil)
	if st.RunID == "" || key == nil {
		return nil, false
	}
	st.Sign(key)
	out, err := jsonIndent(st)
	if err != nil {
		return nil, false
	}
	return out, true
}

// Authentic reports whether the run record b is signed with key.
func Authentic(b, key []byte) bool { return ParseState(b, nil, key).Authentic }
