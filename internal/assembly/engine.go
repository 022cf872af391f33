package assembly

import (
	"cmp"
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

// NewEngine is the route's turn as its config sets it, searching with
// searcher (NewSearcher's) over p.
func NewEngine(cfg podconfig.RouteConfig, searcher *retrieval.Searcher, p Parts) (*turn.Engine, error) {
	tokens, err := tokenize.NewCL100K()
	if err != nil {
		return nil, fmt.Errorf("chat token counter: %w", err)
	}
	runner := &turn.Engine{
		Chat:     p.Chat,
		Searcher: searcher,
		Prompt: turn.Prompt{Platform: cfg.Prompt.Platform, NotFound: cfg.Prompt.NotFound,
			NotFoundByLanguage: cfg.Prompt.NotFoundByLanguage, Styles: cfg.Prompt.Styles},
		Mode: cfg.Mode,
		Search: turn.SearchSettings{Policy: cfg.Model.SearchPolicy, MaxToolCallsPerRound: int(cfg.Model.MaxToolCallsPerRound),
			Research: cfg.Retrieval.Research, ResearchBelow: cfg.Retrieval.ResearchBelow, FlaggedFragments: cfg.Retrieval.FlaggedFragments},
		Window: turn.Window{ContextTokens: int(cfg.Window.ContextTokens), AnswerReserve: int(cfg.Window.AnswerReserveTokens), Tokens: tokens},
		Answer: turn.AnswerSettings{Mode: cfg.Answer.Mode, MaxTokens: int(cfg.Model.MaxTokens), WhenModelRefuses: cfg.Answer.WhenModelRefuses,
			Grounding: answer.GroundingSettings{Policy: cfg.Answer.Grounding.Policy, Threshold: cfg.Answer.Grounding.SupportThreshold,
				FallbackBelow: cfg.Answer.Grounding.FallbackBelow, Scorer: cfg.Answer.Grounding.Scorer}},
		Agentic: turn.AgenticSettings{ToolProtocol: cfg.ToolProtocol},
		Logger:  p.Logger,
	}
	// Never a typed nil in the interface: the Engine checks for no model.
	if runner.Chat == nil && cfg.Model.BaseURL != "" {
		runner.Chat = Chat(cfg.Model, p.Secrets)
	}
	runner.Answer.Judge = p.Judge
	if runner.Answer.Judge == nil && cfg.Answer.Judge != nil {
		runner.Answer.Judge = Judge(*cfg.Answer.Judge, p.Secrets)
	}
	if a := cfg.Answer.Answerability; a.Applies() {
		runner.Answer.Answerability = &turn.Answerability{Check: cmp.Or(a.Check, podconfig.AnswerabilityOff), MinCoverage: a.MinCoverage,
			MinProbability: a.MinProbability, RequireNames: a.RequireNames, MinRelevance: a.MinRelevance, CalibratedBy: a.CalibratedBy}
	}
	if runner.Answer.Check, err = sharedCheck(cfg, searcher, p); err != nil {
		return nil, fmt.Errorf("grounding check: %w", err)
	}
	if ws := cfg.WebSearch; ws != nil {
		runner.Search.WebSearch = &retrieval.WebSearch{BaseURL: ws.BaseURL, APIKey: p.Secrets.Get(ws.APIKeyEnv), MaxResults: webSearchResults,
			HTTP: &http.Client{Timeout: webSearchHTTPTimeout}}
	}
	return runner, nil
}
