package material

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// linkedProject makes a project (with .git) next to a home directory
// holding AWS credentials, with links from the project's docs to both.
func linkedProject(t *testing.T) (project, home string) {
	t.Helper()
	root := t.TempDir()
	project, home = filepath.Join(root, "project"), filepath.Join(root, "home")
	writeFile(t, filepath.Join(project, ".git", "HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(project, "docs", "guide.md"), "# Guide\n")
	writeFile(t, filepath.Join(project, ".env"), "TOKEN=x\n")
	writeFile(t, filepath.Join(home, ".aws", "credentials"), "[default]\naws_secret_access_key = stolen\n")
	writeFile(t, filepath.Join(home, "notes", "todo.md"), "# Todo\n")
	for link, target := range map[string]string{
		"docs/notes.md":    filepath.Join(home, ".aws", "credentials"), // out of the project, to credentials
		"docs/settings.md": filepath.Join("..", ".env"),                // inside, to credentials
		"docs/intro.md":    "guide.md",                                 // inside, to a document
		"docs/ext":         filepath.Join(home, "notes"),               // a directory outside
	} {
		if err := os.Symlink(target, filepath.Join(project, filepath.FromSlash(link))); err != nil {
			t.Skipf("symbolic links: %v", err)
		}
	}
	return project, home
}

func TestArtifactsRefuseLinksOutOfTheProject(t *testing.T) {
	project, home := linkedProject(t)
	t.Chdir(project)
	for _, tt := range []struct{ named, link, target string }{
		{"docs/notes.md", "docs/notes.md", filepath.Join(home, ".aws", "credentials")},
		{"docs/ext/todo.md", "docs/ext", filepath.Join(home, "notes")},
		{"docs/ext", "docs/ext", filepath.Join(home, "notes")},
	} {
		_, err := Artifacts([]string{tt.named})
		if !errors.Is(err, ErrOutsideProject) || !errors.Is(err, ErrNotAFile) {
			t.Errorf("%s: err = %v, want ErrOutsideProject (a usage error)", tt.named, err)
			continue
		}
		target, _ := filepath.EvalSymlinks(tt.target)
		if msg := err.Error(); !strings.Contains(msg, filepath.Join(project, filepath.FromSlash(tt.link))) || !strings.Contains(msg, target) {
			t.Errorf("%s: the error does not name the link %s and its target %s: %v", tt.named, tt.link, target, err)
		}
	}

	// Found in a directory: the link out is listed, never read; a link
	// inside is judged by what it points to.
	m, err := Artifacts([]string{"docs"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"docs/notes.md": reasonLinkOutside, "docs/ext": reasonLinkOutside, "docs/settings.md": reasonSecret}
	if diff := cmp.Diff(want, skippedMap(m)); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"docs/guide.md", "docs/intro.md"}, m.Paths()); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if strings.Contains(m.Text(), "stolen") || strings.Contains(m.Text(), "TOKEN") {
		t.Errorf("credentials reached the material:\n%s", m.Text())
	}

	// Named, a link inside the project to credentials is skipped too.
	m, err = Artifacts([]string{"docs/settings.md"})
	if err != nil || len(m.Files) != 0 || len(m.Skipped) != 1 || m.Skipped[0].Reason != reasonSecret {
		t.Errorf("a link to .env: %+v, %v", m, err)
	}
}

func TestFreeformRefusesLinksOutOfTheProject(t *testing.T) {
	project, home := linkedProject(t)
	t.Chdir(project)
	read := func(name string) (*Material, error) {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return Freeform(name, f)
	}
	_, err := read("docs/notes.md")
	if !errors.Is(err, ErrOutsideProject) || !strings.Contains(err.Error(), filepath.Join(home, ".aws")) {
		t.Errorf("a link out of the project: %v", err)
	}
	m, err := read("docs/settings.md")
	if err != nil || len(m.Files) != 0 || len(m.Skipped) != 1 || m.Skipped[0].Reason != reasonSecret {
		t.Errorf("a link to .env: %+v, %v", m, err)
	}
	if m, err := read("docs/intro.md"); err != nil || len(m.Files) != 1 {
		t.Errorf("a link to a document: %+v, %v", m, err)
	}
}
