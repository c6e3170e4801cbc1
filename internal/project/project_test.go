package project

import (
	"os"
	"path/filepath"
	"testing"
)

func TestTop(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"repo/.git", "repo/pkg/deep", "paw/.paw", "paw/work", "plain/sub"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	tests := []struct {
		dir, want string // want "" when there is no project
	}{
		{"repo", "repo"},
		{"repo/pkg/deep", "repo"},
		{"paw/work", "paw"},
		{"plain/sub", ""},
	}
	for _, tt := range tests {
		got, ok := Top(filepath.Join(root, tt.dir))
		want := ""
		if tt.want != "" {
			want = filepath.Join(root, tt.want)
		}
		if got != want || ok != (tt.want != "") {
			t.Errorf("Top(%s) = %q, %v; want %q", tt.dir, got, ok, want)
		}
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		dir, path, want string
		ok              bool
	}{
		{"/p", "/p/a/b", "a/b", true},
		{"/p", "/p", ".", true},
		{"/p", "/pa/b", "", false}, // a shared prefix is not inside
		{"/p", "/q", "", false},
		{"/p/a", "/p", "", false},
	}
	for _, tt := range tests {
		got, ok := Within(filepath.FromSlash(tt.dir), filepath.FromSlash(tt.path))
		if filepath.ToSlash(got) != tt.want || ok != tt.ok {
			t.Errorf("Within(%s, %s) = %q, %v; want %q, %v", tt.dir, tt.path, got, ok, tt.want, tt.ok)
		}
	}
}
