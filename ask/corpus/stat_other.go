//go:build !linux

package corpus

// ownStatHandles is true here: the stats go through an os.Root, which
// takes a lock for each, so each goroutine stat'ing a large directory
// opens a handle of its own.
const ownStatHandles = true

// lstat reads the stat of the entry name (one element, from the
// directory's listing) without following a link.
func (d dirHandle) lstat(name string) (entryStat, error) {
	return statOfRoot(d.root, name)
}
