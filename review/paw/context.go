// Package paw reads the files of a project that set a review's context: a
// YAML or JSON context file and PAW's WorkflowContext.md. It merges them
// with the flags, and it decides what a project file the user did not
// trust may set: no program to run, no place outside the project to write,
// no persona file outside the project.
package paw

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/internal/project"
	"github.com/sotlabs/sot/persona"
	"github.com/sotlabs/sot/review"
)

// ContextInputs is what a front end gathered for ResolveContext: the
// context its flags set, the files the user named, and how to judge them.
type ContextInputs struct {
	// Flags is the context the flags set; a set field wins over the files.
	Flags review.Context
	// Mode and Models are --mode and --models.
	Mode   string
	Models []string
	// ContextFile is a YAML or JSON context file, WorkflowContext a PAW
	// WorkflowContext.md; either may be empty.
	ContextFile     string
	WorkflowContext string
	// Dir is the working directory; Config the configuration.
	Dir    string
	Config *config.Config
	// Trust reports whether the user trusted a project file as it is now
	// (and whether that trust lapsed).
	Trust func(path string) config.TrustCheck
}

// ResolvedContext is the merged context and the mode and models it implies.
type ResolvedContext struct {
	Context review.Context
	Mode    string
	Models  []string
}

// WorkflowDisabledError is a WorkflowContext.md that says "Final Agent
// Review: disabled": no review runs.
type WorkflowDisabledError struct {
	Path string
	Line int
}

func (e *WorkflowDisabledError) Error() string {
	return fmt.Sprintf("%s:%d: Final Agent Review is disabled", e.Path, e.Line)
}

// ResolveContext merges the flags, the context file and the
// WorkflowContext.md, in that order of precedence. A project file the user
// did not trust may not choose a program to run, a place outside the
// project to write, or persona files outside the project; each setting
// dropped for that is a warning, as is a lapsed trust. Warnings are
// returned even with an error.
func ResolveContext(in ContextInputs) (ResolvedContext, []string, error) {
	cfg := in.Config
	var warns []string
	c := in.Flags
	if in.ContextFile != "" {
		fc, err := LoadFile(in.ContextFile)
		if err != nil {
			return ResolvedContext{}, warns, err
		}
		file := newProjectFile(in, in.ContextFile, &warns)
		if c.SpecialistModels == "" {
			if err := CheckFileModels(in.ContextFile, fc, cfg); err != nil {
				return ResolvedContext{}, warns, err
			}
			fc.SpecialistModels = file.models(cfg, "specialist_models", fc.SpecialistModels)
		}
		if c.OutputDir == "" {
			fc.OutputDir = file.outputDir(fc.OutputDir)
		}
		if c.Specialists == "" {
			fc.Specialists = file.specialists("specialists", fc.Specialists)
		}
		c.Merge(fc)
	}
	mode, models := in.Mode, in.Models
	if in.WorkflowContext != "" {
		wf, err := LoadWorkflow(in.WorkflowContext)
		if err != nil {
			return ResolvedContext{}, warns, err
		}
		if wf.Disabled {
			return ResolvedContext{}, warns, &WorkflowDisabledError{wf.Path, wf.DisabledLine}
		}
		// Check only the models this run will use: a flag overrides a
		// field, and single-model mode uses neither list.
		check := wf
		if c.SpecialistModels != "" {
			check.Context.SpecialistModels = ""
		}
		if len(models) > 0 {
			check.Models = nil
		}
		if cmp.Or(mode, wf.Mode) == review.ModeSingleModel {
			check.Context.SpecialistModels, check.Models = "", nil
		}
		if err := check.CheckModels(cfg); err != nil {
			return ResolvedContext{}, warns, err
		}
		file := newProjectFile(in, in.WorkflowContext, &warns)
		if c.SpecialistModels == "" {
			wf.Context.SpecialistModels = file.models(cfg, "Final Review Specialist Models", wf.Context.SpecialistModels)
		}
		if c.Specialists == "" {
			wf.Context.Specialists = file.specialists("Final Review Specialists", wf.Context.Specialists)
		}
		if len(models) == 0 && len(wf.Models) > 0 {
			var kept []string
			for _, m := range strings.Split(file.models(cfg, "Final Review Models", strings.Join(wf.Models, ",")), ",") {
				if m = strings.TrimSpace(m); m != "" {
					kept = append(kept, m)
				}
			}
			wf.Models = kept
		}
		if mode == "" {
			mode = wf.Mode
		}
		wc := wf.Context
		if mode == review.ModeSingleModel || mode == review.ModeMultiModel {
			// A WorkflowContext.md carries the Final Review fields of every
			// mode; those of society-of-thought do not apply here.
			// Multi-model takes its models from Final Review Models, or else
			// from the pool of Final Review Specialist Models.
			wc.Specialists, wc.Perspectives, wc.InteractionMode = "", "", ""
			if mode == review.ModeSingleModel {
				wc.SpecialistModels = ""
			} else if len(models) == 0 {
				models = wf.Models
			}
		}
		c.Merge(wc)
	}
	return ResolvedContext{Context: c, Mode: mode, Models: models}, warns, nil
}

