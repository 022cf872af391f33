package adversarial

import (
	"slices"
	"testing"
)

// TestGroundTruth pins the harness's own reading of the headers, which
// must not come from the route's code.
func TestGroundTruth(t *testing.T) {
	g := " ops ,\tOPS\t,,cafe\u0301,\u00a0x,"
	got := keys(principalsOf(" alice\t", &g))
	want := []string{"group:OPS", "group:cafe\u0301", "group:ops", "group:\u00a0x", "public", "user:alice"}
	if !slices.Equal(got, want) {
		t.Errorf("principals %q, want %q", got, want)
	}
	p := plan{users: []string{"bob"}, groups: []string{"ops", "admins"}}
	if n := len(p.readings()); n != 3 {
		t.Errorf("%d readings of a duplicated groups header, want 3 (each line, and both joined)", n)
	}
}

// TestHarnessFlagsLeaks feeds the checker responses that a leaking route
// would give, so that a harness that can no longer see a leak fails.
func TestHarnessFlagsLeaks(t *testing.T) {
	acl := map[string][]string{
		markerOf(1): {"group:ops"}, markerOf(2): {"group:OPS"}, markerOf(3): {"public"}, markerOf(4): {"group:caf\u00e9"},
	}
	for _, tc := range []struct {
		name        string
		plan        plan
		status      int
		body        string
		leaks, dups int
	}{
		{"allowed", plan{users: []string{"ann"}, groups: []string{"ops"}}, 200, markerOf(1) + markerOf(3), 0, 0},
		{"another case", plan{users: []string{"ann"}, groups: []string{"ops"}}, 200, markerOf(2), 1, 0},
		{"NFD for NFC", plan{users: []string{"ann"}, groups: []string{"cafe\u0301"}}, 200, markerOf(4), 1, 0},
		{"refused yet served", plan{users: []string{"ann\u00a0"}}, 401, markerOf(3), 1, 0},
		{"unknown marker", plan{users: []string{"ann"}}, 200, "SECRETMARK-99-", 1, 0},
		{"duplicate accepted", plan{users: []string{"ann"}, groups: []string{"ops", "OPS"}}, 200, markerOf(3), 0, 1},
		{"duplicate leaks to one reading", plan{users: []string{"ann"}, groups: []string{"ops", "OPS"}}, 200, markerOf(1), 1, 1},
		{"duplicate refused", plan{users: []string{"ann"}, groups: []string{"ops", "OPS"}}, 401, "", 0, 0},
	} {
		tl := &tally{tried: map[string]int{}, statuses: map[string]map[int]int{}, markers: map[string]int{}, distinct: map[string]bool{}}
		tl.check(tc.plan, acl, result{status: tc.status, body: []byte(tc.body)})
		if len(tl.leaks) != tc.leaks || len(tl.dupAccepted) != tc.dups {
			t.Errorf("%s: %d leaks and %d accepted duplicates, want %d and %d", tc.name, len(tl.leaks), len(tl.dupAccepted), tc.leaks, tc.dups)
		}
	}
}
