package cmdutil

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sotlabs/sot/internal/termsafe"
	"github.com/sotlabs/sot/persona"
)

// TerminalAsker asks questions on ErrOut and reads answers from In. With
// choices, the user answers with a number or the choice's text. It reads
// In up to the end of each answer and not a byte further, so what the user
// typed after it (moderator mode's first question, after the yes that
// enters it) is left for whoever reads In next.
func TerminalAsker(io *IOStreams) persona.Asker {
	r := lineReader{io.In}
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
func askYesNo(io *IOStreams, r lineReader, question string, choices []string) (string, error) {
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

// lineReader reads a line at a time, a byte at a time, so that it never
// takes from its reader what comes after the line (a bufio.Reader would
// keep what it read ahead from the next reader of the same input).
type lineReader struct{ r io.Reader }

// ReadString reads up to and including delim; like bufio.Reader's, it
// returns what it read with the error when the input ends first.
func (l lineReader) ReadString(delim byte) (string, error) {
	var line []byte
	var c [1]byte
	for {
		n, err := l.r.Read(c[:])
		if n == 1 {
			line = append(line, c[0])
			if c[0] == delim {
				return string(line), nil
			}
		}
		if err != nil {
			return string(line), err
		}
	}
}
