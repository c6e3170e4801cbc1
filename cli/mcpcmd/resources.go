package mcpcmd

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sotlabs/sot/internal/safedir"
	"github.com/sotlabs/sot/persona"
)

func (s *Server) addResources() {
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "run-output", Title: "An output file of a run",
		URITemplate: "sot://runs/{run_id}/{file}", Description: "A file a run wrote: REVIEW-SYNTHESIS.md, ANSWER.md, dialectic-log.md, graph.mmd, review.json, ..."},
		s.readRunFile)
	for _, p := range s.lib.All() {
		p := p
		s.AddResource(&mcp.Resource{Name: string(p.Kind) + "/" + p.ID, Title: p.Title, URI: personaURI(p), MIMEType: "text/markdown",
			Description: fmt.Sprintf("the %s persona %s (%s)", p.Kind, p.ID, p.Level)},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: p.Body}}}, nil
			})
	}
	// The outputs of runs that ended before this server started.
	jobs, _ := s.Jobs.List()
	for _, j := range jobs {
		if j.State != JobRunning {
			s.addOutputs(j)
		}
	}
}

func personaURI(p *persona.Persona) string {
	return "sot://personas/" + string(p.Kind) + "/" + p.ID
}

// addOutputs lists a run's files among the server's resources.
func (s *Server) addOutputs(j Job) {
	for _, f := range s.outputs(j) {
		s.AddResource(&mcp.Resource{Name: j.ID + "/" + f, URI: runURI(j.ID, f), MIMEType: mimeOf(f),
			Description: fmt.Sprintf("%s of %s run %s", f, j.Scenario, j.ID)}, s.readRunFile)
	}
}

func mimeOf(name string) string {
	switch filepath.Ext(name) {
	case ".md":
		return "text/markdown"
	case ".json", ".sarif":
		return "application/json"
	case ".html":
		return "text/html"
	}
	return "text/plain"
}

// readRunFile reads sot://runs/{run_id}/{file}: a file of a run's
// directory, never through a symlink.
func (s *Server) readRunFile(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "sot" || u.Host != "runs" {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	id, file, ok := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	if !ok || file == "" || strings.Contains(file, "/") || !filepath.IsLocal(file) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	j, _, err := s.Jobs.Get(id)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	d, err := safedir.Open(s.top, filepath.Join(s.top, j.Dir))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	if fi, err := d.Lstat(file); err != nil || !fi.Mode().IsRegular() {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	b, err := d.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mimeOf(file), Text: string(b)}}}, nil
}

func (s *Server) addPrompts() {
	prompt := func(name, title, desc string, args []*mcp.PromptArgument, text func(map[string]string) string) {
		s.AddPrompt(&mcp.Prompt{Name: name, Title: title, Description: desc, Arguments: args},
			func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Description: desc, Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text(req.Params.Arguments)}}}}, nil
			})
	}
	or := func(v, d string) string {
		if strings.TrimSpace(v) == "" {
			return d
		}
		return v
	}
	prompt("review", "Review a change", "Review a change with sot's specialists and report the synthesis.",
		[]*mcp.PromptArgument{{Name: "diff", Description: "the git range to review (default: the working tree against HEAD)"}, {Name: "focus", Description: "what to look at hardest"}},
		func(a map[string]string) string {
			return fmt.Sprintf("Call the sot tool review with diff %q and wait true. When it returns, read the resource REVIEW-SYNTHESIS.md from its outputs and report the must-fix findings first, then the rest, keeping any disagreement between specialists visible. %s",
				or(a["diff"], ""), or("Look hardest at: "+a["focus"]+".", ""))
		})
	prompt("ask", "Ask the project's sources", "Answer a question from the project's knowledge sources with sot.",
		[]*mcp.PromptArgument{{Name: "question", Description: "the question", Required: true}},
		func(a map[string]string) string {
			return fmt.Sprintf("Call the sot tool ask with question %q and wait true. When it returns, read ANSWER.md from its outputs and answer with its citations, saying where the sources disagree.", a["question"])
		})
	prompt("debate", "Debate a passage", "Hold a debate over a passage with sot's debaters.",
		[]*mcp.PromptArgument{{Name: "passage", Description: "the passage", Required: true}},
		func(a map[string]string) string {
			return fmt.Sprintf("Call the sot tool debate with the passage below and wait true. When it returns, read dialectic-log.md from its outputs and summarize the positions, where they met and what stayed open.\n\nPassage:\n%s", a["passage"])
		})
}
