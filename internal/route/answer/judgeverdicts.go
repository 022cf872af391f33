package answer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// claimVerdict is the judge's word on one claim.
type claimVerdict struct {
	Claim     int    `json:"claim"`
	Supported bool   `json:"supported"`
	Fragment  string `json:"fragment"`
}

// rawVerdict is a verdict as read, each field required.
type rawVerdict struct {
	Claim     *int    `json:"claim"`
	Supported *bool   `json:"supported"`
	Fragment  *string `json:"fragment"`
}

// parseVerdicts reads the judge's reply strictly: one JSON object (a
// Markdown code fence around it is the only text allowed besides), no
// field but the schema's, one verdict for each of the n claims, each
// claim once, and a supported one naming a packed fragment. Anything
// else is an error: a reply the check cannot read must not pass a
// sentence.
func parseVerdicts(reply string, n int, markers map[string]bool) ([]claimVerdict, error) {
	text := trimCodeFence(strings.TrimSpace(reply))
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	var r struct {
		Verdicts []rawVerdict `json:"verdicts"`
	}
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("not the verdicts' JSON (%v): %q", err, excerpt(reply))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("text after the verdicts' JSON: %q", excerpt(reply))
	}
	if len(r.Verdicts) != n {
		return nil, fmt.Errorf("%d verdicts for %d claims", len(r.Verdicts), n)
	}
	out := make([]claimVerdict, n)
	seen := make([]bool, n)
	for _, raw := range r.Verdicts {
		if raw.Claim == nil || raw.Supported == nil || raw.Fragment == nil {
			return nil, errors.New("a verdict lacks claim, supported or fragment")
		}
		c := *raw.Claim
		if c < 1 || c > n || seen[c-1] {
			return nil, fmt.Errorf("claim %d: want each of 1-%d once", c, n)
		}
		seen[c-1] = true
		v := claimVerdict{Claim: c, Supported: *raw.Supported}
		if v.Supported {
			if !markers[*raw.Fragment] {
				return nil, fmt.Errorf("claim %d: supported by %q, which is no packed fragment's marker", c, *raw.Fragment)
			}
			v.Fragment = *raw.Fragment
		}
		out[c-1] = v
	}
	return out, nil
}

// trimCodeFence takes the JSON out of a Markdown code fence (```json …
// ```), which models add around JSON unasked; other text stays.
func trimCodeFence(text string) string {
	if !strings.HasPrefix(text, "```") || !strings.HasSuffix(text, "```") || len(text) < 6 {
		return text
	}
	inner := strings.TrimSuffix(text[3:], "```")
	if nl := strings.IndexByte(inner, '\n'); nl >= 0 && !strings.ContainsAny(inner[:nl], "{[") {
		inner = inner[nl+1:] // the fence's info string
	}
	return strings.TrimSpace(inner)
}

// excerpt is the start of a reply for an error message (the log's).
func excerpt(reply string) string {
	const most = 120
	if len(reply) <= most {
		return reply
	}
	return reply[:most] + "…"
}
