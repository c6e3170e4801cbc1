package llmtest

import (
	"hash/maphash"
	"time"
)

// Prefix cache parameters, as the providers document them.
const (
	cacheBlockBytes = 512  // OpenAI caches in 128-token blocks (about 512 bytes)
	cacheMinTokens  = 1024 // neither provider caches a shorter prefix
	cacheMaxEntries = 1 << 20
)

// automaticCache simulates OpenAI's automatic prefix cache: it returns the
// cached tokens of the longest prefix of c.prompt that was readable when
// the call arrived, counted in whole blocks and only from cacheMinTokens
// on, then stores every block prefix of c.prompt as readable from
// readable.
func (s *Server) automaticCache(c *call, arrival, readable time.Time) int {
	n := len(c.prompt) / cacheBlockBytes
	if n == 0 {
		return 0
	}
	keys := make([]uint64, n)
	var h maphash.Hash
	h.SetSeed(s.seed)
	_, _ = h.WriteString(c.model)
	_ = h.WriteByte(0)
	for i := 0; i < n; i++ {
		_, _ = h.Write(c.prompt[i*cacheBlockBytes : (i+1)*cacheBlockBytes])
		keys[i] = h.Sum64()
	}

	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	hit := 0
	for i := n - 1; i >= 0; i-- {
		if at, ok := s.cache[keys[i]]; ok && !at.After(arrival) {
			hit = i + 1
			break
		}
	}
	s.storeLocked(keys, readable)
	cached := hit * cacheBlockBytes / 4
	if cached < cacheMinTokens {
		return 0
	}
	return cached
}

// cacheLookback is how many block boundaries before a breakpoint
// Anthropic's cache checks for a prefix it holds ("approximately 20").
const cacheLookback = 20

// explicitCache simulates Anthropic's explicit prompt cache: every block
// marked with cache_control ends a cacheable prefix. It returns the tokens
// read from the longest prefix readable when the call arrived that ends at
// a marked block or at one of the cacheLookback block boundaries before
// one (so a breakpoint that moves to the end of a longer conversation
// still reads what an earlier one wrote), and the tokens written for the
// marked prefixes beyond it, which become readable from readable.
func (s *Server) explicitCache(c *call, arrival, readable time.Time) (read, write int) {
	type prefix struct {
		key    uint64
		tokens int
		marked bool
	}
	ps := make([]prefix, 0, len(c.ends))
	var h maphash.Hash
	h.SetSeed(s.seed)
	_, _ = h.WriteString(c.model)
	_ = h.WriteByte(0)
	pos, b, last := 0, 0, -1
	for _, e := range c.ends {
		if e < pos || e > len(c.prompt) {
			continue
		}
		_, _ = h.Write(c.prompt[pos:e])
		pos = e
		for b < len(c.breaks) && c.breaks[b] < e {
			b++
		}
		p := prefix{h.Sum64(), tokens(e), b < len(c.breaks) && c.breaks[b] == e}
		if p.marked && p.tokens >= cacheMinTokens {
			last = len(ps)
		}
		ps = append(ps, p)
	}
	if last < 0 {
		return 0, 0
	}

	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	hit, reach := -1, 0
	for i := last; i >= 0; i-- {
		if ps[i].marked {
			reach = i - cacheLookback
		}
		if i < reach || ps[i].tokens < cacheMinTokens {
			continue
		}
		if at, ok := s.cache[ps[i].key]; ok && !at.After(arrival) {
			hit = i
			break
		}
	}
	if hit >= 0 {
		read = ps[hit].tokens
	}
	if hit < last {
		write = ps[last].tokens - read
	}
	var keys []uint64
	for _, p := range ps[hit+1 : last+1] {
		if p.marked && p.tokens >= cacheMinTokens {
			keys = append(keys, p.key)
		}
	}
	s.storeLocked(keys, readable)
	return read, write
}

// storeLocked records prefixes as readable from at, keeping an earlier time
// already known. s.cacheMu must be held.
func (s *Server) storeLocked(keys []uint64, at time.Time) {
	if len(s.cache)+len(keys) > cacheMaxEntries {
		clear(s.cache)
	}
	for _, k := range keys {
		if old, ok := s.cache[k]; !ok || at.Before(old) {
			s.cache[k] = at
		}
	}
}
