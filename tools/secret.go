package tools

import "fmt"

// errSecret says that a file is refused as credentials: a tool refuses
// exactly the files the material leaves out (material.IsSecretName).
func errSecret(p string) error {
	return fmt.Errorf("%s looks like a credentials file and is never shown to a model; do not ask for it again", p)
}
