package mcpcmd

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/persona"
)

// Server is sot's MCP server for one project: its tools start runs as sot
// commands (Jobs) and read what those wrote; it holds no scenario logic.
type Server struct {
	*mcp.Server
	Jobs *Jobs

	top     string
	cfg     *config.Config
	lib     *persona.Library
	prices  llm.PriceTable
	version string
}

// Config is what a Server is made from.
type Config struct {
	// Top is the project's top; every path a tool takes stays inside it.
	Top string
	// Exe is the sot executable runs are started with, and Env what their
	// environment gets besides the server's.
	Exe string
	Env []string
	// Config is the user's merged configuration: its budgets are the most
	// a tool call may ask for.
	Config  *config.Config
	Library *persona.Library
	Version string
}

// New makes the server of one project.
func New(c Config) (*Server, error) {
	s := &Server{top: c.Top, cfg: c.Config, lib: c.Library, prices: llm.DefaultPrices().Merge(c.Config.Prices), version: c.Version}
	jobs, err := OpenJobs(c.Top, c.Exe, c.Env, s.listed)
	if err != nil {
		return nil, err
	}
	s.Jobs = jobs
	jobs.onEnd = s.addOutputs
	s.Server = mcp.NewServer(&mcp.Implementation{Name: "sot", Title: "sot: Society of Thought", Version: c.Version}, &mcp.ServerOptions{
		Instructions: instructions,
	})
	s.addTools()
	s.addLookTools()
	s.addResources()
	s.addPrompts()
	return s, nil
}

const instructions = `sot puts material in front of several personas that reason in different ways and writes one result that keeps their disagreements visible.

review, ask and debate start a run in the project and return its run id at once; pass wait: true to wait for the outcome instead (progress notifications come meanwhile). A run goes on when the client disconnects; run_status, run_result (wait: true waits) and run_cancel take its id. Each output file of a run is a resource: sot://runs/{run_id}/{file}. estimate plans a run without calling a model. graph_query and sources_search search an argument graph and the corpus index; resolve records a decision on a review's finding. Budgets are the user's: a tool call may lower them, never raise them.`

// RunID is the input of the tools that take a run.
type RunID struct {
	RunID string `json:"run_id" jsonschema:"the run id review, ask or debate returned"`
	Wait  bool   `json:"wait,omitempty" jsonschema:"run_result only: wait until the run ends, with progress notifications meanwhile"`
}

func (s *Server) addTools() {
	mcp.AddTool(s.Server, &mcp.Tool{Name: "review", Title: "Review a change or documents",
		Description: "Review a git diff (default: the working tree against HEAD), design documents or a text with several specialist personas, each under its perspective lenses, and synthesize one review that keeps their disagreements visible. Writes REVIEW-SYNTHESIS.md and one file per specialist. Returns the run id at once unless wait is true."},
		func(ctx context.Context, req *mcp.CallToolRequest, in ReviewArgs) (*mcp.CallToolResult, Outcome, error) {
			return s.startRun(ctx, req, "review", in.Common, in.Text, func(id, dir string) ([]string, error) {
				return reviewArgs(s.cfg, s.top, in, dir, inputPath(id))
			})
		})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "ask", Title: "Ask a question of the project's sources",
		Description: "Answer a question from the project's knowledge sources: each relevant source is read under a cognitive role, conflicts between sources are found, and the answer cites its sources and keeps the dissent. Writes ANSWER.md. Returns the run id at once unless wait is true."},
		func(ctx context.Context, req *mcp.CallToolRequest, in AskArgs) (*mcp.CallToolResult, Outcome, error) {
			return s.startRun(ctx, req, "ask", in.Common, "", func(id, dir string) ([]string, error) {
				return askArgs(s.cfg, s.top, in, dir)
			})
		})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "debate", Title: "Debate a passage",
		Description: "Debate the interpretation of a passage: debaters argue in rounds, observers pick the questions worth a branch debate, and the result keeps where they agree and where they do not. Writes dialectic-log.md and debate.json. Returns the run id at once unless wait is true."},
		func(ctx context.Context, req *mcp.CallToolRequest, in DebateArgs) (*mcp.CallToolResult, Outcome, error) {
			return s.startRun(ctx, req, "debate", in.Common, in.Passage, func(id, dir string) ([]string, error) {
				return debateArgs(s.cfg, s.top, in, dir, inputPath(id))
			})
		})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "estimate", Title: "Plan a run and price it",
		Description: "Plan a review, a question or a debate without calling a model: the calls it would make, the tokens and the cost, as the command's dry run prints them. Give scenario and that scenario's options."},
		func(ctx context.Context, req *mcp.CallToolRequest, in EstimateArgs) (*mcp.CallToolResult, any, error) {
			return s.estimate(ctx, in)
		})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "run_status", Title: "Where a run is",
		Description: "Say where a run is: running (with the calls done and planned), done, cancelled or interrupted, and what it has cost."},
		func(ctx context.Context, req *mcp.CallToolRequest, in RunID) (*mcp.CallToolResult, Outcome, error) {
			j, _, err := s.Jobs.Get(in.RunID)
			if err != nil {
				return nil, Outcome{}, err
			}
			if j.State == JobRunning {
				if j, err = s.Jobs.refresh(in.RunID); err != nil {
					return nil, Outcome{}, err
				}
			}
			return nil, s.outcome(j), nil
		})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "run_result", Title: "What a run came to",
		Description: "Return a run's outcome: verdict, counts, cost and its output files as resources. With wait, wait until it ends, sending progress notifications meanwhile."},
		func(ctx context.Context, req *mcp.CallToolRequest, in RunID) (*mcp.CallToolResult, Outcome, error) {
			if in.Wait {
				o, err := s.wait(ctx, req, in.RunID)
				return nil, o, err
			}
			j, err := s.Jobs.refresh(in.RunID)
			if err != nil {
				return nil, Outcome{}, err
			}
			return nil, s.outcome(j), nil
		})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "run_cancel", Title: "Cancel a run",
		Description: "Stop a running run as Ctrl-C stops it: its finished calls stay in its journal, and starting the same run again with fresh false pays only for the rest."},
		func(ctx context.Context, req *mcp.CallToolRequest, in RunID) (*mcp.CallToolResult, Outcome, error) {
			j, err := s.Jobs.Cancel(in.RunID)
			if err != nil {
				return nil, Outcome{}, err
			}
			return nil, s.outcome(j), nil
		})
}

