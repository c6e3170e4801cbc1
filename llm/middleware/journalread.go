package middleware

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/sotlabs/sot/internal/parallel"
	"github.com/sotlabs/sot/internal/plainfile"
	"github.com/sotlabs/sot/llm"
)

// loadBatch is about how many bytes of whole lines a journal being opened
// decodes at a time. The lines of a batch are decoded on every processor
// at once, so decoding, most of the cost of a resume's replay, does not
// hold the run to one core; the batch bounds what is held besides the
// decoded records.
const loadBatch = 4 << 20

// readBuffer is the most a journal is read through at once: a record of a
// few KB, or one of a large answer, is read with one system call or a few,
// not one every 4 KB. A small journal gets a buffer of its own size.
const readBuffer = 1 << 20

// readRecords reads the journal in r from its start (path names it in
// errors; size is what it holds, or -1 if that is not known), hands add
// every whole record in file order, and returns the offset after the last
// one; add returning false ends the reading before that record, whose
// offset is returned. Lines are read through a large buffer and decoded about batch bytes
// at a time, each line once. A torn last line (a
// crash in the middle of a write: no newline, or a line that is not a
// record with nothing after it) ends the journal; a line that is not a
// record with anything after it is damage, and an error.
func readRecords(r io.Reader, path string, size int64, batch int, add func(*record) bool) (int64, error) {
	buf := readBuffer
	if size >= 0 && size < readBuffer {
		buf = int(size) + 1 // bufio makes it at least 16 bytes
	}
	br := bufio.NewReaderSize(r, buf)
	var (
		off   int64
		lines [][]byte
		held  int // bytes in lines
		first = 1 // the line number of lines[0]
	)
	for {
		b, err := br.ReadBytes('\n')
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			return 0, fmt.Errorf("read journal %s: %w", path, err)
		}
		if !eof {
			lines = append(lines, b)
			held += len(b)
			if held < batch {
				continue
			}
		}
		// Whether anything follows the batch's last line decides whether a
		// bad last line is a torn write: at the end, the torn tail b.
		follows := len(b) > 0
		if !eof {
			_, perr := br.Peek(1)
			follows = perr == nil
		}
		recs := decodeLines(lines)
		for i, rec := range recs {
			if rec == nil {
				if i < len(lines)-1 || follows {
					return 0, fmt.Errorf("journal %s:%d is damaged; move it aside to start the run afresh", path, first+i)
				}
				return off, nil
			}
			if !add(rec) {
				return off, nil // the records from here on are not wanted
			}
			off += int64(len(lines[i]))
		}
		if eof {
			return off, nil // b, if any, is a torn tail: ignore it
		}
		first += len(lines)
		clear(lines)
		lines, held = lines[:0], 0
	}
}

// decodeLines decodes journal lines on every processor at once. Where a
// line is not a whole record its record is nil.
func decodeLines(lines [][]byte) []*record {
	recs := make([]*record, len(lines))
	parallel.For(len(lines), func(i int) {
		rec := new(record)
		if json.Unmarshal(bytes.TrimSpace(lines[i]), rec) == nil && rec.Response != nil {
			recs[i] = rec
		}
	})
	return recs
}

// JournalUsage reads a journal without opening it for a run: the number of
// provider calls its finished answers cost (two for an answer asked for
// again), with their usage per model (calls
// the response cache answered are left out). A missing journal is no calls;
// a torn or damaged line is skipped, as a listing should not fail on it.
func JournalUsage(path string) (calls int, byModel map[string]llm.Usage, err error) {
	byModel = map[string]llm.Usage{}
	f, err := plainfile.OpenOwn(path)
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
		calls += providerCalls(r.Response)
		byModel[r.Model] = byModel[r.Model].Add(r.Response.Usage)
	}
	return calls, byModel, sc.Err()
}
