package podconfig

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// validateURLs refuses an issuer or JWKS URL that is neither https:// nor
// http:// on loopback: keys fetched in the clear off the machine could be
// swapped on the way, and every token they verify forged.
func (j JWT) validateURLs() []error {
	var errs []error
	for _, f := range []struct{ name, value string }{{"auth.jwt.issuer", j.Issuer}, {"auth.jwt.jwksURL", j.JWKSURL}} {
		if f.value == "" {
			continue
		}
		if err := secureOrLoopback(f.value); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.name, err))
		}
	}
	return errs
}

// secureOrLoopback accepts https URLs, and http URLs whose host is
// localhost, 127.0.0.1 or ::1.
func secureOrLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", raw)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		if host := u.Hostname(); host == "localhost" || host == "127.0.0.1" || net.ParseIP(host).Equal(net.IPv6loopback) {
			return nil
		}
		return fmt.Errorf("%q must be https:// unless its host is localhost, 127.0.0.1 or [::1]", u.Redacted())
	}
	return fmt.Errorf("%q must be https://", u.Redacted())
}
