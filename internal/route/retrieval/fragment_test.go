package retrieval

import "testing"

func TestLabelDropsATopHeadingThatRepeatsTheTitle(t *testing.T) {
	cases := []struct {
		title string
		path  []string
		want  string
	}{
		{"Expenses", []string{"Expenses", "How approval works"}, "Expenses › How approval works"},
		{"Expense tool", []string{"New claim screen"}, "Expense tool › New claim screen"},
		{"VPN", nil, "VPN"},
	}
	for _, tc := range cases {
		if got := (Fragment{Title: tc.title, HeadingPath: tc.path}).Label(); got != tc.want {
			t.Errorf("label(%q, %q) = %q, want %q", tc.title, tc.path, got, tc.want)
		}
	}
}
