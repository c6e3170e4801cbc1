package cmdutil

import (
	"github.com/spf13/pflag"

	"github.com/sotlabs/sot/internal/project"
)

// FollowSymlinksHelp is the help of --follow-symlinks, the same on every
// command that reads files.
const FollowSymlinksHelp = "read files that a symbolic link inside the project points to outside it (refused by default: a repository could point one at your own files)"

// AddFollowSymlinks defines --follow-symlinks on fl.
func AddFollowSymlinks(fl *pflag.FlagSet, p *bool) {
	fl.BoolVar(p, "follow-symlinks", false, FollowSymlinksHelp)
}

// CheckInput is a usage error when path, a file the user named, leads
// through a symbolic link out of its project and follow is not set.
func CheckInput(path string, follow bool) error {
	if follow {
		return nil
	}
	return AsUsage(project.CheckLinks(path))
}
