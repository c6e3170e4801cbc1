package prompt

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/internal/tokens"
	"github.com/sotlabs/sot/persona"
)

// fenceSamples are materials whose lines end and start in ways the
// tokenizer could join across a line break if nothing stood between them.
var fenceSamples = []string{
	diffMaterial,
	"",
	"one line without a break",
	"a\n\n\nb\n\n",
	"// comment\n/// doc\n//go:build x\n  / slash at the start\n",
	"x := 1;   \n\t\t}\n\n)]}>\n",
	"CRLF line\r\nnext\r\n",
	"日本語のテキスト\nüñíçødé\n12345678901234567890\n",
	"   \n\t\n \n",
	"line with a \u2028 separator and a \r inside\n",
}

// The fenced count of a material is the count of its fence less that of a
// fence around nothing, exactly, computed without the fence's statement.
func TestFencedTokensIsExact(t *testing.T) {
	for _, m := range fenceSamples {
		want := tokens.Count(Fence(m, nonce)) - tokens.Count(Fence("", nonce))
		if got := FencedTokens(m); got != want {
			t.Errorf("FencedTokens(%.40q) = %d, want %d", m, got, want)
		}
	}
}

// Counting fenced lines piece by piece gives the count of the whole: a
// material of many files can be counted file by file, each blank line
// between two files counting GutteredTokens("\n").
func TestGutteredTokensAddUp(t *testing.T) {
	var pieces []string
	sum := 0
	for _, m := range fenceSamples {
		if m == "" {
			continue
		}
		if !strings.HasSuffix(m, "\n") {
			m += "\n"
		}
		pieces = append(pieces, m)
		sum += GutteredTokens(m)
	}
	if got := GutteredTokens(strings.Join(pieces, "")); got != sum {
		t.Errorf("the whole counts %d, its pieces %d", got, sum)
	}
	joined := sum + (len(pieces)-1)*GutteredTokens("\n")
	if got := GutteredTokens(strings.Join(pieces, "\n")); got != joined {
		t.Errorf("the pieces joined by blank lines count %d, want %d", got, joined)
	}
	if GutteredTokens("") != 0 || GutteredTokens("a") != GutteredTokens("a\n") {
		t.Error(`"" must count 0, and a last line counts the same with or without its break`)
	}
}

