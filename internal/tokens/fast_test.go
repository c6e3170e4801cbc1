package tokens

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

var (
	refOnce  sync.Once
	refCodec tokenizer.Codec
	refFast  *counter
)

// reference returns the codec and the counter over the embedded
// vocabulary.
func reference(t testing.TB) (tokenizer.Codec, *counter) {
	t.Helper()
	refOnce.Do(func() {
		c, err := tokenizer.Get(tokenizer.O200kBase)
		if err != nil {
			return
		}
		v := readVocabulary(vocabFile, slotsFile)
		if v == nil {
			return
		}
		refCodec, refFast = c, newCounter(v, func() (tokenizer.Codec, error) { return c, nil })
	})
	if refFast == nil {
		t.Fatal("the o200k_base encoding did not load")
	}
	return refCodec, refFast
}

// tricky holds texts where the pattern's alternatives meet: contractions in
// both cases and with the long s, marks, letters of every case, scripts
// without case, digits in runs, punctuation before slashes and line
// breaks, every kind of white space, and pieces long enough for the codec's
// own merging.
var tricky = []string{
	"", "a", " ", "\n", "hello world", "Hello World", "HELLO WORLD", "ǅungla ǈ ǋ",
	"don't DON'T it's IT'S we're WE'RE they've I'm you'll he'd 'S 'T 'Re 'vE 'lL 'd", "x'ſ x'ſt 'x '",
	"e\u0301 a\u0300\u0301 \u0301\u0302 ab\u0301c Ä\u0308B", "ʰʲ ᵃᵇ ﬁ", "日本語のテキスト 中文 한국어",
	"1 12 123 1234 12345 ١٢٣٤ ½¾ Ⅷ 3.14 -42 0x1F",
	"}\n//x /\n/ ;\r\n// a/b/c */\n", "x := y; // c\n\t\t}\n\n)]}>\n", "<<<END MATERIAL 0123>>>\n│  12 +| code", "│func\n│## a.go\n│\n│ x\n│… —dash “q” ’s →go ↑ \u2010x\u2027\u2028\u218f", "a│b 1│2 \t│\n├─┤",
	"   \n\t\n \n", "a   b", "a  \n  b", "  x", "x  ", "\u00a0\u2028\u2029\u3000x", "\r\n\r\n\r", "\v\f x",
	"🙂👍🏽 ok 🎉🎉", "\x00\x01\x7f x", "�", "  " + strings.Repeat("x", 300), strings.Repeat(" ", 200) + "x",
	strings.Repeat("ab", 80), strings.Repeat("=", 120) + "\n", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" + strings.Repeat("é", 40),
	"Ω≈ç√∫˜µ≤≥÷ åß∂ƒ©˙∆˚¬…æ œ∑´®†¥¨ˆøπ“‘", "ThisIsCamelCase andHTTPServer XMLHttpRequest", "snake_case_name and kebab-case-name",
	// Pieces the counter's table of recent ones tells apart beyond their
	// first eight bytes and by their length alone.
	strings.Repeat(" function functiox functionally functionallx ab abc", 30), "aaaaaaaa aaaaaaaaa aaaaaaaa aaaaaaab",
}

func TestCounterMatchesTheCodec(t *testing.T) {
	codec, fast := reference(t)
	check := func(name, s string) {
		t.Helper()
		want, err := codec.Count(s)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := fast.count(s); got != want {
			t.Errorf("%s: %d tokens, the codec counts %d", name, got, want)
		}
	}
	for _, s := range tricky {
		check(fmt.Sprintf("%.30q", s), s)
	}
	// The repository's text files (Go, Markdown, YAML, scripts), up to a
	// megabyte of them.
	root := filepath.Join("..", "..")
	n, size := 0, 0
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || size > 1<<20 {
			return filepath.SkipAll
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".yaml", ".yml", ".txtar", ".json", ".txt", ".sh":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil || len(b) > 1<<20 {
			return nil
		}
		check(path, string(b))
		n++
		size += len(b)
		return nil
	})
	if n < 100 {
		t.Errorf("only %d files compared", n)
	}
}

// FuzzCounterMatchesTheCodec compares the counter with the codec on any
// text: go test -fuzz FuzzCounter ./internal/tokens.
func FuzzCounterMatchesTheCodec(f *testing.F) {
	for _, s := range tricky {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		codec, fast := reference(t)
		want, err := codec.Count(s)
		if err != nil {
			t.Skip()
		}
		if got, _ := fast.count(s); got != want {
			t.Errorf("%q: %d tokens, the codec counts %d", s, got, want)
		}
	})
}

// BenchmarkCount compares the counter with the codec on the repository's
// Go source, about 1 MB: go test ./internal/tokens -run '^$' -bench Count.
func BenchmarkCount(b *testing.B) {
	codec, fast := reference(b)
	var text strings.Builder
	filepath.WalkDir(filepath.Join("..", ".."), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(path) == ".go" && text.Len() < 1<<20 {
			if data, err := os.ReadFile(path); err == nil {
				text.Write(data)
			}
		}
		return nil
	})
	s := text.String()
	b.Run("codec", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			codec.Count(s)
		}
	})
	b.Run("counter", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			fast.count(s)
		}
	})
}

// asciiPieceAt finds the piece runePieceAt finds wherever it finds one: at
// every position of the tricky texts, of the repository's Go files and of
// random texts of ASCII with a few longer characters among them.
// The characters symbolWidth knows are read like ASCII punctuation by
// every function of the pattern, and it knows no other.
func TestSymbolsAreOther(t *testing.T) {
	known := 0
	for r := rune(utf8.RuneSelf); r < 0x10000; r++ {
		s := string(r) + "x"
		w := symbolWidth(s, 0)
		if w == 0 {
			continue
		}
		known++
		if w != utf8.RuneLen(r) {
			t.Errorf("%U: width %d, want %d", r, w, utf8.RuneLen(r))
		}
		if !isOther(r) || !isPrefix(r) || isUpper(r) || isLower(r) || isNumber(r) || unicode.IsSpace(r) {
			t.Errorf("%U %q is not read like ASCII punctuation", r, r)
		}
	}
	if want := 1 + (0x2027 - 0x2010 + 1) + (0x21ff - 0x2190 + 1); known != want {
		t.Errorf("symbolWidth knows %d characters, want %d", known, want)
	}
}

func TestASCIIPiecesAreThePieces(t *testing.T) {
	texts := slices.Clone(tricky)
	for _, dir := range []string{".", filepath.Join("..", "..", "review")} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				texts = append(texts, string(b))
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "Z", "q", "0", "9", " ", "  ", "\t", "\n", "\r\n", "'", "'s", "'LL", "/", "(", "-", "_", "\x00", "\x0b", "\x1c", "é", "É", "\u0301", "\u00a0", "\u0085", "٣", "│", "ſ",
		"…", "—", "’", "“", "→", "\u2010", "\u2027", "\u2028", "\u2030", "\u2180", "\u218f", "\u2190", "\u21ff", "\u2501", "\u2503"}
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	checked := 0
	for _, s := range texts {
		for i := 0; i < len(s); i++ {
			if s[i] == 0x7f || !utf8.RuneStart(s[i]) {
				continue
			}
			if e := asciiPieceAt(s, i); e > 0 {
				checked++
				if want := runePieceAt(s, i); e-i != want {
					t.Fatalf("%q at %d: piece %q, want %q", s, i, s[i:e], s[i:i+want])
				}
			}
		}
	}
	if checked < 100_000 {
		t.Errorf("only %d pieces compared", checked)
	}
}
