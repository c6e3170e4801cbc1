package engine

import "errors"

// UserError is a problem with what the user asked for (a flag, a field of a
// context file, a file given as material, an output directory), as opposed
// to a failure of the machine or a provider. Every front end reports it as
// a usage error: the CLI exits 2, a server answers 400. Field names the
// flag or field at fault, when one is; Err, when set, is the cause callers
// may still test with errors.Is.
type UserError struct {
	Field string
	Msg   string
	Err   error
}

func (e *UserError) Error() string {
	msg := e.Msg
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if e.Field == "" {
		return msg
	}
	return e.Field + ": " + msg
}

func (e *UserError) Unwrap() error { return e.Err }

// AsUserError marks err as the user's to fix, keeping its text and its
// chain. A nil err stays nil; an error already marked is returned as it is.
func AsUserError(err error) error {
	if err == nil || IsUserError(err) {
		return err
	}
	return &UserError{Err: err}
}

// IsUserError reports whether err is, or wraps, a UserError.
func IsUserError(err error) bool {
	var ue *UserError
	return errors.As(err, &ue)
}