// A run given the count of its material composes prompts whose count is
// what counting them would give, and uses it for the budget.
func TestMaterialTokensCountsTheMaterialLayer(t *testing.T) {
	lib := library(t)
	spec := get(t, lib, persona.Specialist, "security")
	material := strings.Repeat(diffMaterial, 20)
	counted := &Run{Type: TypeDiff, SharedRules: lib.SharedRules(), Material: material, Nonce: nonce, Coordinates: "HEAD"}
	given := &Run{Type: TypeDiff, SharedRules: lib.SharedRules(), Material: material, MaterialTokens: GutteredTokens(material), Nonce: nonce, Coordinates: "HEAD"}
	a, err := counted.Compose(spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := given.Compose(spec, Options{MaxTokens: a.Tokens()})
	if err != nil {
		t.Fatal(err)
	}
	if a.Text != b.Text || b.Tokens() != a.Tokens() || b.PrefixTokens() != a.PrefixTokens() {
		t.Errorf("tokens %d and prefix %d with the count given, %d and %d counted", b.Tokens(), b.PrefixTokens(), a.Tokens(), a.PrefixTokens())
	}
	if n := tokens.Count(b.Layer(LayerMaterial)); b.Layers[2].count(b) != n {
		t.Errorf("the material layer counts %d, its text %d", b.Layers[2].count(b), n)
	}
	// A count that says the material is larger is believed: the prompt no
	// longer fits.
	given.MaterialTokens += 100
	if _, err := given.Compose(spec, Options{MaxTokens: a.Tokens()}); err == nil {
		t.Error("a prompt over the budget by the material's given count was composed")
	}
}

// Counted a batch of lines at a time, in a reused buffer, a text longer
// than a batch counts what its guttered text counts whole, escapes and
// all; and counting one text does not change the next one's count.
func TestGutteredTokensInBatches(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 3*countBatch; i++ {
		fmt.Fprintf(&b, "line %d: func f() { return \"a\\tb\" } \u2028 x\r\n", i)
		if i%7 == 0 {
			b.WriteString("\n")
		}
	}
	texts := []string{b.String(), "short\n", strings.Repeat("é\x01 word ", countBatch/4)}
	for _, text := range texts {
		var g strings.Builder
		writeGuttered(&g, strings.TrimSuffix(text, "\n"))
		want := tokens.Count(g.String())
		for range 2 {
			if got := GutteredTokens(text); got != want {
				t.Errorf("GutteredTokens of %d bytes = %d, the guttered text counts %d", len(text), got, want)
			}
		}
	}
}

// A deferred prompt's prefix is measured, not written, while a run is
// planned: its fence's length and its layers, extents and token counts,
// are those of the prefix once written, for every kind of material (line
// breaks of every kind, escapes of one, two and three bytes, no material),
// and composing deferred prompts writes no prefix.
func TestDeferredPrefixIsMeasured(t *testing.T) {
	lib := library(t)
	spec := get(t, lib, persona.Specialist, "security")
	escapes := "tab\there \x01\x7f c1:\u0085 ls:\u2028 ps:\u2029 vt\v ff\f cr\r mid\rline\n"
	samples := append(slices.Clone(fenceSamples), escapes, strings.Repeat(escapes+diffMaterial, 3), "\n\n\n")
	for i, m := range samples {
		if got, want := fencedLen(m, nonce), len(Fence(m, nonce)); got != want {
			t.Errorf("sample %d: fencedLen %d, the fence is %d bytes", i, got, want)
		}
		for _, given := range []int{0, GutteredTokens(m)} {
			r := &Run{Type: TypeDiff, SharedRules: lib.SharedRules(), Material: m, MaterialTokens: given, Nonce: nonce, Coordinates: "HEAD"}
			c, err := r.Compose(spec, Options{Defer: true})
			if err != nil {
				t.Fatal(err)
			}
			tokensBefore := c.Tokens()
			if r.cached.text.write == nil && given > 0 {
				t.Fatalf("sample %d: composing a deferred prompt and counting its tokens wrote its prefix", i)
			}
			text := c.Join()
			if len(text) != c.Len() {
				t.Errorf("sample %d: the prompt is %d bytes, measured %d", i, len(text), c.Len())
			}
			end := 0
			for _, l := range c.Layers {
				if l.Start != end || !strings.HasPrefix(text[l.Start:], "# ") {
					t.Errorf("sample %d: layer %q starts at %d, where %q is; the layer before ended at %d", i, l.Name, l.Start, text[l.Start:min(l.Start+20, len(text))], end)
				}
				end = l.End
			}
			if end != len(text) {
				t.Errorf("sample %d: the layers end at %d of %d bytes", i, end, len(text))
			}
			whole := Composed{Text: text, SharedPrefix: c.SharedPrefix, Layers: c.Layers}
			for k := range whole.Layers {
				whole.Layers[k].tokens = 0
			}
			if given == 0 && whole.Tokens() != tokensBefore {
				t.Errorf("sample %d: the measured layers count %d tokens, the written prompt %d", i, tokensBefore, whole.Tokens())
			}
		}
	}
}

// Composing deferred prompts of a small material with a budget it cannot
// come near loads no tokenizer: their prefix's layers are measured, not
// counted. Run in a process of its own, where nothing has loaded it yet.
func TestDeferredComposeLoadsNoTokenizer(t *testing.T) {
	if os.Getenv("SOT_PROMPT_TOKENIZER_CHILD") == "1" {
		lib := library(t)
		r := &Run{Type: TypeDiff, SharedRules: lib.SharedRules(), Material: diffMaterial, Nonce: nonce, Coordinates: "HEAD"}
		for _, id := range []string{"security", "correctness"} {
			if _, err := r.Compose(get(t, lib, persona.Specialist, id), Options{Defer: true, MaxTokens: 128_000}); err != nil {
				t.Fatal(err)
			}
		}
		if tokens.Loaded() {
			t.Fatal("composing the deferred prompts loaded the tokenizer")
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDeferredComposeLoadsNoTokenizer$")
	cmd.Env = append(os.Environ(), "SOT_PROMPT_TOKENIZER_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
