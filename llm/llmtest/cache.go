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

// explicitCache simulates Anthropic's explicit prompt cache: every block
// marked with cache_control ends a cacheable prefix. It returns the tokens
// read from the longest marked prefix readable when the call arrived and
// the tokens written for the marked prefixes beyond it, which become
// readable from readable.
func (s *Server) explicitCache(c *call, arrival, readable time.Time) (read, write int) {
	type mark struct {
		key    uint64
		tokens int
	}
	marks := make([]mark, 0, len(c.breaks))
	var h maphash.Hash
	h.SetSeed(s.seed)
	_, _ = h.WriteString(c.model)
	_ = h.WriteByte(0)
	pos := 0
	for _, b := range c.breaks {
		if b < pos || b > len(c.prompt) {
			continue
		}
		_, _ = h.Write(c.prompt[pos:b])
		pos = b
		if t := tokens(b); t >= cacheMinTokens {
			marks = append(marks, mark{h.Sum64(), t})
		}
	}
	if len(marks) == 0 {
		return 0, 0
	}

	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	hit := -1
	for i := len(marks) - 1; i >= 0; i-- {
		if at, ok := s.cache[marks[i].key]; ok && !at.After(arrival) {
			hit = i
			break
		}
	}
	if hit >= 0 {
		read = marks[hit].tokens
	}
	if last := marks[len(marks)-1]; hit < len(marks)-1 {
		write = last.tokens - read
	}
	keys := make([]uint64, 0, len(marks))
	for _, m := range marks[hit+1:] {
		keys = append(keys, m.key)
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
