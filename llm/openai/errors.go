package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

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
		e.RequestID = httpResp.Header.Get("x-request-id")
	}
	var apiErr *sdk.Error
	var streamErr *ssestream.StreamError
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
		// An error without a response to go with it.
		e.Status = apiErr.StatusCode
		e.Kind = llm.KindForStatus(e.Status)
		e.Message = llm.Clip(apiErr.Message)
	case llm.IsTimeout(err):
		e.SetTransportFailure(err, false)
	case errors.As(err, &streamErr):
		// An error event in the middle of the stream.
		e.Message, e.Kind = streamErrorKind(streamErr.Event.Data)
	default:
		// The answer started but could not be read (cut off, not JSON), or
		// the connection never got through.
		e.SetTransportFailure(err, httpResp != nil)
	}
	return e
}

// streamErrorKind reads the message of an SSE error event and classifies it.
func streamErrorKind(data []byte) (msg string, kind error) {
	var v struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(data, &v)
	msg = llm.Clip(v.Error.Message)
	if msg == "" {
		msg = "the stream reported an error"
	}
	switch t := v.Error.Type + " " + fmt.Sprint(v.Error.Code); {
	case strings.Contains(t, "rate_limit") || strings.Contains(t, "requests"):
		return msg, llm.ErrRateLimited
	case strings.Contains(t, "invalid_request"):
		return msg, llm.ErrBadRequest
	}
	return msg, llm.ErrUnavailable
}

func (p *Provider) badResponse(req *llm.Request, httpResp *http.Response, msg string) error {
	e := &llm.Error{Provider: p.cfg.Name, Model: req.Model, Kind: llm.ErrBadResponse, Message: msg}
	if httpResp != nil {
		e.RequestID = httpResp.Header.Get("x-request-id")
	}
	return e
}
