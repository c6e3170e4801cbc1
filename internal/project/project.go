// Package project locates the project a path belongs to: the nearest
// directory holding .git, .sot or .paw. Persona discovery, document paths
// and review output directories all name things from that top.
package project

import (
	"os"
	"path/filepath"
	"strings"
)

// markers are the entries whose presence makes a directory a project's top.
var markers = []string{".git", ".sot", ".paw"}

// Top returns the nearest directory, from dir upwards, that holds .git,
// .sot or .paw, made absolute. It reports false when there is none.
func Top(dir string) (string, bool) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for {
		for _, m := range markers {
			if _, err := os.Stat(filepath.Join(d, m)); err == nil {
				return d, true
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", false
		}
		d = parent
	}
}

// Within returns path relative to dir when it lies inside dir (or is dir,
// giving "."), and false otherwise. Both are compared as given.
func Within(dir, path string) (string, bool) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// Resolve returns path made absolute, with symbolic links resolved when it
// exists.
func Resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	return filepath.Clean(abs), nil
}

// ResolvedWithin reports whether path lies inside top once both are
// resolved (see Resolve), so that a link cannot take a path out of the
// project unseen; it returns the resolved path.
func ResolvedWithin(top, path string) (string, bool) {
	if top == "" {
		return "", false
	}
	p, err := Resolve(path)
	if err != nil {
		return "", false
	}
	t, err := Resolve(top)
	if err != nil {
		return p, false
	}
	_, ok := Within(t, p)
	return p, ok
}

// FromWorkDir names path relative to the current directory when it can be,
// and as given otherwise.
func FromWorkDir(path string) string {
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, path); err == nil {
			return rel
		}
	}
	return path
}
