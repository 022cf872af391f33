package live

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// TerminationMessageMax is the most a container's termination message
// carries: the kubelet keeps the first 4096 bytes of the file.
const TerminationMessageMax = 4096

// Termination is what `eval-route --termination-log` writes for the
// operator (a RouteEvaluation's Job): the summary and as many misses,
// shortened, as fit in the termination message. It is the contract the
// operator decodes, so its JSON names stay stable.
type Termination struct {
	Summary Summary `json:"summary"`
	Misses  Results `json:"misses"`
}

// Bounds of one shortened miss: its question and error are cut, and it
// keeps its first source only.
const (
	terminationQuestionMax = 120
	terminationErrorMax    = 160
)

// EncodeTermination is the report as compact JSON of at most maxBytes: the
// summary, then the misses (shortened, in the results' order) that fit.
// Misses.Questions counts all misses, Misses.Cut those left out.
func EncodeTermination(report Report, maxBytes int) ([]byte, error) {
	var misses []Result
	for _, r := range report.Results {
		if r.Miss {
			misses = append(misses, shortMiss(r))
		}
	}
	head, err := json.Marshal(Termination{Summary: report.Summary})
	if err != nil {
		return nil, fmt.Errorf("encode the termination message: %w", err)
	}
	// head holds an empty misses object; EncodeResults measures its own.
	budget := maxBytes - len(head) + len(`{"questions":0,"cut":0,"results":[]}`)
	if budget < 64 {
		return nil, fmt.Errorf("the summary needs %d bytes: more than the cap of %d", len(head), maxBytes)
	}
	encoded, err := EncodeResults(misses, budget)
	if err != nil {
		return nil, err
	}
	var kept Results
	if err := json.Unmarshal(encoded, &kept); err != nil {
		return nil, fmt.Errorf("encode the termination message: %w", err)
	}
	data, err := json.Marshal(Termination{Summary: report.Summary, Misses: kept})
	if err != nil {
		return nil, fmt.Errorf("encode the termination message: %w", err)
	}
	if len(data) > maxBytes {
		return nil, fmt.Errorf("the termination message needs %d bytes: more than the cap of %d", len(data), maxBytes)
	}
	return data, nil
}

// shortMiss is r cut to what a status reader needs: which question, where
// its gold ranked, the first source it got, and why it failed.
func shortMiss(r Result) Result {
	r.Question = cutString(r.Question, terminationQuestionMax)
	r.Error = cutString(r.Error, terminationErrorMax)
	if len(r.TopSources) > 1 {
		r.TopSources = r.TopSources[:1]
	}
	if len(r.Cited) > 1 {
		r.Cited = r.Cited[:1]
	}
	return r
}

// cutString cuts s to at most n bytes on a rune boundary, marking the cut.
func cutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n-len("…")]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
