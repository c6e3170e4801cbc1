package cmdutil

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"

	"github.com/sotlabs/sot/internal/termsafe"
	"github.com/sotlabs/sot/persona"
)

// TerminalAsker asks questions on ErrOut and reads answers from In. With
// choices, the user answers with a number or the choice's text.
func TerminalAsker(io *IOStreams) persona.Asker {
	r := bufio.NewReader(io.In)
	return func(question string, choices []string) (string, error) {
		if isYesNo(choices) {
			return askYesNo(io, r, question, choices)
		}
		for {
			fmt.Fprintln(io.ErrOut, termsafe.Text(question))
			for i, c := range choices {
				Fprintf(io.ErrOut, "  %d) %s\n", i+1, c)
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

// isYesNo reports whether the choices are a yes/no question.
func isYesNo(choices []string) bool {
	return len(choices) == 2 && strings.EqualFold(choices[0], "yes") && strings.EqualFold(choices[1], "no")
}

// askYesNo asks a yes/no question the way terminals do: "[Y/n]", where y,
// yes and Enter mean yes, and n and no mean no.
func askYesNo(io *IOStreams, r *bufio.Reader, question string, choices []string) (string, error) {
	for {
		fmt.Fprintf(io.ErrOut, "%s [Y/n] ", termsafe.Text(question))
		line, err := r.ReadString('\n')
		answer := strings.ToLower(strings.TrimSpace(line))
		if err != nil && answer == "" && line == "" {
			return "", fmt.Errorf("no answer: %w", persona.ErrAborted)
		}
		switch answer {
		case "", "y", "yes":
			return choices[0], nil
		case "n", "no":
			return choices[1], nil
		}
		fmt.Fprintln(io.ErrOut, "Please answer y or n (Enter means yes).")
	}
}
