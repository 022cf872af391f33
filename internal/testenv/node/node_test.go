package node

import (
	"slices"
	"testing"
)

// A rule's comment is one argument: deleting the rule repeats it as
// iptables printed it, and a comment split at its spaces is refused.
func TestRuleFieldsKeepsAQuotedCommentWhole(t *testing.T) {
	got := ruleFields(`-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`)
	want := []string{"-A", "OUTPUT", "-m", "comment", "--comment", "kubernetes service portals", "-j", "KUBE-SERVICES"}
	if !slices.Equal(got, want) {
		t.Errorf("ruleFields = %q, want %q", got, want)
	}
}

func TestHostIPIsTheRangesFirstAddress(t *testing.T) {
	ip, err := HostIP("10.244.0.0/24")
	if err != nil || ip.String() != "10.244.0.1" {
		t.Errorf("HostIP(10.244.0.0/24) = %v, %v; want 10.244.0.1", ip, err)
	}
	if _, err := HostIP("fd00::/64"); err == nil {
		t.Error("HostIP accepted an IPv6 range; the bed's bridge is IPv4")
	}
}
