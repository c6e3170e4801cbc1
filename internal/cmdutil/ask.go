package cmdutil

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"

	"github.com/sotlabs/sot/persona"
)

// TerminalAsker asks questions on ErrOut and reads answers from In. With
// choices, the user answers with a number or the choice's text.
func TerminalAsker(io *IOStreams) persona.Asker {
	r := bufio.NewReader(io.In)
	return func(question string, choices []string) (string, error) {
		for {
			fmt.Fprintln(io.ErrOut, question)
			for i, c := range choices {
				fmt.Fprintf(io.ErrOut, "  %d) %s\n", i+1, c)
			}
			fmt.Fprint(io.ErrOut, "> ")
			line, err := r.ReadString('\n')
			line = strings.TrimSpace(line)
			if err != nil && line == "" {
				return "", fmt.Errorf("no answer: %w", persona.ErrAborted)
			}
			if len(choices) == 0 {
				return line, nil
			}
			if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(choices) {
				return choices[n-1], nil
			}
			for _, c := range choices {
				if strings.EqualFold(c, line) {
					return c, nil
				}
			}
			fmt.Fprintf(io.ErrOut, "Please answer 1 to %d.\n", len(choices))
		}
	}
}
