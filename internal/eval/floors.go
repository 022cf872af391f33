package eval

import (
	"fmt"
	"strings"
)

// FloorPoint says what one strict floor on the question-to-fragment
// similarity would do: the share of unanswerable questions it turns into
// the honest not-found, and the share of answerable ones it wrongly drops.
type FloorPoint struct {
	Floor             float64 `json:"floor"`
	NotFound          float64 `json:"notfound_rate"`
	AnswerableDropped float64 `json:"answerable_dropped"`
}

// floorSweep tries floors on the best similarity each question found.
func floorSweep(answerable, unanswerable []float64) []FloorPoint {
	var out []FloorPoint
	for floor := 0.20; floor < 0.951; floor += 0.05 {
		out = append(out, FloorPoint{Floor: floor, NotFound: shareBelow(unanswerable, floor), AnswerableDropped: shareBelow(answerable, floor)})
	}
	return out
}

func shareBelow(values []float64, floor float64) float64 {
	if len(values) == 0 {
		return 0
	}
	n := 0
	for _, v := range values {
		if v < floor {
			n++
		}
	}
	return float64(n) / float64(len(values))
}

// floorTable renders the sweep under the ablation table.
func floorTable(points []FloorPoint) string {
	if len(points) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nstrict floor on similarity (best fragment per question):\n")
	fmt.Fprintf(&b, "%-28s", "floor")
	for _, p := range points {
		fmt.Fprintf(&b, " %5.2f", p.Floor)
	}
	fmt.Fprintf(&b, "\n%-28s", "unanswerable → not found")
	for _, p := range points {
		fmt.Fprintf(&b, " %5.2f", p.NotFound)
	}
	fmt.Fprintf(&b, "\n%-28s", "answerable dropped")
	for _, p := range points {
		fmt.Fprintf(&b, " %5.2f", p.AnswerableDropped)
	}
	b.WriteString("\n")
	return b.String()
}
