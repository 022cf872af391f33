package controller

import (
	"fmt"
	"strings"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// A route's spec.image decides what runs next to the Secrets the route and
// its store reference, so whoever may edit a QueryRoute could otherwise run
// any code with them. The operator admits an override only if the admin's
// allow-list (--allowed-image-prefixes) covers it.

// imageAllowed reports whether route pods may run image. The operator's own
// routeImage is always allowed; any other image must match one of prefixes
// on a boundary, compared as written (no normalisation: "busybox" is not
// "docker.io/library/busybox"):
//
//   - a prefix that ends in "/", ":" or "@" states its own boundary and
//     matches any image that starts with it ("registry.acme.com/" admits the
//     whole registry, "registry.acme.com/ragroute:" every tag of one
//     repository, "registry.acme.com/ragroute@" only digests of it);
//   - otherwise the image must go on with "/" after the prefix, so
//     "registry.acme.com" admits "registry.acme.com/x" but neither
//     "registry.acme.com.evil.io/x" nor "registry.acme.com:5000/x" (another
//     port is another registry);
//   - a prefix that names a repository (it holds a "/") also admits that
//     repository itself, bare or followed by ":" (a tag) or "@" (a digest):
//     "registry.acme.com/ragroute" admits "registry.acme.com/ragroute:1.2"
//     and "registry.acme.com/ragroute/route:1.2", never
//     "registry.acme.com/ragroute-evil".
//
// No other character is a boundary: "registry.acme.com/ragroute-" does not
// admit "registry.acme.com/ragroute-evil". Empty prefixes match nothing.
func imageAllowed(image, routeImage string, prefixes []string) bool {
	if image == routeImage {
		return true
	}
	for _, prefix := range prefixes {
		if prefix == "" || !strings.HasPrefix(image, prefix) {
			continue
		}
		if strings.HasSuffix(prefix, "/") || strings.HasSuffix(prefix, ":") || strings.HasSuffix(prefix, "@") {
			return true
		}
		rest := image[len(prefix):]
		if strings.HasPrefix(rest, "/") {
			return true
		}
		// Past the first "/" the host (and its port) is behind us: a ":" is
		// a tag, an "@" a digest of the named repository.
		if strings.Contains(prefix, "/") && (rest == "" || rest[0] == ':' || rest[0] == '@') {
			return true
		}
	}
	return false
}

// imageRefusal is the reason a route's spec.image is refused, nil when the
// route runs the operator's image or one the allow-list admits.
func imageRefusal(route *v1alpha1.QueryRoute, routeImage string, prefixes []string) *referenceError {
	image := route.Spec.Image
	if image == "" || imageAllowed(image, routeImage, prefixes) {
		return nil
	}
	allowed := "none"
	if len(prefixes) > 0 {
		allowed = strings.Join(prefixes, ",")
	}
	return &referenceError{Reason: v1alpha1.ReasonImageNotAllowed,
		Message: fmt.Sprintf("spec.image %q is not allowed: route pods run the operator's --route-image %q or an image under --allowed-image-prefixes (%s); ask the operator's admin to extend that flag, or remove spec.image",
			image, routeImage, allowed)}
}

// ParseImagePrefixes splits the comma-separated --allowed-image-prefixes,
// dropping blanks.
func ParseImagePrefixes(s string) []string {
	var prefixes []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			prefixes = append(prefixes, p)
		}
	}
	return prefixes
}
