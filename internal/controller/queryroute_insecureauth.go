package controller

import (
	"github.com/ragroute/ragroute/api/v1alpha1"
)

// insecureAuthRefusal is the reason a route that trusts identity headers
// from any caller is refused, nil when it does not ask for that or the
// operator's admin allowed it (--allow-insecure-proxy-auth). Whoever may
// edit a QueryRoute could otherwise let any pod that reaches the route
// claim any identity and read the whole store.
func insecureAuthRefusal(route *v1alpha1.QueryRoute, allowed bool) *referenceError {
	p := route.Spec.Auth.TrustedProxy
	if allowed || p == nil || !p.InsecureAllowAnyCaller {
		return nil
	}
	return &referenceError{Reason: v1alpha1.ReasonInsecureProxyAuthNotAllowed,
		Message: "spec.auth.trustedProxy.insecureAllowAnyCaller is not allowed: the operator runs without --allow-insecure-proxy-auth " +
			"(chart value allowInsecureProxyAuth); set secretRef, the shared secret the proxy sends, instead, or ask the operator's admin to allow it"}
}