// projectFile is a file of the reviewed project that sets review options.
type projectFile struct {
	path    string
	trusted bool   // read once: the file and the trust store
	top     string // the project's top
	warns   *[]string
}

func newProjectFile(in ContextInputs, path string, warns *[]string) *projectFile {
	top, _ := project.Top(in.Dir)
	var check config.TrustCheck
	if in.Trust != nil {
		check = in.Trust(path)
	}
	if check.Lapsed != "" {
		*warns = append(*warns, config.LapsedWarning(path, check.Lapsed))
	}
	return &projectFile{path: path, trusted: check.Trusted, top: top, warns: warns}
}

// inside reports whether path, with symbolic links resolved, lies inside
// the project.
func (pf *projectFile) inside(path string) bool {
	_, ok := project.ResolvedWithin(pf.top, path)
	return ok
}

// outputDir keeps an output_dir that lies inside the project.
func (pf *projectFile) outputDir(dir string) string {
	if dir == "" || pf.trusted || pf.inside(dir) {
		return dir
	}
	*pf.warns = append(*pf.warns, fmt.Sprintf("%s is not trusted, so sot ignored its output_dir %s, which lies outside the project (%s); the review goes to the default directory; pass --output-dir, or trust the file with: sot trust %s",
		pf.path, strconv.Quote(dir), pf.top, pf.path))
	return ""
}

// specialists drops every persona file named by a path outside the project.
func (pf *projectFile) specialists(field, list string) string {
	if !strings.ContainsAny(list, `/\.`) {
		return list
	}
	return pf.list(field, list, "persona files outside the project", func(name string) bool {
		return persona.IsPath(name) && !pf.inside(name)
	})
}

// models drops every model that would run a program.
func (pf *projectFile) models(cfg *config.Config, field, list string) string {
	return pf.list(field, list, "it could run a program", func(item string) bool {
		model := item
		if ms, err := review.ParseModelsFor(item, cfg); err == nil {
			for _, m := range ms.Pinned {
				model = m
			}
			if len(ms.Pool) == 1 {
				model = ms.Pool[0]
			}
		}
		return cfg.RunsProgram(model)
	})
}

// list drops from a comma list every entry for which drop is true; one
// warning names the entries, the field, why, and how to trust the file.
func (pf *projectFile) list(field, list, why string, drop func(string) bool) string {
	if strings.TrimSpace(list) == "" || pf.trusted {
		return list
	}
	var kept, dropped []string
	for _, item := range strings.Split(list, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		if drop(item) {
			dropped = append(dropped, strconv.Quote(item))
			continue
		}
		kept = append(kept, item)
	}
	if len(dropped) == 0 {
		return list
	}
	*pf.warns = append(*pf.warns, fmt.Sprintf("%s is not trusted, so sot ignored %s in %s (%s); if you wrote this file or have read it, trust it as it is now with: sot trust %s",
		pf.path, strings.Join(dropped, ", "), field, why, pf.path))
	return strings.Join(kept, ", ")
}
