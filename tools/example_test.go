package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sotlabs/sot/tools"
)

func ExampleTools_Call() {
	dir, _ := os.MkdirTemp("", "project")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)

	tl, err := tools.Open(dir, tools.Limits{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tl.Close()
	r, err := tl.Call(context.Background(), "read_file", json.RawMessage(`{"path":"main.go","start":3}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(r.Text)
	fmt.Println(r.Files, r.Cut)
	_, err = tl.Call(context.Background(), "read_file", json.RawMessage(`{"path":"../etc/passwd"}`))
	fmt.Println(err)
	// Output:
	// 3: func main() {}
	// [main.go] false
	// path ../etc/passwd is outside the project; give a path relative to the project top, without .. and not through a symbolic link out
}
