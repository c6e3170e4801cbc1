package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/sotlabs/sot/llm"
)

// fail turns an error of the SDK or the transport into an *llm.Error. A
// context ended by the caller is returned as that context's error, wrapped.
// httpResp is the response, when one arrived.
func (p *Provider) fail(ctx context.Context, req *llm.Request, httpResp *http.Response, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s (%s): %w", p.cfg.Name, req.Model, ctx.Err())
	}
	e := &llm.Error{Provider: p.cfg.Name, Model: req.Model, Err: err}
	if httpResp != nil {
		e.RequestID = httpResp.Header.Get("request-id")
	}
	var apiErr *sdk.Error
	var broken *streamBroken
	switch {
	case httpResp != nil && httpResp.StatusCode >= 400:
		msg := ""
		if errors.As(err, &apiErr) {
			msg = apiErr.Message
		}
		if msg == "" {
			msg = llm.BodyMessage(httpResp)
		}
		e.SetHTTPFailure(httpResp, msg, p.cfg.APIKeyEnv)
	case errors.As(err, &apiErr):
		// An error event inside a stream that had started with 200.
		e.Kind = kindForType(string(apiErr.Type()))
		e.Message = llm.Clip(apiErr.Message)
		if e.Message == "" {
			e.Message = "the stream reported an error"
		}
	case llm.IsTimeout(err):
		e.SetTransportFailure(err, false)
	case errors.As(err, &broken):
		e.Kind = llm.ErrBadResponse
		e.Message = llm.Clip(broken.Error())
	default:
		// The answer started but could not be read (cut off, not JSON), or
		// the connection never got through.
		e.SetTransportFailure(err, httpResp != nil)
	}
	return e
}

// kindForType maps an Anthropic error type to a sentinel error.
func kindForType(t string) error {
	switch t {
	case "authentication_error", "permission_error":
		return llm.ErrAuth
	case "rate_limit_error":
		return llm.ErrRateLimited
	case "not_found_error":
		return llm.ErrUnknownModel
	case "timeout_error":
		return llm.ErrTimeout
	case "invalid_request_error", "billing_error", "request_too_large":
		return llm.ErrBadRequest
	}
	// api_error, overloaded_error and anything new.
	return llm.ErrUnavailable
}

func (p *Provider) badResponse(req *llm.Request, httpResp *http.Response, msg string) error {
	e := &llm.Error{Provider: p.cfg.Name, Model: req.Model, Kind: llm.ErrBadResponse, Message: msg}
	if httpResp != nil {
		e.RequestID = httpResp.Header.Get("request-id")
	}
	return e
}
