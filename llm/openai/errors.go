package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

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
		e.Status = httpResp.StatusCode
		e.Kind = llm.KindForStatus(e.Status)
		e.RetryAfter = llm.ParseRetryAfter(httpResp.Header, time.Now())
		msg := ""
		if errors.As(err, &apiErr) {
			msg = apiErr.Message
		}
		if msg == "" {
			msg = bodyMessage(httpResp)
		}
		e.Message = llm.Clip(msg)
		if e.Kind == llm.ErrAuth {
			e.Message = fmt.Sprintf("the API key was rejected; check %s", p.cfg.APIKeyEnv)
			if msg != "" {
				e.Message += " (" + llm.Clip(msg) + ")"
			}
		}
	case errors.As(err, &apiErr):
		// An error without a response to go with it.
		e.Status = apiErr.StatusCode
		e.Kind = llm.KindForStatus(e.Status)
		e.Message = llm.Clip(apiErr.Message)
	case llm.IsTimeout(err):
		e.Kind = llm.ErrTimeout
		e.Message = "no answer in time"
	case errors.As(err, &streamErr):
		// An error event in the middle of the stream.
		e.Message, e.Kind = streamErrorKind(streamErr.Event.Data)
	case httpResp != nil:
		// The answer started but could not be read: cut off, or not JSON.
		e.Kind = llm.ErrBadResponse
		e.Message = "could not read the answer: " + llm.Clip(err.Error())
	default:
		e.Kind = llm.ErrUnavailable
		e.Message = "could not reach the API: " + llm.Clip(llm.TransportMessage(err))
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

// bodyMessage reads the message of an error body that the SDK could not
// decode: error.message of a JSON body, else the start of the text.
func bodyMessage(r *http.Response) string {
	if r.Body == nil {
		return ""
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil {
		return ""
	}
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &v) == nil && len(v.Error) > 0 {
		var inner struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(v.Error, &inner) == nil && inner.Message != "" {
			return inner.Message
		}
		var s string
		if json.Unmarshal(v.Error, &s) == nil {
			return s
		}
	}
	return strings.TrimSpace(string(b))
}
