package controller

import (
	"strings"
	"testing"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// A route that trusts any caller deploys only under an operator run with
// --allow-insecure-proxy-auth; routes whose callers prove themselves are
// never refused for it.
func TestInsecureProxyAuthNeedsTheOperatorsFlag(t *testing.T) {
	anyCaller := proxiedRoute()
	anyCaller.Spec.Auth.TrustedProxy.SecretRef = nil
	anyCaller.Spec.Auth.TrustedProxy.InsecureAllowAnyCaller = true

	refusal := insecureAuthRefusal(anyCaller, false)
	if refusal == nil || refusal.Reason != v1alpha1.ReasonInsecureProxyAuthNotAllowed ||
		!strings.Contains(refusal.Message, "--allow-insecure-proxy-auth") || !strings.Contains(refusal.Message, "insecureAllowAnyCaller") {
		t.Errorf("flag off: refusal %+v", refusal)
	}
	if refusal := insecureAuthRefusal(anyCaller, true); refusal != nil {
		t.Errorf("flag on: refused with %+v", refusal)
	}
	for name, route := range map[string]*v1alpha1.QueryRoute{"shared secret": proxiedRoute(), "jwt": fullInputs().route} {
		if refusal := insecureAuthRefusal(route, false); refusal != nil {
			t.Errorf("%s route refused: %+v", name, refusal)
		}
	}
}
