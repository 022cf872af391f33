package knowledge

import "testing"

func TestACLFilterQuotesPrincipals(t *testing.T) {
	cases := map[string]struct {
		principals []string
		route      string
		want       string
	}{
		"plain":             {[]string{"group:a", "public"}, "", `array_contains_any(acl, ["group:a", "public"])`},
		"quote":             {[]string{`group:"x"`}, "", `array_contains_any(acl, ["group:\"x\""])`},
		"backslash":         {[]string{`group:x\`}, "", `array_contains_any(acl, ["group:x\\"])`},
		"with route":        {[]string{"public"}, `kind == "screen"`, `(array_contains_any(acl, ["public"])) and (kind == "screen")`},
		"none matches none": {nil, "", `id == ""`},
		"control dropped":   {[]string{"group:a\n"}, "", `id == ""`},
	}
	for name, tc := range cases {
		if got := aclFilter(tc.principals, tc.route); got != tc.want {
			t.Errorf("%s: %s, want %s", name, got, tc.want)
		}
	}
}
