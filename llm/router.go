package llm

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Router sends each request to the provider named by its model reference.
type Router map[string]Provider

// Complete dispatches on the provider part of req.Model.
func (r Router) Complete(ctx context.Context, req *Request) (*Response, error) {
	m, err := ParseModel(req.Model)
	if err != nil {
		return nil, &Error{Provider: "sot", Kind: ErrUnknownProvider, Message: err.Error()}
	}
	p, ok := r[m.Provider]
	if !ok {
		return nil, &Error{Provider: m.Provider, Model: req.Model, Kind: ErrUnknownProvider,
			Message: fmt.Sprintf("no provider %q is configured; known providers: %s", m.Provider, strings.Join(r.Names(), ", "))}
	}
	return p.Complete(ctx, req)
}

// Names lists the configured providers, sorted.
func (r Router) Names() []string {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
