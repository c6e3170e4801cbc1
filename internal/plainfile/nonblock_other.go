//go:build !unix

package plainfile

// nonBlock is none where opening a file does not wait.
const nonBlock = 0
