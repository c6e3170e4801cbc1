package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/cli/root"
	"github.com/sotlabs/sot/config"
)

// docsRoot builds the command tree as main does, with streams and
// environment of its own, so nothing runs against the user's setup.
func docsRoot(t *testing.T) *cobra.Command {
	t.Helper()
	dir := t.TempDir()
	getenv := func(string) string { return "" }
	f := &cmdutil.Factory{
		IO:     &cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
		Getenv: getenv,
		Loader: &config.Loader{WorkDir: dir, Getenv: getenv},
		Logger: slog.New(slog.DiscardHandler),
	}
	return root.NewCmd(f)
}

// docs returns README.md and every docs/*.md, joined.
func docs(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join("..", "..", "README.md")}, files...)
	var all strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
		all.WriteByte('\n')
	}
	return all.String()
}

// walk calls fn for cmd and every command under it that is not hidden,
// cobra's own help and completion commands left out.
func walk(cmd *cobra.Command, fn func(*cobra.Command)) {
	if cmd.Hidden || cmd.Name() == "help" || cmd.Name() == "completion" {
		return
	}
	fn(cmd)
	for _, c := range cmd.Commands() {
		walk(c, fn)
	}
}

// Every flag that --help shows, on every command, is documented: its
// --name appears in README.md or in docs/*.md. A flag added without a word
// of documentation fails here with the command that has it.
func TestEveryFlagIsDocumented(t *testing.T) {
	n, problems := undocumentedFlags(docsRoot(t), docs(t))
	for _, p := range problems {
		t.Error(p)
	}
	if n < 20 {
		t.Fatalf("only %d flags found: is the command tree built?", n)
	}
}

// undocumentedFlags checks every visible flag of every visible command
// under root against text; n is the number of flags checked.
func undocumentedFlags(root *cobra.Command, text string) (n int, problems []string) {
	seen := map[string]bool{}
	visit := func(cmd *cobra.Command) func(*pflag.Flag) {
		return func(fl *pflag.Flag) {
			key := cmd.CommandPath() + " --" + fl.Name
			if fl.Hidden || fl.Name == "help" || seen[key] {
				return
			}
			seen[key] = true
			n++
			// "--name" documents the flag when it is not merely the start
			// of a longer flag's name ("--format" inside "--format-x").
			re := regexp.MustCompile(`--` + regexp.QuoteMeta(fl.Name) + `([^a-z0-9-]|$)`)
			if !re.MatchString(text) {
				problems = append(problems, fmt.Sprintf("%s: --%s (%s) is in --help but not in README.md or docs/*.md", cmd.CommandPath(), fl.Name, fl.Usage))
			}
		}
	}
	walk(root, func(cmd *cobra.Command) {
		cmd.LocalNonPersistentFlags().VisitAll(visit(cmd))
		cmd.PersistentFlags().VisitAll(visit(cmd))
	})
	return n, problems
}

// readmeCommand is one sot command line of the README's code blocks.
type readmeCommand struct {
	line int
	args []string
}

