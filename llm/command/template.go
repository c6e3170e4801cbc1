package command

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"
)

// llmTemplate is the llm CLI template sot writes for a call. llm reads it
// with PyYAML and refuses keys it does not know.
type llmTemplate struct {
	System string `yaml:"system"`
}

// encodeTemplate renders an llm template whose system prompt is system.
//
// llm expands $name and ${name} in a template's system prompt (Python's
// string.Template) and fails on a name it does not know, so every "$" is
// doubled, which string.Template turns back into one.
//
// The prompt is written as a double-quoted scalar (JSON style), not as a
// block scalar: a literal block cannot hold a carriage return, a control
// character, U+2028 or U+0085, nor start with spaces or a tab the way go-yaml
// writes it, and PyYAML refuses the raw control characters outright. In a
// double-quoted scalar all of them are escapes. YAML text is Unicode, so
// bytes that are not valid UTF-8 become U+FFFD first.
func encodeTemplate(system string) ([]byte, error) {
	system = strings.ToValidUTF8(system, "\uFFFD")
	system = strings.ReplaceAll(system, "$", "$$")
	return yaml.MarshalWithOptions(llmTemplate{System: system}, yaml.JSON())
}

// The names of the files in a call's private directory.
const (
	templateName = "system.yaml"
	plainName    = "system.txt"
)

// systemFiles are the files that hold one call's system prompt.
type systemFiles struct {
	dir      string // the private directory that holds both, mode 0700
	template string // the llm template, for -t
	plain    string // the plain text, for SOT_SYSTEM_FILE
}

// writeSystem writes the system prompt of one call into a new private
// directory in os.TempDir(): as an llm template and as plain text, each
// with mode 0600. The caller removes them with remove.
func writeSystem(system string) (_ *systemFiles, err error) {
	tmpl, err := encodeTemplate(system)
	if err != nil {
		return nil, fmt.Errorf("encode the template: %w", err)
	}
	dir, err := os.MkdirTemp("", "sot-command-")
	if err != nil {
		return nil, err
	}
	f := &systemFiles{dir: dir, template: filepath.Join(dir, templateName), plain: filepath.Join(dir, plainName)}
	defer func() {
		if err != nil {
			f.remove()
		}
	}()
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, err
	}
	if err := writePrivate(f.template, tmpl); err != nil {
		return nil, err
	}
	if err := writePrivate(f.plain, []byte(system)); err != nil {
		return nil, err
	}
	return f, nil
}

// writePrivate creates the file name with mode 0600 (whatever the umask)
// and writes data to it.
func writePrivate(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	err = errors.Join(err, f.Chmod(0o600), f.Close())
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// remove deletes the directory and the files in it. Nothing is left to do
// if that fails: the directory is the user's own, mode 0700.
func (f *systemFiles) remove() { os.RemoveAll(f.dir) }
