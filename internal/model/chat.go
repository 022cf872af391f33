package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// ChatConfig says how to reach a chat completions endpoint.
type ChatConfig struct {
	BaseURL     string
	Model       string
	APIKey      string
	Temperature float64
	MaxTokens   int
	// Timeout bounds one whole streamed call.
	Timeout time.Duration
	// IdleTimeout bounds the wait for the stream's next chunk (the first
	// included), apart from Timeout: a model server that stalls mid-answer
	// fails the call at once instead of holding the turn until its end.
	// 0: DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Retry says how a 429, a 503 or a refused or reset connection is
	// retried before the stream starts (never once an answer streams);
	// the zero value is DefaultRetryPolicy.
	Retry RetryPolicy
}

// DefaultIdleTimeout is the idle timeout when ChatConfig sets none: long
// enough for a local model to read a full window before its first token.
const DefaultIdleTimeout = time.Minute

// Causes of a call's own cancellation, told apart from the caller's.
var (
	errCallTimeout = errors.New("the call's timeout passed")
	errIdle        = errors.New("no chunk within the idle timeout")
)

// Message is one chat message. Assistant messages may carry tool calls;
// tool messages answer one by ToolCallID.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// Generation is what one call may ask of the model's sampling, within the
// client's configuration: zero fields keep it.
type Generation struct {
	// MaxTokens lowers the configured maximum answer length; it never
	// raises it.
	MaxTokens int
	// Temperature lowers the configured temperature; it never raises it.
	Temperature *float64
	// Stop ends the answer at any of these strings.
	Stop []string
	// JSONSchema, when set, constrains the reply to JSON that matches it
	// (response_format json_schema: llama.cpp, vLLM, Ollama and OpenAI
	// accept it); for models that write tool calls as prose.
	JSONSchema *JSONSchema
	// TopLogprobs, when set, asks for that many alternatives of the
	// reply's first token with their log-probabilities (Reply.FirstToken):
	// a one-token question read as odds, not as a sample.
	TopLogprobs int
}

// TokenLogprob is one candidate for a token and its log-probability.
type TokenLogprob struct {
	Token   string
	Logprob float64
}

// JSONSchema names a schema the reply must match.
type JSONSchema struct {
	Name   string
	Schema json.RawMessage
}

// Roles of chat messages.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// ToolCall is a tool the model asked for, with JSON arguments.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is offered to the model; Parameters is a JSON schema.
type Tool struct {
	Name        string
	Description string
	Parameters  any
}

// Usage counts tokens of one call, as the server reports them.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Reply is a finished streamed call: the text and the tool calls.
type Reply struct {
	Content   string
	ToolCalls []ToolCall
	Usage     Usage
	// FirstToken are the first token's most likely candidates, when
	// Generation.TopLogprobs asked for them and the server gave them.
	FirstToken []TokenLogprob
}

// Chat streams chat completions from an OpenAI-compatible endpoint.
type Chat struct {
	client *openai.Client
	cfg    ChatConfig
	// retries counts the requests retried (429, 503, refused or reset).
	retries atomic.Int64
}

// Retries is how many requests this client has retried so far.
func (c *Chat) Retries() int64 { return c.retries.Load() }

// NewChat returns a client for cfg.
func NewChat(cfg ChatConfig) *Chat {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Minute
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = cfg.BaseURL
	c := &Chat{cfg: cfg}
	// The context bounds each call; a stream may be long. The transport
	// retries only until a response's status is final: a stream that has
	// begun is never replayed.
	oc.HTTPClient = &http.Client{Transport: cfg.Retry.Transport(nil, &c.retries)}
	c.client = openai.NewClientWithConfig(oc)
	return c
}

// greedyTemperature stands for temperature 0: logits divided by it stay
// finite in float32, and sampling is as good as greedy.
const greedyTemperature = 1e-4

// sampling is the call's temperature and answer limit: the configured
// ones, lowered (never raised) by gen.
func (c *Chat) sampling(gen Generation) (float32, int) {
	temperature, maxTokens := c.cfg.Temperature, c.cfg.MaxTokens
	if gen.MaxTokens > 0 && (maxTokens == 0 || gen.MaxTokens < maxTokens) {
		maxTokens = gen.MaxTokens
	}
	if t := gen.Temperature; t != nil && *t < temperature {
		temperature = *t
		if temperature == 0 {
			// go-openai omits a zero temperature (the server's default
			// would apply). A tiny positive one is greedy too, but not the
			// smallest float: llama.cpp divides the logits by it, and
			// 1e-45 overflows them into noise.
			return greedyTemperature, maxTokens
		}
	}
	return float32(temperature), maxTokens
}