// startRun starts a run tool's job and, with Wait, waits for its outcome.
// text, when set, is the material the call gave as text (a freeform
// review's, a passage), kept in the job's input file.
func (s *Server) startRun(ctx context.Context, req *mcp.CallToolRequest, scenario string, c Common, text string, args func(id, dir string) ([]string, error)) (*mcp.CallToolResult, Outcome, error) {
	id := newID(scenario)
	dir := filepath.Join(".sot", outputDirs[scenario], id)
	argv, err := args(id, dir)
	if err != nil {
		return nil, Outcome{}, err
	}
	if text != "" {
		if err := s.Jobs.dir.WriteFile(id+inputSuffix, []byte(text), 0o644); err != nil {
			return nil, Outcome{}, err
		}
	}
	j, err := s.Jobs.Start(id, scenario, argv, dir)
	if err != nil {
		return nil, Outcome{}, err
	}
	if !c.Wait {
		return nil, s.outcome(j), nil
	}
	o, err := s.wait(ctx, req, id)
	return nil, o, err
}

// outputDirs is where each scenario's runs go under .sot.
var outputDirs = map[string]string{"review": "reviews", "ask": "answers", "debate": "debates"}

// inputSuffix names the file that keeps a text a tool call gave (a
// freeform review's text, a passage) beside the job's record.
const inputSuffix = ".input.md"

// inputPath is that file's path for the command, from the project's top.
func inputPath(id string) string { return filepath.Join(jobsDir, id+inputSuffix) }

// wait waits for a run, sending progress notifications when the request
// asked for them. A client that stops waiting leaves the run going.
func (s *Server) wait(ctx context.Context, req *mcp.CallToolRequest, id string) (Outcome, error) {
	token := req.Params.GetProgressToken()
	var progress func(Progress)
	if token != nil {
		// The first notification names the run, so a client cut off
		// before the result can still find it.
		req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Message: "run " + id + " started"})
		progress = func(p Progress) {
			msg := p.Line
			if msg == "" {
				msg = "run " + id
			}
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(p.Done), Total: float64(p.Total), Message: msg})
		}
	}
	j, err := s.Jobs.Wait(ctx, id, progress)
	if err != nil {
		if ctx.Err() != nil {
			return Outcome{}, fmt.Errorf("stopped waiting for run %s, which goes on; run_result gives its outcome later", id)
		}
		return Outcome{}, err
	}
	return s.outcome(j), nil
}

// estimate runs the scenario's dry run and returns the plan it prints.
func (s *Server) estimate(ctx context.Context, in EstimateArgs) (*mcp.CallToolResult, any, error) {
	dir := filepath.Join(".sot", "mcp", "estimate")
	var argv []string
	var err error
	switch in.Scenario {
	case "review":
		r := deref(in.Review)
		if r.Text != "" {
			return nil, nil, errors.New("estimate a freeform review from a file: give artifacts, or a diff")
		}
		argv, err = reviewArgs(s.cfg, s.top, r, dir, "")
	case "ask":
		argv, err = askArgs(s.cfg, s.top, deref(in.Ask), dir)
	case "debate":
		d := deref(in.Debate)
		id := newID("debate")
		if argv, err = debateArgs(s.cfg, s.top, d, dir, inputPath(id)); err == nil && d.Passage != "" {
			if err = s.Jobs.dir.WriteFile(id+inputSuffix, []byte(d.Passage), 0o644); err != nil {
				return nil, nil, err
			}
			defer s.Jobs.dir.Remove(id + inputSuffix)
		}
	default:
		return nil, nil, fmt.Errorf("scenario must be review, ask or debate, not %q", in.Scenario)
	}
	if err != nil {
		return nil, nil, err
	}
	out, err := s.Jobs.Once(ctx, withFlags(argv, "--dry-run", "--stdout=json"))
	if err != nil {
		return nil, nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out}}}, nil, nil
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// withFlags adds flags to a command line before its "--".
func withFlags(argv []string, flags ...string) []string {
	for i, a := range argv {
		if a == "--" {
			return append(append(append([]string(nil), argv[:i]...), flags...), argv[i:]...)
		}
	}
	return append(argv, flags...)
}
