package middleware

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"os"

	"github.com/sotlabs/sot/llm"
)

// JournalUsage reads a journal without opening it for a run: the number of
// finished calls a provider was paid for, with their usage per model (calls
// the response cache answered are left out). A missing journal is no calls;
// a torn or damaged line is skipped, as a listing should not fail on it.
func JournalUsage(path string) (calls int, byModel map[string]llm.Usage, err error) {
	byModel = map[string]llm.Usage{}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, byModel, nil
	}
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var r record
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Response == nil || r.FromCache {
			continue
		}
		calls++
		byModel[r.Model] = byModel[r.Model].Add(r.Response.Usage)
	}
	return calls, byModel, sc.Err()
}
