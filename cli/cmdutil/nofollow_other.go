//go:build !unix

package cmdutil

// noFollow is 0 where the system has no O_NOFOLLOW.
const noFollow = 0
