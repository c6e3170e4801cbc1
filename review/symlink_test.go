package review

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/review/synthesis"
)

const precious = "the victim's own bytes\n"

// symlinkReview is a small review (one specialist, no lens) of a fresh
// repository, against a fake model server.
func symlinkReview(t *testing.T) (*Options, *llmtest.Server) {
	t.Helper()
	repo := benchRepo(t, 1, 12)
	srv := llmtest.NewServer(llmtest.Config{})
	t.Cleanup(srv.Close)
	o := benchOptions(t, repo, srv, "openai:gpt-4.1")
	o.Context.Specialists = "security"
	o.Context.Perspectives = "none"
	return o, srv
}

// plantVictim writes a file outside the repository that an attacker wants
// overwritten, and returns its path.
func plantVictim(t *testing.T) string {
	t.Helper()
	v := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(v, []byte(precious), 0o600); err != nil {
		t.Fatal(err)
	}
	return v
}

func assertUntouched(t *testing.T, victim string) {
	t.Helper()
	if b, err := os.ReadFile(victim); err != nil || string(b) != precious {
		t.Errorf("the file outside the output directory now holds %q (err %v); want it byte for byte as it was", b, err)
	}
}

// assertRefused checks that err refuses the output directory as a usage
// error (exit 2 on the command line) that names the symlink.
func assertRefused(t *testing.T, err error, names string) {
	t.Helper()
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "output_dir" || !strings.Contains(err.Error(), names) {
		t.Errorf("err = %v; want an output_dir error naming %q", err, names)
	}
}

// gitIn runs git in repo.
func gitIn(t *testing.T, repo string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@e", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@e")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// A symlink committed into an output directory, under the name of any file
// sot creates, appends to, locks or replaces there (or the predictable
// temporary names of earlier versions), never makes sot write through it:
// the review is refused, naming the link, before any model is paid for, and
// the file the link points to is left exactly as it was. The link is
// planted before the review is planned, and again between planning and
// running (Execute checks on its own).
func TestReviewRefusesSymlinksInItsOutputDirectory(t *testing.T) {
	links := []string{
		"run.json", "journal.jsonl", "run.lock", "result.json", "resolutions.jsonl",
		"REVIEW-SYNTHESIS.md", "REVIEW-SYNTHESIS.md.tmp", "REVIEW-SECURITY.md.tmp", "review.sarif", "review.sarif.tmp",
	}
	for _, when := range []string{"before planning", "after planning"} {
		for _, link := range links {
			t.Run(when+"/"+link, func(t *testing.T) {
				o, srv := symlinkReview(t)
				victim := plantVictim(t)
				out := o.Context.OutputDir
				plant := func() {
					// What an earlier run leaves, committed by the attacker
					// with the link, so the directory passes for sot's.
					os.MkdirAll(out, 0o755)
					os.WriteFile(filepath.Join(out, ".gitignore"), []byte("*\n"), 0o644)
					if err := os.Symlink(victim, filepath.Join(out, link)); err != nil {
						t.Fatal(err)
					}
					gitIn(t, filepath.Dir(out), "add", "-f", "out")
					gitIn(t, filepath.Dir(out), "commit", "-qm", "an innocent change")
				}
				ctx := context.Background()
				if when == "before planning" {
					plant()
				}
				p, err := Prepare(ctx, o)
				if err == nil {
					if when == "after planning" {
						plant()
					}
					var res *Outcome
					res, err = Execute(ctx, p, o)
					if err == nil {
						_, err = WriteFormats(p.OutputDir, res.Result, []string{"json", "sarif"}, "test")
					}
				}
				assertRefused(t, err, link)
				assertUntouched(t, victim)
				if n := srv.Count(); n != 0 {
					t.Errorf("%d model calls were made for a review that was refused", n)
				}
			})
		}
	}
}

// The machine formats written after a review (review.sarif, review.json)
// refuse a symlink planted once the review has run, and write nothing
// through it.
func TestWriteFormatsRefusesSymlinks(t *testing.T) {
	for _, link := range []string{"review.sarif", "review.sarif.tmp", "review.json"} {
		t.Run(link, func(t *testing.T) {
			o, _ := symlinkReview(t)
			res := runReview(t, o)
			victim := plantVictim(t)
			os.Symlink(victim, filepath.Join(o.Context.OutputDir, link))
			_, err := WriteFormats(o.Context.OutputDir, res.Result, []string{"json", "sarif"}, "test")
			assertRefused(t, err, link)
			assertUntouched(t, victim)
		})
	}
}

