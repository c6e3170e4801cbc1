// Command fakellm stands in for Simon Willison's llm command in the tests
// and the benchmark of sot debate's command: provider: see
// llmtest.FakeLLM for what it reads and answers.
package main

import (
	"os"

	"github.com/sotlabs/sot/llm/llmtest"
)

func main() {
	os.Exit(llmtest.FakeLLM(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
