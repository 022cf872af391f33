package podconfig

import (
	"strings"
	"testing"
)

// Every enum of the config is checked where the config is loaded, naming
// the field and the values it takes; empty takes the default where the
// runtime has one.
func TestValidateRefusesUnknownEnumValuesNamingTheField(t *testing.T) {
	cases := map[string]struct {
		edit func(*RouteConfig)
		want string
	}{
		"mode":             {func(c *RouteConfig) { c.Mode = "loop" }, `mode "loop": want singleRound or agentic`},
		"mode unset":       {func(c *RouteConfig) { c.Mode = "" }, `mode "": want singleRound or agentic`},
		"search policy":    {func(c *RouteConfig) { c.Model.SearchPolicy = "never" }, `model.searchPolicy "never"`},
		"rerank mode":      {func(c *RouteConfig) { c.Rerank.Mode = "llm" }, `rerank.mode "llm"`},
		"cache backend":    {func(c *RouteConfig) { c.Cache.Backend = "disk" }, `cache.backend "disk"`},
		"turns backend":    {func(c *RouteConfig) { c.Turns.Backend = "disk" }, `turns.backend "disk"`},
		"flagged policy":   {func(c *RouteConfig) { c.Retrieval.FlaggedFragments = "ignore" }, `retrieval.flaggedFragments "ignore": want keep, drop or quarantine`},
		"answer mode":      {func(c *RouteConfig) { c.Answer.Mode = "summary" }, `answer.mode "summary"`},
		"grounding policy": {func(c *RouteConfig) { c.Answer.Grounding.Policy = "block" }, `answer.grounding.policy "block"`},
		"answerability check": {func(c *RouteConfig) { c.Answer.Answerability.Check = "judge" },
			`answer.answerability.check "judge": want off, coverage or model`},
		"answerability coverage over 1": {func(c *RouteConfig) { c.Answer.Answerability.MinCoverage = 1.5 },
			"answer.answerability.minCoverage 1.5 is outside 0-1"},
		"answerability probability below 0": {func(c *RouteConfig) { c.Answer.Answerability.MinProbability = -0.1 },
			"answer.answerability.minProbability -0.1 is outside 0-1"},
		"answerability relevance over 1": {func(c *RouteConfig) { c.Answer.Answerability.MinRelevance = 2 },
			"answer.answerability.minRelevance 2 is outside 0-1"},
		"model refusal": {func(c *RouteConfig) { c.Answer.WhenModelRefuses = "retry" },
			`answer.whenModelRefuses "retry": want accept, quote or askAgain`},
		"model answerability without a model": {func(c *RouteConfig) {
			c.Answer.Answerability.Check, c.Model.BaseURL = AnswerabilityModel, ""
		}, "answer.answerability.check model needs a chat model (model.baseURL)"},
		"grounding scorer": {func(c *RouteConfig) { c.Answer.Grounding.Scorer = "llm" },
			`answer.grounding.scorer "llm": want similarity or judge`},
		"judge scorer without a judge": {func(c *RouteConfig) { c.Answer.Grounding.Scorer = GroundingJudge },
			"answer.grounding.scorer judge needs answer.judge"},
		"judge without a base URL": {func(c *RouteConfig) { c.Answer.Judge = &Judge{Name: "big"} },
			"answer.judge.baseURL and answer.judge.name are required"},
		"judge without a name": {func(c *RouteConfig) { c.Answer.Judge = &Judge{BaseURL: "http://judge/v1"} },
			"answer.judge.baseURL and answer.judge.name are required"},
		"strip by an uncalibrated judge": {func(c *RouteConfig) {
			c.Answer.Grounding = Grounding{Policy: GroundingStrip, Scorer: GroundingJudge}
			c.Answer.Judge = &Judge{BaseURL: "http://judge/v1", Name: "big"}
		}, "answer.grounding.scorer judge with policy strip needs answer.judge.calibratedBy"},
		"fallback by an uncalibrated judge": {func(c *RouteConfig) {
			c.Answer.Grounding = Grounding{Policy: GroundingFallback, Scorer: GroundingJudge}
			c.Answer.Judge = &Judge{BaseURL: "http://judge/v1", Name: "big", CalibratedBy: " "}
		}, "answer.grounding.scorer judge with policy fallback needs answer.judge.calibratedBy"},
		"metrics on the API's port": {func(c *RouteConfig) { c.Server.MetricsPort = c.Server.Port },
			"server.metricsPort 8080 is server.port"},
		"metrics port out of range":   {func(c *RouteConfig) { c.Server.MetricsPort = 70000 }, "server.metricsPort 70000 is outside 1-65535"},
		"redis backend without redis": {func(c *RouteConfig) { c.Turns.Backend = BackendRedis }, "a redis backend needs redis.address"},
		"feedback without retention":  {func(c *RouteConfig) { c.Feedback = Feedback{Enabled: true} }, "feedback.retention 0s must be positive"},
		"negative store slots": {func(c *RouteConfig) { c.Limits.MaxSearchesInFlight = -1 },
			"limits.maxSearchesInFlight -1 is negative"},
		"redis without address":  {func(c *RouteConfig) { c.Redis = &Redis{} }, "redis.address is required"},
		"redis without seal key": {func(c *RouteConfig) { c.Redis = &Redis{Address: "r:6379"} }, "redis.sealKeyEnv is required"},
		"redis user without password": {func(c *RouteConfig) { c.Redis = &Redis{Address: "r:6379", SealKeyEnv: "K", Username: "route"} },
			"redis.username needs redis.passwordEnv"},
		"cross-encoder without endpoint": {func(c *RouteConfig) { c.Rerank.Mode = RerankCrossEncoder },
			"rerank.mode crossEncoder needs rerank.crossEncoder"},
		"negative first-stage weight": {func(c *RouteConfig) {
			c.Rerank = Rerank{Mode: RerankCrossEncoder, CrossEncoder: &CrossEncoder{BaseURL: "http://r/v1", Model: "r", FirstStageWeight: -1}}
		}, "rerank.crossEncoder.firstStageWeight -1 is outside [0, 10]"},
		"not-found wording for a language the route cannot tell": {func(c *RouteConfig) {
			c.Prompt.NotFoundByLanguage = map[string]string{"de": "Nicht gefunden."}
		}, `prompt.notFoundByLanguage: "de" is not a language the route tells apart ([en ru])`},
		"blank not-found wording for a language": {func(c *RouteConfig) {
			c.Prompt.NotFoundByLanguage = map[string]string{"ru": " "}
		}, "prompt.notFoundByLanguage[ru] is empty"},
		"relative strict floor with a cross-encoder": {func(c *RouteConfig) {
			four := 4.0
			c.Rerank = Rerank{Mode: RerankCrossEncoder, CrossEncoder: &CrossEncoder{BaseURL: "http://r/v1", Model: "r"}}
			c.Retrieval.StrictFloorSigmas = &four
		}, "strictFloorSigmas needs rerank.mode rrf"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := validConfig()
			tc.edit(&c)
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	c := validConfig()
	c.Model.SearchPolicy, c.Rerank.Mode, c.Cache.Backend, c.Turns.Backend = "", "", "", ""
	c.Retrieval.FlaggedFragments, c.Answer.Mode, c.Answer.Grounding.Policy = "", "", ""
	if err := c.Validate(); err != nil {
		t.Errorf("empty enums take their defaults, yet: %v", err)
	}
}

// A judge annotates unmeasured; it decides what users see (strip,
// fallback) once calibratedBy says what measured it.
func TestValidateAcceptsAJudge(t *testing.T) {
	for _, g := range []Grounding{{Scorer: GroundingJudge}, {Policy: GroundingAnnotate, Scorer: GroundingJudge}, {Policy: GroundingStrip}} {
		c := validConfig()
		c.Answer.Grounding, c.Answer.Judge = g, &Judge{BaseURL: "http://judge/v1", Name: "big"}
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", g, err)
		}
	}
	c := validConfig()
	c.Answer.Grounding = Grounding{Policy: GroundingFallback, Scorer: GroundingJudge}
	c.Answer.Judge = &Judge{BaseURL: "http://judge/v1", Name: "big", CalibratedBy: "eval-answers --support-only, precision 0.9"}
	if err := c.Validate(); err != nil {
		t.Errorf("a calibrated judge under fallback: %v", err)
	}
}
