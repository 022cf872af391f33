package knowledge

import (
	"slices"
	"strings"
	"testing"
)

func TestACLSetIDsDependOnTheSetOnly(t *testing.T) {
	a := aclSetID([]string{"group:ops", "public", "group:ops"})
	if b := aclSetID([]string{"public", "group:ops"}); a != b {
		t.Errorf("order or repeats changed the id: %d vs %d", a, b)
	}
	if c := aclSetID([]string{"group:ops"}); a == c {
		t.Error("two different sets share an id")
	}
	if a < 0 {
		t.Errorf("id %d is negative", a)
	}
	// Joining must not let two sets collide by concatenation.
	if aclSetID([]string{"group:a", "b"}) == aclSetID([]string{"group:a\x00b"}) {
		t.Error("a principal holding the separator collides with two principals")
	}
}

func TestACLSetsAllowOnlySetsThatGrantAPrincipal(t *testing.T) {
	sets := aclSets{}
	rows := []Row{{ACL: []string{"group:staff"}}, {ACL: []string{"group:ops", "group:staff"}}, {ACL: []string{"group:ops"}}, {ACL: []string{"public"}}}
	if grew, err := sets.add(rows); err != nil || !grew || len(sets) != 4 {
		t.Fatalf("add: grew=%v err=%v sets=%v", grew, err, sets)
	}
	if grew, err := sets.add(rows[:2]); err != nil || grew {
		t.Fatalf("adding known sets again: grew=%v err=%v", grew, err)
	}
	id := func(p ...string) int64 { return aclSetID(p) }
	cases := map[string]struct {
		principals []string
		want       []int64
	}{
		"staff":                {[]string{"group:staff"}, []int64{id("group:staff"), id("group:ops", "group:staff")}},
		"ops and public":       {[]string{"group:ops", "public"}, []int64{id("group:ops", "group:staff"), id("group:ops"), id("public")}},
		"nobody":               {[]string{"group:finance"}, nil},
		"no principals":        {nil, nil},
		"control char dropped": {[]string{"group:ops\n"}, nil},
	}
	for name, tc := range cases {
		want := slices.Sorted(slices.Values(tc.want))
		if got := sets.allowed(tc.principals); !slices.Equal(got, want) {
			t.Errorf("%s: allowed %v, want %v", name, got, want)
		}
	}
}

func TestACLSetTableRefusesWhatWouldWidenAccess(t *testing.T) {
	staff := aclSetID([]string{"group:staff"})
	// A table whose id names another set (a collision, or a tampered
	// property) is refused rather than trusted.
	sets := aclSets{staff: {"group:everyone"}}
	if _, err := sets.add([]Row{{ACL: []string{"group:staff"}}}); err == nil || !strings.Contains(err.Error(), "share id") {
		t.Errorf("add over a colliding id: %v", err)
	}
	value, err := sets.marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseACLSets(value); err == nil {
		t.Error("a table entry that does not match its principals was read")
	}
	good := aclSets{}
	if _, err := good.add([]Row{{ACL: []string{"group:staff", "public"}}}); err != nil {
		t.Fatal(err)
	}
	value, _ = good.marshal()
	back, err := parseACLSets(value)
	if err != nil || len(back) != 1 || !slices.Equal(back[aclSetID([]string{"public", "group:staff"})], []string{"group:staff", "public"}) {
		t.Errorf("round trip: %v, %v", back, err)
	}
}

func TestACLSetFilter(t *testing.T) {
	cases := map[string]struct {
		allowed []int64
		route   string
		want    string
	}{
		"sets":           {[]int64{3, 42}, "", `acl_set in [3, 42]`},
		"with route":     {[]int64{7}, `kind == "screen"`, `(acl_set in [7]) and (kind == "screen")`},
		"none, no rows":  {nil, "", `id == ""`},
		"none and route": {nil, `kind == "screen"`, `(id == "") and (kind == "screen")`},
	}
	for name, tc := range cases {
		if got := aclSetFilter(tc.allowed, tc.route); got != tc.want {
			t.Errorf("%s: %s, want %s", name, got, tc.want)
		}
	}
}
