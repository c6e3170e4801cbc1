package review

import (
	"errors"
	"os"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/material"
	"github.com/sotlabs/sot/persona"
)

// userCauses are the errors of other packages that are the caller's to
// fix: the material named, the models and personas asked for.
var userCauses = []error{
	material.ErrNotRepo, material.ErrBadRange, material.ErrBinary, material.ErrNotUTF8, material.ErrEmpty,
	material.ErrTooLarge, material.ErrNotAFile, material.ErrBlockingFile, material.ErrUnsupportedFile, os.ErrNotExist,
	llm.ErrUnknownProvider, llm.ErrBadModelRef, llm.ErrMissingKey, llm.ErrConfig, config.ErrNoModel,
	persona.ErrNeedsDecision, persona.ErrNoSuchSpecialist, persona.ErrNoSuchPerspective,
}

// userError marks err as an *engine.UserError when it is the caller's to
// fix, so that every front end reports it as a usage error without reading
// its text.
func userError(err error) error {
	for _, cause := range userCauses {
		if errors.Is(err, cause) {
			return engine.AsUserError(err)
		}
	}
	return err
}
