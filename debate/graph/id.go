package graph

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
)

// PassageID is an id for a passage: the base of its name without
// extension, in lowercase letters, digits and hyphens, then the first
// eight hex digits of the SHA-256 of its text. The same passage gets the
// same id in every run; passages that share a name do not share it.
func PassageID(name, text string) string {
	base := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	slug := Slug(base)
	if len(slug) > 32 {
		slug = strings.TrimRight(slug[:32], "-")
	}
	if slug == "" {
		slug = "passage"
	}
	sum := sha256.Sum256([]byte(text))
	return slug + "-" + hex.EncodeToString(sum[:4])
}

// NodeID is the id of a passage's node: branch 0 is the main debate's,
// branch k the k-th branch's.
func NodeID(passageID string, branch int) string {
	if branch == 0 {
		return passageID + "/main"
	}
	return fmt.Sprintf("%s/branch-%d", passageID, branch)
}

// Slug keeps the lowercase letters and digits of s and makes every other
// run of characters one hyphen: the form of a passage's id, and of the
// names the exports derive from ids.
func Slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	return b.String()
}
