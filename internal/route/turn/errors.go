package turn

import (
	"context"
	"errors"
	"fmt"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// Codes of the error event. A client acts on the code; the message is
// fixed per code and never quotes the failure, which may hold internal
// URLs, addresses and upstream error text: the full error goes to the log
// under the turn id.
const (
	// CodeModelUnavailable: the chat model could not be reached, answered
	// 5xx, or broke off its stream.
	CodeModelUnavailable = "model_unavailable"
	// CodeModelTimeout: the chat model sent nothing for its idle timeout,
	// or one call ran past its own deadline.
	CodeModelTimeout = "model_timeout"
	// CodeRateLimited: the chat model answered 429.
	CodeRateLimited = "rate_limited"
	// CodeModelError: the chat model refused the request (another 4xx: an
	// API key, a model name, a prompt over its context), or sent a reply
	// past the client's bounds (model.MaxReplyBytes, model.MaxToolCalls).
	CodeModelError = "model_error"
	// CodeKnowledgeUnavailable: a dependency besides the chat model failed
	// (DependencyError): the knowledge search, the web search, the
	// grounding check's embedder, the judge.
	CodeKnowledgeUnavailable = "knowledge_unavailable"
	// CodeEmbedderMismatch: the knowledge index serving was built by
	// another embedder than the route's (retrieval.EmbedderMismatchError):
	// nothing is searched until an ingestion with the route's embedder
	// swaps in a new generation.
	CodeEmbedderMismatch = "embedder_mismatch"
	// CodeAnalyzerMismatch: the knowledge index serving was built by
	// another keyword analyzer than the route's
	// (retrieval.AnalyzerMismatchError): nothing is searched until an
	// ingestion with the route's analyzer swaps in a new generation.
	CodeAnalyzerMismatch = "analyzer_mismatch"
	// CodeTimeout: the whole turn ran past its time limit.
	CodeTimeout = "timeout"
	// CodeCancelled: the turn was cancelled (the client left, or the
	// replica is shutting down).
	CodeCancelled = "cancelled"
	// CodeInternal: anything else.
	CodeInternal = "internal"
)

// ErrorMessage is what a client is told for code.
func ErrorMessage(code string) string {
	switch code {
	case CodeModelUnavailable:
		return "The chat model is unavailable; try again later."
	case CodeModelTimeout:
		return "The chat model stopped responding."
	case CodeRateLimited:
		return "The chat model is over its rate limit; try again shortly."
	case CodeModelError:
		return "The chat model refused the request or sent an invalid reply."
	case CodeKnowledgeUnavailable:
		return "The knowledge search is unavailable; try again later."
	case CodeEmbedderMismatch:
		return "The knowledge index was built by another embedding model than this route's; it answers again once the index is rebuilt."
	case CodeAnalyzerMismatch:
		return "The knowledge index was built with other keyword-search languages than this route's; it answers again once the index is rebuilt."
	case CodeTimeout:
		return "The turn ran past its time limit."
	case CodeCancelled:
		return "The turn was cancelled."
	default:
		return "The turn failed."
	}
}

// Dependency names a service a turn depends on besides the chat model.
type Dependency string

// The dependencies a DependencyError names.
const (
	// DependencyKnowledge: the knowledge search (Milvus, the query
	// embedder, the reranker).
	DependencyKnowledge Dependency = "knowledge search"
	// DependencyWebSearch: the web search endpoint.
	DependencyWebSearch Dependency = "web search"
	// DependencyGroundingCheck: the embedder behind the grounding check
	// and the extractive answer's quotes.
	DependencyGroundingCheck Dependency = "grounding check"
	// DependencyJudge: the route's judge model (answer.judge), asked by
	// the answerability check or the grounding check's judge scorer.
	DependencyJudge Dependency = "judge"
)

// DependencyError is a failure of a dependency other than the chat model
// (whose failures are model.Errors): a client hears
// knowledge_unavailable, the log the dependency and its error.
type DependencyError struct {
	Dependency Dependency
	Err        error
}

func (e *DependencyError) Error() string { return string(e.Dependency) + ": " + e.Err.Error() }

func (e *DependencyError) Unwrap() error { return e.Err }

// ErrorCode classifies a failed turn (or search). The turn's own deadline or
// cancellation comes first: whatever failed after it is its consequence.
func ErrorCode(ctx context.Context, err error) string {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return CodeTimeout
	case ctx.Err() != nil:
		return CodeCancelled
	}
	var modelErr *model.Error
	var dependencyErr *DependencyError
	var mismatch *retrieval.EmbedderMismatchError
	var analyzerMismatch *retrieval.AnalyzerMismatchError
	switch {
	case errors.As(err, &mismatch):
		return CodeEmbedderMismatch
	case errors.As(err, &analyzerMismatch):
		return CodeAnalyzerMismatch
	case errors.As(err, &dependencyErr):
		// Before the model's kinds: the judge is a chat model too, and a
		// client must not read its failure as the chat model's.
		return CodeKnowledgeUnavailable
	case errors.As(err, &modelErr):
		switch modelErr.Kind {
		case model.ErrTimeout:
			return CodeModelTimeout
		case model.ErrRateLimited:
			return CodeRateLimited
		case model.ErrRefused, model.ErrInvalidReply:
			return CodeModelError
		default:
			return CodeModelUnavailable
		}
	case errors.Is(err, context.DeadlineExceeded):
		return CodeTimeout
	case errors.Is(err, context.Canceled):
		return CodeCancelled
	}
	return CodeInternal
}

// turnError is the error event of a turn that failed with err: its code
// and that code's fixed message, with the turn id to quote to whoever
// reads the log.
func turnError(ctx context.Context, turnID string, err error) Failed {
	code := ErrorCode(ctx, err)
	return Failed{Code: code, Message: fmt.Sprintf("%s (turn %s)", ErrorMessage(code), turnID)}
}
