package node

import (
	"net"
	"slices"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
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

// The node's DNS server answers a Service's name with its ClusterIP and
// every other name with NXDOMAIN.
func TestDNSAnswersServicesOnly(t *testing.T) {
	cs := fake.NewClientset(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "support"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.96.7.8"}})
	s := &dnsServer{cs: cs}
	for name, want := range map[string]string{
		"support.team-a.svc.cluster.local.":            "10.96.7.8",
		"SUPPORT.team-a.svc.cluster.local.":            "10.96.7.8",
		"support.team-a.svc.team-a.svc.cluster.local.": "",
		"missing.team-a.svc.cluster.local.":            "",
		"example.com.":                                 "",
	} {
		query := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 7, RecursionDesired: true})
		_ = query.StartQuestions()
		_ = query.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET})
		msg, _ := query.Finish()
		reply, err := s.answer(msg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var m dnsmessage.Message
		if err := m.Unpack(reply); err != nil {
			t.Fatal(err)
		}
		got := ""
		if len(m.Answers) == 1 {
			a := m.Answers[0].Body.(*dnsmessage.AResource).A
			got = net.IP(a[:]).String()
		}
		if got != want || m.ID != 7 || (want == "") != (m.RCode == dnsmessage.RCodeNameError) {
			t.Errorf("%s: %q, rcode %v; want %q", name, got, m.RCode, want)
		}
	}
}
