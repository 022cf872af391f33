package answer

import (
	"strings"
	"testing"
)

func TestFenceScrubberRemovesEchoedMarkersAcrossDeltas(t *testing.T) {
	const fence = "⟦data-0a1b2c3d4e5f⟧"
	cases := map[string]struct {
		deltas []string
		want   string
	}{
		"closing marker": {[]string{"Two approvals [S1].\n", fence + " end S1", "\nDone."}, "Two approvals [S1].\n\nDone."},
		"opening line split mid-fence": {[]string{"See below.\n⟦da", "ta-0a1b2c3d4e5f⟧ S2 | Expenses › Approval | handbook/expenses.md\nPaid monthly."},
			"See below.\n\nPaid monthly."},
		"marker at the very end":  {[]string{"Answer. ", fence, " end S3"}, "Answer. "},
		"look-alike text is kept": {[]string{"The ⟦data-", "other⟧ bracket stays."}, "The ⟦data-other⟧ bracket stays."},
		"plain text":              {[]string{"No ", "markers ", "here."}, "No markers here."},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got strings.Builder
			s := NewPipe(func(text string) error { got.WriteString(text); return nil }, NewFenceScrubber(fence))
			for _, d := range tc.deltas {
				if err := s.Write(d); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			if got.String() != tc.want {
				t.Errorf("got %q, want %q", got.String(), tc.want)
			}
		})
	}
}
