package cmdutil

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sotlabs/sot/blob"
	"github.com/sotlabs/sot/internal/project"
)

// driveArgs are the arguments of command as given (args, the process's
// arguments after the program's name), without the executor flag and
// the command's name, each path in them made relative to wd, and the
// paths they name that exist, relative to top and slash-separated. A path
// that leads out of the project is refused: the worker has only the
// project.
func driveArgs(args []string, command, top, wd string) (out, named []string, err error) {
	note := func(s string) {
		p := s
		if !filepath.IsAbs(p) {
			p = filepath.Join(wd, p)
		}
		if _, err := os.Lstat(p); err != nil {
			return
		}
		if rel, ok := project.Within(top, filepath.Clean(p)); ok {
			named = append(named, filepath.ToSlash(rel))
		}
	}
	commandSeen := false
	dashes := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !dashes {
			switch {
			case a == "--":
				dashes = true
				out = append(out, a)
				continue
			case !commandSeen && a == command:
				commandSeen = true
				continue
			case a == "--executor":
				i++
				continue
			case strings.HasPrefix(a, "--executor="):
				continue
			}
		}
		if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "-") && !dashes {
			p, err := drivePath(v, top, wd)
			if err != nil {
				return nil, nil, err
			}
			note(p)
			out = append(out, k+"="+p)
			continue
		}
		p, err := drivePath(a, top, wd)
		if err != nil {
			return nil, nil, err
		}
		note(p)
		out = append(out, p)
	}
	return out, named, nil
}

// drivePath makes a path relative to wd when it names one inside top, and
// refuses one that names a place outside it.
func drivePath(s, top, wd string) (string, error) {
	if s == "" || strings.HasPrefix(s, "-") || strings.Contains(s, "\n") {
		return s, nil
	}
	p := s
	if !filepath.IsAbs(p) {
		if !strings.Contains(p, "..") {
			return s, nil
		}
		p = filepath.Join(wd, p)
	}
	p = filepath.Clean(p)
	if _, err := os.Lstat(p); err != nil {
		if _, err := os.Lstat(filepath.Dir(p)); err != nil {
			return s, nil // not a path on this machine
		}
	}
	if _, ok := project.Within(top, p); !ok {
		return "", fmt.Errorf("%s is outside the project %s, and a run driven on a worker has only the project's files: move it into the project, or set executor.drive: client", s, top)
	}
	rel, err := filepath.Rel(wd, p)
	if err != nil {
		return "", err
	}
	return rel, nil
}

// outputDirs are the directories args give as --output-dir, as slash
// paths relative to top (args are relative to wd, as driveArgs made them).
func outputDirs(args []string, top, wd string) []string {
	var out []string
	add := func(v string) {
		p := v
		if !filepath.IsAbs(p) {
			p = filepath.Join(wd, p)
		}
		if rel, ok := project.Within(top, filepath.Clean(p)); ok && rel != "." {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			return out
		case a == "--output-dir" && i+1 < len(args):
			i++
			add(args[i])
		case strings.HasPrefix(a, "--output-dir="):
			add(strings.TrimPrefix(a, "--output-dir="))
		}
	}
	return out
}

// MaxStdin bounds what a run driven on a worker reads on standard input
// (an argument "-"), which goes to the blob store with the run.
const MaxStdin = 64 << 20

// sendStdin sends what the command reads on standard input (when an
// argument names it) to the blob store, to go with the run: the same
// input, given again, follows the same run. It returns "" when no
// argument names standard input.
func (f *Factory) sendStdin(ctx context.Context, blobs blob.Store, args []string) (blob.Ref, error) {
	if !slices.ContainsFunc(args, func(a string) bool { return a == "-" || strings.HasSuffix(a, "=-") }) {
		return "", nil
	}
	data, err := io.ReadAll(io.LimitReader(f.IO.In, MaxStdin+1))
	if err != nil {
		return "", fmt.Errorf("read standard input: %w", err)
	}
	if len(data) > MaxStdin {
		return "", AsUsage(fmt.Errorf("standard input holds more than %d MB, more than a run driven on a worker takes; put it in a file of the project", MaxStdin>>20))
	}
	ref, err := blobs.Put(ctx, data)
	if err != nil {
		return "", fmt.Errorf("send standard input to the blob store: %w", err)
	}
	return ref, nil
}