// readmeCommands extracts every command line that runs sot from the code
// blocks of a Markdown file: lines that start with "sot " or "$ sot ", or
// run it after a pipe ("git show | sot review ...") or variables
// ("SOT_MODEL=... sot doctor"), with "\" continuations joined and a
// trailing "# comment" dropped.
func readmeCommands(r io.Reader) ([]readmeCommand, error) {
	var (
		out     []readmeCommand
		inBlock bool
		pending string
		start   int
	)
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock, pending = !inBlock, ""
			continue
		}
		if !inBlock {
			continue
		}
		if pending != "" {
			line = pending + " " + strings.TrimSpace(line)
		} else {
			start = n
		}
		if strings.HasSuffix(line, `\`) {
			pending = strings.TrimSuffix(line, `\`)
			continue
		}
		pending = ""
		if args, ok := sotArgs(line); ok {
			out = append(out, readmeCommand{line: start, args: args})
		}
	}
	return out, sc.Err()
}

// sotArgs splits the sot command on a shell line into words, quotes
// honoured, with what precedes sot (a pipe's first part, variables)
// and what follows it (a comment, a pipe, a redirection) left out. ok is
// false when the line does not run sot.
func sotArgs(line string) (args []string, ok bool) {
	line = strings.TrimPrefix(strings.TrimSpace(line), "$ ")
	words, err := shellWords(line)
	if err != nil {
		return nil, false
	}
	i := slices.Index(words, "sot")
	if i < 0 || (i > 0 && words[i-1] != "|" && !isAssignment(words[:i])) {
		return nil, false
	}
	for _, w := range words[i+1:] {
		if w == "|" || w == "||" || w == "&&" || w == ";" || strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>") {
			break
		}
		args = append(args, w)
	}
	return args, true
}

var assignment = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)

// isAssignment reports whether every word is a VAR=value assignment, as
// in "SOT_MODEL=... sot doctor".
func isAssignment(words []string) bool {
	for _, w := range words {
		if !assignment.MatchString(w) {
			return false
		}
	}
	return true
}

// shellWords splits a line as a POSIX shell would, as far as the README
// needs: single and double quotes group, a "#" that starts a word starts
// a comment, and "|" is a word of its own.
func shellWords(line string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		inW   bool
		quote rune
	)
	flush := func() {
		if inW {
			words = append(words, cur.String())
			cur.Reset()
			inW = false
		}
	}
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inW = r, true
		case r == '#' && !inW:
			flush()
			return words, nil
		case r == ' ' || r == '\t':
			flush()
		case r == '|' && !inW:
			flush()
			words = append(words, "|")
		default:
			cur.WriteRune(r)
			inW = true
		}
	}
	if quote != 0 {
		return nil, errors.New("unterminated quote")
	}
	flush()
	return words, nil
}

// unparsable returns a problem for each command that names no command of
// the tree newRoot builds, or whose flags or flag values it refuses.
// Nothing is run.
func unparsable(newRoot func() *cobra.Command, cmds []readmeCommand) []string {
	var problems []string
	for _, c := range cmds {
		rootCmd := newRoot() // fresh, so no flag value carries over
		line := "sot " + strings.Join(c.args, " ")
		cmd, rest, err := rootCmd.Find(c.args)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("README.md:%d: %s: %v", c.line, line, err))
		case cmd == rootCmd && len(c.args) > 0 && !strings.HasPrefix(c.args[0], "-"):
			problems = append(problems, fmt.Sprintf("README.md:%d: %s: no command %q", c.line, line, c.args[0]))
		default:
			if err := cmd.ParseFlags(rest); err != nil {
				problems = append(problems, fmt.Sprintf("README.md:%d: %s: %v", c.line, line, err))
			}
		}
	}
	return problems
}

// Every sot command the code blocks of README.md and docs/*.md show
// parses: its command exists, every flag is one that command takes, and
// every flag's value is one its type accepts.
func TestReadmeCommandsParse(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join("..", "..", "README.md")}, files...)
	total := 0
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		cmds, err := readmeCommands(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		total += len(cmds)
		rel := strings.TrimPrefix(filepath.ToSlash(name), "../../")
		for _, p := range unparsable(func() *cobra.Command { return docsRoot(t) }, cmds) {
			t.Error(strings.Replace(p, "README.md:", rel+":", 1))
		}
	}
	if total < 15 {
		t.Fatalf("only %d sot commands found in README.md and docs/*.md", total)
	}
}

// fence matches a fenced code block, which the synopsis check leaves to
// TestReadmeCommandsParse.
var fence = regexp.MustCompile("(?s)```.*?```")

// inlineSot matches an inline code span that starts with sot: a synopsis
// such as `sot sources show SOURCE` or `sot runs [--resume] [--json]`,
// possibly wrapped over two lines.
var inlineSot = regexp.MustCompile("`sot [^`]+`")

var inlineFlag = regexp.MustCompile(`(^|[\s\[(])--([a-z][a-z0-9-]*)`)

// badSynopses checks every sot synopsis in the running text (code blocks
// left out): the commands it names must exist ("list|show" and
// "list/show" name several), and its --flags must be its command's.
// Placeholders (FILE, [PATH...]) are not checked. n is the number of
// synopses checked.
func badSynopses(root *cobra.Command, text string) (n int, problems []string) {
	for _, span := range inlineSot.FindAllString(fence.ReplaceAllString(text, ""), -1) {
		n++
		span = strings.Join(strings.Fields(strings.Trim(span, "`")), " ")
		words := strings.Fields(span)[1:]
		cmd := root
		i := 0
	path:
		for ; i < len(words); i++ {
			w := strings.ReplaceAll(words[i], `\|`, "|")
			if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "[") || strings.ToUpper(w) == w {
				break // a flag, an optional part or a placeholder
			}
			if alts := strings.FieldsFunc(w, func(r rune) bool { return r == '|' || r == '/' }); len(alts) > 1 {
				for _, a := range alts {
					if findChild(cmd, a) == nil {
						problems = append(problems, fmt.Sprintf("%s: %s has no command %q", span, cmd.CommandPath(), a))
					}
				}
				i = len(words) // which command the rest belongs to is not said
				break
			}
			child := findChild(cmd, w)
			switch {
			case child != nil:
				cmd = child
			case cmd.HasSubCommands():
				problems = append(problems, fmt.Sprintf("%s: %s has no command %q", span, cmd.CommandPath(), w))
				break path
			default:
				break path // an argument, such as a file name
			}
		}
		if i >= len(words) {
			continue
		}
		for _, m := range inlineFlag.FindAllStringSubmatch(strings.Join(words[i:], " "), -1) {
			if m[2] == "help" {
				continue // cobra gives every command --help as it runs
			}
			if cmd.Flags().Lookup(m[2]) == nil && cmd.InheritedFlags().Lookup(m[2]) == nil {
				problems = append(problems, fmt.Sprintf("%s: %s takes no --%s", span, cmd.CommandPath(), m[2]))
			}
		}
	}
	return n, problems
}

// findChild returns cmd's subcommand of that name or alias, or nil.
func findChild(cmd *cobra.Command, name string) *cobra.Command {
	for _, c := range cmd.Commands() {
		if c.Name() == name || slices.Contains(c.Aliases, name) {
			return c
		}
	}
	return nil
}

// Every sot synopsis in the running text of README.md and docs/*.md names
// commands that exist and flags that its command takes.
func TestInlineCommandsExist(t *testing.T) {
	n, problems := badSynopses(docsRoot(t), docs(t))
	for _, p := range problems {
		t.Error(p)
	}
	if n < 30 {
		t.Fatalf("only %d sot synopses found", n)
	}
}

// The three checks above catch what they are for: a command that does not
// exist, a flag its command does not take, a flag value of the wrong
// type, and a flag that no document mentions.
func TestDocChecksCatchDrift(t *testing.T) {
	md := "Run it:\n\n```sh\n" +
		"sot reviw                                   # a typo\n" +
		"sot review --no-such-flag\n" +
		"git diff | sot review --max-prompt-tokens lots\n" +
		"sot sources show X \\\n    --bogus\n" +
		"sot review --dry-run --show-prompt security # fine\n" +
		"echo sot review --nothing                   # not a sot command\n" +
		"```\n\n" +
		"See `sot sources shw ID`, `sot runs [--nope]`, `sot graph show|exprt FILE`,\n" +
		"and `sot runs [--resume] [--json]`.\n"
	cmds, err := readmeCommands(strings.NewReader(md))
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 5 {
		t.Errorf("%d commands read, want 5: %v", len(cmds), cmds)
	}
	if got := unparsable(func() *cobra.Command { return docsRoot(t) }, cmds); len(got) != 4 {
		t.Errorf("%d unparsable commands, want 4:\n%s", len(got), strings.Join(got, "\n"))
	}
	n, got := badSynopses(docsRoot(t), md)
	if n != 4 || len(got) != 3 {
		t.Errorf("%d synopses, %d bad, want 4 and 3:\n%s", n, len(got), strings.Join(got, "\n"))
	}
	if _, got := undocumentedFlags(docsRoot(t), "only --model here"); !slices.ContainsFunc(got, func(p string) bool {
		return strings.HasPrefix(p, "sot review: --fail-on ")
	}) {
		t.Errorf("an undocumented --fail-on is not reported: %q", got)
	}
}