// Recording resolutions appends to resolutions.jsonl and rewrites the
// review's files: a finished run whose directory gains a symlink is refused
// when it is loaded, and a run loaded before the link appeared refuses to
// append through it.
func TestResolveRefusesSymlinks(t *testing.T) {
	o, _ := symlinkReview(t)
	runReview(t, o)
	dir := o.Context.OutputDir
	before, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	victim := plantVictim(t)
	os.Symlink(victim, filepath.Join(dir, resolutionsFile))

	_, err = LoadRun(dir)
	assertRefused(t, err, resolutionsFile)
	accept := func(string, []string) (string, error) { return "accept", nil }
	_, err = before.Resolve(accept, new(strings.Builder), "test")
	assertRefused(t, err, resolutionsFile)
	if err := before.Save("test"); err == nil {
		t.Error("a run whose directory holds a symlink was saved")
	}
	assertUntouched(t, victim)
}

// The default output directory, .sot/reviews/<run-id>, can be attacked in
// advance: whoever writes the repository can make .sot/reviews a symlink
// out of the project, or compute the run id and commit links into the
// run's directory. Either way the review is refused and nothing is written
// outside the project, not even a directory.
func TestDefaultOutputDirectoryRefusesSymlinks(t *testing.T) {
	t.Run(".sot/reviews links outside", func(t *testing.T) {
		o, srv := symlinkReview(t)
		o.Context.OutputDir = ""
		repo := o.Dir
		elsewhere := t.TempDir()
		victim := filepath.Join(elsewhere, "authorized_keys")
		os.WriteFile(victim, []byte(precious), 0o600)
		os.MkdirAll(filepath.Join(repo, ".sot"), 0o755)
		os.Symlink(elsewhere, filepath.Join(repo, ".sot", "reviews"))
		gitIn(t, repo, "add", ".sot")
		gitIn(t, repo, "commit", "-qm", "an innocent change")

		p, err := Prepare(context.Background(), o)
		if err == nil {
			_, err = Execute(context.Background(), p, o)
		}
		assertRefused(t, err, filepath.Join(".sot", "reviews")+" is a symlink to "+elsewhere)
		assertUntouched(t, victim)
		if entries, _ := os.ReadDir(elsewhere); len(entries) != 1 {
			t.Errorf("the review wrote into the directory .sot/reviews points at: %v", entries)
		}
		if n := srv.Count(); n != 0 {
			t.Errorf("%d model calls were made for a review that was refused", n)
		}
	})
	t.Run("links in the run's directory, by run id", func(t *testing.T) {
		o, srv := symlinkReview(t)
		o.Context.OutputDir = ""
		first, err := Prepare(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		victim := plantVictim(t)
		dir := filepath.Join(o.Dir, ".sot", "reviews", first.RunID)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*\n"), 0o644)
		os.Symlink(victim, filepath.Join(dir, "run.json"))

		_, err = Prepare(context.Background(), o)
		assertRefused(t, err, "run.json -> "+victim)
		_, err = Execute(context.Background(), first, o)
		assertRefused(t, err, "run.json -> "+victim)
		assertUntouched(t, victim)
		if n := srv.Count(); n != 0 {
			t.Errorf("%d model calls were made for a review that was refused", n)
		}
	})
}

// A review without symlinks writes its files in place and leaves no
// temporary file behind; running it again resumes the same run.
func TestReviewWritesInPlaceWithoutTemporaryFiles(t *testing.T) {
	o, _ := symlinkReview(t)
	o.Fresh = false
	first := runReview(t, o)
	if _, err := WriteFormats(o.Context.OutputDir, first.Result, []string{"json", "sarif"}, "test"); err != nil {
		t.Fatal(err)
	}
	again := runReview(t, o)
	if again.Result.Usage.Replayed == 0 {
		t.Error("the second run replayed nothing from the journal")
	}
	if _, err := WriteFormats(o.Context.OutputDir, again.Result, []string{"json", "sarif"}, "test"); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(o.Context.OutputDir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := []string{".gitignore", "REVIEW-SECURITY.md", "REVIEW-SYNTHESIS.md", "journal.jsonl", "result.json", "review.json", "review.sarif", "run.json", "run.lock"}
	if !slices.Equal(got, want) {
		t.Errorf("the output directory holds %v, want %v", got, want)
	}
}

// Resolve stamps each resolution with the run's clock.
func TestResolveUsesTheRunsClock(t *testing.T) {
	o, _ := symlinkReview(t)
	runReview(t, o)
	r, err := LoadRun(o.Context.OutputDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Result.Items) == 0 { // the fake provider's answers raised nothing: give the walk one finding
		r.Result.Items = append(r.Result.Items, synthesis.Item{ID: "I1", Severity: finding.MustFix, Claim: "The handler trusts its input."})
	}
	at := time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)
	r.Now = func() time.Time { return at }
	accept := func(string, []string) (string, error) { return "accept", nil }
	n, err := r.Resolve(accept, new(strings.Builder), "test")
	if err != nil || n == 0 {
		t.Fatalf("Resolve = %d, %v", n, err)
	}
	b, err := os.ReadFile(filepath.Join(o.Context.OutputDir, resolutionsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var res Resolution
		if err := json.Unmarshal([]byte(line), &res); err != nil || !res.At.Equal(at) {
			t.Errorf("resolution %s: at %v, %v", line, res.At, err)
		}
	}
}
