package podconfig

import (
	"errors"
	"fmt"
	"strings"
)

// Judge is a chat model of the route's own for its checks (a QueryRoute's
// spec.answer.judge): the answerability check's model rule asks it in
// place of the chat model, and the grounding check's judge scorer asks it
// about each answer sentence. A route that answers with a small model can
// check with a capable one elsewhere.
type Judge struct {
	BaseURL   string `json:"baseURL"`
	Name      string `json:"name"`
	APIKeyEnv string `json:"apiKeyEnv,omitempty"`
	// CalibratedBy says what measured the judge's precision against a
	// person's labels; strip and fallback with the judge scorer need it.
	CalibratedBy string `json:"calibratedBy,omitempty"`
}

// validateJudge: a judge names its endpoint and model; the judge scorer
// needs a judge, and one that decides what users see (strip, fallback)
// must have been measured.
func (a Answer) validateJudge() []error {
	var errs []error
	if j := a.Judge; j != nil && (j.BaseURL == "" || j.Name == "") {
		errs = append(errs, errors.New("answer.judge.baseURL and answer.judge.name are required: the judge is an OpenAI-compatible chat endpoint and a model it serves"))
	}
	if a.Grounding.Scorer != GroundingJudge {
		return errs
	}
	switch {
	case a.Judge == nil:
		errs = append(errs, errors.New("answer.grounding.scorer judge needs answer.judge"))
	case a.Grounding.Policy != "" && a.Grounding.Policy != GroundingAnnotate && strings.TrimSpace(a.Judge.CalibratedBy) == "":
		errs = append(errs, fmt.Errorf("answer.grounding.scorer judge with policy %s needs answer.judge.calibratedBy: a judge whose precision "+
			"nobody measured must not decide what users see (measure it with ragroute eval-answers --support-only --support-labels test/eval/support "+
			"--judge-base-url … --judge-model …, or use policy annotate)", a.Grounding.Policy))
	}
	return errs
}
