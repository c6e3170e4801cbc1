//go:build unix

package cmdutil

import "syscall"

// noFollow makes an open fail on a symlink at the name.
const noFollow = syscall.O_NOFOLLOW
