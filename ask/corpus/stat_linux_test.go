package corpus

import "testing"

// TestEntryStatWithoutStatx: where statx is missing or refused (an old
// kernel, an old container profile), the walk reads the same stats with
// fstatat.
func TestEntryStatWithoutStatx(t *testing.T) {
	noStatx.Store(true)
	defer noStatx.Store(false)
	dir, names := statEntries(t)
	d, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	checkStats(t, dir, d, names)
}
