package lexical_test

import (
	"fmt"

	"github.com/sotlabs/sot/lexical"
)

func ExampleJaccard() {
	a := lexical.Words("The session cookie lacks the Secure flag.")
	b := lexical.Words("The cookie is set without the Secure flag.")
	fmt.Printf("%.2f\n", lexical.Jaccard(a, b))
	// Output: 0.50
}

func ExampleGrounded() {
	pool := lexical.Pool("The token is not validated before it is written to the cookie.")
	fmt.Println(lexical.Grounded("The token is never validated before it reaches the cookie.", pool))
	fmt.Println(lexical.Grounded("The token is validated before it reaches the cookie.", pool))
	// Output:
	// true
	// false
}

func ExampleNarrative_Check() {
	n := lexical.Narrative{
		Cite:    lexical.Brackets,
		Sources: map[string][]string{"ann.1": {"The retry loop never stops when the upstream keeps failing."}},
	}
	for _, s := range lexical.Sentences("The retry loop never stops [ann.1]. It leaks memory [bob.1].") {
		if v := n.Check(s); v.Flaw == lexical.UnknownID {
			fmt.Printf("%q cites %s, which is no source\n", s, v.Unknown)
		} else {
			fmt.Printf("%q stands: %.0f%% of its words are its sources'\n", s, v.Share*100)
		}
	}
	// Output:
	// "The retry loop never stops [ann.1]." stands: 100% of its words are its sources'
	// "It leaks memory [bob.1]." cites bob.1, which is no source
}
