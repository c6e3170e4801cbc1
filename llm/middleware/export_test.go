package middleware

// DecodeSchema is decodeSchema, for the external tests.
var DecodeSchema = decodeSchema

// ReadsItself reports whether decodeSchema reads raw without the library.
func ReadsItself(raw []byte) bool {
	_, ok := readSchema(raw)
	return ok
}
