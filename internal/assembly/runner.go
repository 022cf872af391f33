package assembly

import (
	"fmt"
	"net/http"
	"time"

	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// webSearchHTTPTimeout bounds one call of the web search's client.
const webSearchHTTPTimeout = 30 * time.Second

// webSearchResults is how many results one web_search call brings.
const webSearchResults = 5

// NewRunner is the route's turn as its config sets it, searching with
// searcher (NewSearcher's) over p.
func NewRunner(cfg podconfig.RouteConfig, searcher *retrieval.Searcher, p Parts) (*turn.Engine, error) {
	tokens, err := tokenize.NewCL100K()
	if err != nil {
		return nil, fmt.Errorf("chat token counter: %w", err)
	}
	runner := &turn.Engine{
		Chat:     p.Chat,
		Searcher: searcher, Policy: cfg.Model.SearchPolicy, Tokens: tokens,
		ContextTokens: int(cfg.Window.ContextTokens), AnswerReserve: int(cfg.Window.AnswerReserveTokens),
		AnswerMaxTokens: int(cfg.Model.MaxTokens),
		Prompt: turn.Prompt{Platform: cfg.Prompt.Platform, NotFound: cfg.Prompt.NotFound,
			NotFoundByLanguage: cfg.Prompt.NotFoundByLanguage, Styles: cfg.Prompt.Styles},
		MaxToolCallsPerRound: int(cfg.Model.MaxToolCallsPerRound),
		FlaggedFragments:     cfg.Retrieval.FlaggedFragments,
		Mode:                 cfg.Mode,
		ToolProtocol:         cfg.ToolProtocol,
		AnswerMode:           cfg.Answer.Mode,
		Grounding: answer.GroundingSettings{Policy: cfg.Answer.Grounding.Policy, Threshold: cfg.Answer.Grounding.SupportThreshold,
			FallbackBelow: cfg.Answer.Grounding.FallbackBelow},
		Research:      cfg.Retrieval.Research,
		ResearchBelow: cfg.Retrieval.ResearchBelow,
		Logger:        p.Logger,
	}
	// Never a typed nil in the interface: the Engine checks for no model.
	if runner.Chat == nil && cfg.Model.BaseURL != "" {
		runner.Chat = Chat(cfg.Model, p.Secrets)
	}
	if a := cfg.Answer.Answerability; a.Check != "" && a.Check != podconfig.AnswerabilityOff {
		runner.Answerability = &turn.Answerability{Check: a.Check, MinCoverage: a.MinCoverage, MinProbability: a.MinProbability}
	}
	if runner.Check, err = sharedCheck(cfg, searcher, p); err != nil {
		return nil, fmt.Errorf("grounding check: %w", err)
	}
	if ws := cfg.WebSearch; ws != nil {
		runner.WebSearch = &retrieval.WebSearch{BaseURL: ws.BaseURL, APIKey: p.Secrets.Get(ws.APIKeyEnv), MaxResults: webSearchResults,
			HTTP: &http.Client{Timeout: webSearchHTTPTimeout}}
	}
	return runner, nil
}
