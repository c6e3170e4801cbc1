package review

import (
	"fmt"
	"slices"

	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/review/synthesis"
)

// chunkFiles lists the files of chunk (1-based; 0 when the material was not
// split, which gives nil).
func (p *Plan) chunkFiles(chunk int) []string {
	if chunk < 1 || chunk > len(p.Chunks) {
		return nil
	}
	return p.Chunks[chunk-1].Paths()
}

// markCoverage keeps the list of reviewed files honest when the material was
// split: a file whose every chunk failed for every specialist was not
// reviewed at all, so it moves from Reviewed to Skipped with the reason; a
// file of which one part went unreviewed stays reviewed and is listed as
// partly skipped. reports are the first round's reports, failed ones
// included.
func (p *Plan) markCoverage(res *synthesis.Result, reports []finding.Report) {
	if len(p.Chunks) < 2 {
		return
	}
	done := map[int]bool{}
	for _, r := range reports {
		if r.Error == "" {
			done[r.Chunk] = true
		}
	}
	covered := map[string]bool{}
	for _, ch := range p.Chunks {
		if done[ch.Index] {
			for _, f := range ch.Paths() {
				covered[f] = true
			}
		}
	}
	for _, ch := range p.Chunks {
		if done[ch.Index] {
			continue
		}
		for _, f := range ch.Paths() {
			if covered[f] {
				res.Skipped = append(res.Skipped, synthesis.SkippedFile{Path: f,
					Reason: fmt.Sprintf("partly not reviewed: every specialist call on chunk %d, which holds part of it, failed; run the same command again to retry", ch.Index)})
				continue
			}
			res.Reviewed = slices.DeleteFunc(res.Reviewed, func(r string) bool { return r == f })
			res.Skipped = append(res.Skipped, synthesis.SkippedFile{Path: f,
				Reason: fmt.Sprintf("not reviewed: every specialist call on chunk %d failed; run the same command again to retry", ch.Index)})
		}
	}
}