// Stream runs one call. onDelta hears the answer's text as it arrives;
// tool-call fragments are assembled and returned in Reply. tools may be
// nil: then the model must answer. A failure of the call itself is an
// *Error saying its kind; the caller's own cancellation is returned as
// such.
func (c *Chat) Stream(ctx context.Context, messages []Message, tools []Tool, gen Generation, onDelta func(string) error) (Reply, error) {
	caller := ctx
	ctx, cancel := context.WithTimeoutCause(ctx, c.cfg.Timeout, errCallTimeout)
	defer cancel()
	// The idle timer is reset by every chunk; when it fires it cancels the
	// call with errIdle, which fail reports as a timeout.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	idle := time.AfterFunc(c.cfg.IdleTimeout, func() { stop(errIdle) })
	defer idle.Stop()
	// A server that asked to be retried is not idle: the wait before a
	// retry does not count against the idle timeout.
	ctx = withRetryHook(ctx, func(wait time.Duration) { idle.Reset(wait + c.cfg.IdleTimeout) })
	temperature, maxTokens := c.sampling(gen)
	req := openai.ChatCompletionRequest{
		Model:       c.cfg.Model,
		Messages:    toOpenAI(messages),
		Temperature: temperature,
		// max_tokens, not max_completion_tokens: the local servers (llama.cpp,
		// vLLM, Ollama) honour it; OpenAI still accepts it outside o1 models.
		MaxTokens:     maxTokens, //nolint:staticcheck // see above
		Stop:          gen.Stop,
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	if js := gen.JSONSchema; js != nil {
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: js.Name, Schema: js.Schema, Strict: true}}
	}
	if gen.TopLogprobs > 0 {
		req.LogProbs, req.TopLogProbs = true, gen.TopLogprobs
	}
	for _, t := range tools {
		req.Tools = append(req.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
	}
	stream, err := c.client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return Reply{}, c.fail(caller, ctx, fmt.Errorf("chat with %s (model %s): %w", c.cfg.BaseURL, c.cfg.Model, err))
	}
	defer stream.Close()

	var built replyBuilder
	var usage Usage
	// past is a reply that broke its bounds: the stream is closed on
	// return, which ends the server's sending.
	past := func(err error) error {
		return &Error{Kind: ErrInvalidReply, Err: fmt.Errorf("chat stream from %s (model %s): %w", c.cfg.BaseURL, c.cfg.Model, err)}
	}
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return built.reply(usage), c.fail(caller, ctx, fmt.Errorf("chat stream from %s (model %s): %w", c.cfg.BaseURL, c.cfg.Model, capErrorEvent(err)))
		}
		idle.Reset(c.cfg.IdleTimeout)
		if chunk.Usage != nil {
			usage = Usage{PromptTokens: chunk.Usage.PromptTokens, CompletionTokens: chunk.Usage.CompletionTokens}
		}
		for _, choice := range chunk.Choices {
			if lp := choice.Logprobs; lp != nil && len(lp.Content) > 0 {
				built.setFirstToken(lp.Content[0].TopLogprobs, gen.TopLogprobs)
			}
			if d := choice.Delta.Content; d != "" {
				if err := built.addContent(d); err != nil {
					return built.reply(usage), past(err)
				}
				if onDelta != nil {
					if err := onDelta(d); err != nil {
						return built.reply(usage), err
					}
				}
			}
			for i, tc := range choice.Delta.ToolCalls {
				index := i
				if tc.Index != nil {
					index = *tc.Index
				}
				if err := built.addToolCall(index, tc.ID, tc.Function.Name, tc.Function.Arguments); err != nil {
					return built.reply(usage), past(err)
				}
			}
		}
	}
	return built.reply(usage), nil
}

// fail is err, a failed request or stream, as the caller should see it:
// the caller's own cancellation or deadline as such (theirs to report),
// else an *Error of the kind the call's context or the server says.
func (c *Chat) fail(caller, call context.Context, err error) error {
	if cause := context.Cause(caller); cause != nil {
		return fmt.Errorf("%w (%w)", cause, err)
	}
	switch cause := context.Cause(call); cause {
	case errIdle:
		return &Error{Kind: ErrTimeout, Err: fmt.Errorf("no chunk for %s: %w", c.cfg.IdleTimeout, err)}
	case errCallTimeout:
		return &Error{Kind: ErrTimeout, Err: fmt.Errorf("the call ran past %s: %w", c.cfg.Timeout, err)}
	}
	return &Error{Kind: kindOf(err), Err: err}
}

func toOpenAI(messages []Message) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, len(messages))
	for i, m := range messages {
		out[i] = openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			out[i].ToolCalls = append(out[i].ToolCalls, openai.ToolCall{ID: tc.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
		}
	}
	return out
}
