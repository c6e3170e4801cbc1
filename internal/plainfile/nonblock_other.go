//go:build !unix

package plainfile

const (
	// nonBlock is none where opening a file does not wait.
	nonBlock = 0
	// noFollow is none here: ReadOwn looks before it opens.
	noFollow = 0
)
