// Package shell quotes words for a POSIX shell, so that a command sot
// prints (to resume a run, say) can be pasted back as it is.
package shell

import "strings"

// Quote returns s as one shell word: as is when it holds nothing the shell
// would read specially, and in single quotes otherwise.
func Quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Join quotes each word and joins them with spaces.
func Join(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = Quote(w)
	}
	return strings.Join(out, " ")
}
