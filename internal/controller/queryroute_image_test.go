package controller

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

func TestImageAllowed(t *testing.T) {
	const own = "ragroute/ragroute:0.1.0"
	cases := []struct {
		image    string
		prefixes []string
		want     bool
	}{
		// Without an allow-list only the operator's own image runs.
		{own, nil, true},
		{"ragroute/ragroute:0.2.0", nil, false},
		{"evil.example/miner:latest", nil, false},
		{"", []string{""}, false},

		// A repository prefix: the repository, its tags, digests and sub-paths.
		{"registry.acme.com/ragroute", []string{"registry.acme.com/ragroute"}, true},
		{"registry.acme.com/ragroute:1.2", []string{"registry.acme.com/ragroute"}, true},
		{"registry.acme.com/ragroute@sha256:abc", []string{"registry.acme.com/ragroute"}, true},
		{"registry.acme.com/ragroute/route:1.2", []string{"registry.acme.com/ragroute"}, true},
		{"registry.acme.com/ragroute-evil:1.2", []string{"registry.acme.com/ragroute"}, false},
		{"registry.acme.com/ragroutex", []string{"registry.acme.com/ragroute"}, false},
		{"registry.acme.com/other:1", []string{"registry.acme.com/ragroute"}, false},

		// A host prefix: only paths under it, not look-alike hosts or ports.
		{"registry.acme.com/anything:1", []string{"registry.acme.com"}, true},
		{"registry.acme.com.evil.io/x:1", []string{"registry.acme.com"}, false},
		{"registry.acme.com:5000/x:1", []string{"registry.acme.com"}, false},
		{"registry.acme.com", []string{"registry.acme.com"}, false},
		{"localhost:5000/ragroute:1", []string{"localhost:5000"}, true},
		{"localhost:50001/ragroute:1", []string{"localhost:5000"}, false},

		// A prefix ending in a separator matches as written.
		{"registry.acme.com/anything", []string{"registry.acme.com/"}, true},
		{"registry.acme.com/ragroute:1.2", []string{"registry.acme.com/ragroute:"}, true},
		{"registry.acme.com/ragroute/route:1.2", []string{"registry.acme.com/ragroute:"}, false},
		{"registry.acme.com/ragroute@sha256:abc", []string{"registry.acme.com/ragroute@"}, true},
		{"registry.acme.com/ragroute:1.2", []string{"registry.acme.com/ragroute@"}, false},
		// "-" is no separator: a prefix cannot admit a family of names.
		{"registry.acme.com/ragroute-evil", []string{"registry.acme.com/ragroute-"}, false},

		// No normalisation: a short Docker Hub name is not its long form.
		{"busybox:1.36", []string{"docker.io/library/busybox"}, false},

		// Any one prefix suffices.
		{"ghcr.io/acme/route:2", []string{"registry.acme.com/", "ghcr.io/acme"}, true},
		{"ghcr.io/acmeevil/route:2", []string{"registry.acme.com/", "ghcr.io/acme"}, false},
	}
	for _, tc := range cases {
		if got := imageAllowed(tc.image, own, tc.prefixes); got != tc.want {
			t.Errorf("imageAllowed(%q, %q, %q) = %v, want %v", tc.image, own, tc.prefixes, got, tc.want)
		}
	}
}

func TestImageRefusalNamesImageAndFlag(t *testing.T) {
	route := newRoute("ns", "support", "docs", "default")
	if err := imageRefusal(route, testRouteImage, nil); err != nil {
		t.Errorf("a route without spec.image is refused: %v", err)
	}
	route.Spec.Image = "evil.example/miner:latest"
	err := imageRefusal(route, testRouteImage, []string{"registry.acme.com/"})
	if err == nil {
		t.Fatal("a disallowed image is not refused")
	}
	if err.Reason != v1alpha1.ReasonImageNotAllowed {
		t.Errorf("reason %q", err.Reason)
	}
	for _, want := range []string{`"evil.example/miner:latest"`, "--allowed-image-prefixes", "registry.acme.com/"} {
		if !strings.Contains(err.Message, want) {
			t.Errorf("message %q lacks %s", err.Message, want)
		}
	}
}

func TestParseImagePrefixes(t *testing.T) {
	got := ParseImagePrefixes(" registry.acme.com/ragroute , ,ghcr.io/acme/,")
	if want := []string{"registry.acme.com/ragroute", "ghcr.io/acme/"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ParseImagePrefixes = %q, want %q", got, want)
	}
	if got := ParseImagePrefixes(""); len(got) != 0 {
		t.Errorf("ParseImagePrefixes(\"\") = %q, want none", got)
	}
}
