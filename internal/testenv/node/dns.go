package node

import (
	"context"
	"net"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// clusterDomain is the pods' DNS domain, as in most clusters.
const clusterDomain = "cluster.local"

// dnsServer answers the pods' lookups of Services, as CoreDNS does in a
// cluster: <service>.<namespace>.svc.cluster.local is the Service's
// ClusterIP, read from the API server. Every other name is NXDOMAIN, so
// no lookup leaves the machine.
type dnsServer struct {
	conn net.PacketConn
	cs   kubernetes.Interface
	done chan struct{}
}

// startDNS serves DNS over UDP on addr (port 53 of the bridge address: the
// kubelet's clusterDNS).
func startDNS(addr string, cs kubernetes.Interface) (*dnsServer, error) {
	conn, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, err
	}
	s := &dnsServer{conn: conn, cs: cs, done: make(chan struct{})}
	go s.serve()
	return s, nil
}

func (s *dnsServer) serve() {
	defer close(s.done)
	buf := make([]byte, 512)
	for {
		n, from, err := s.conn.ReadFrom(buf)
		if err != nil {
			return // closed by stop
		}
		if reply, err := s.answer(buf[:n]); err == nil {
			_, _ = s.conn.WriteTo(reply, from)
		}
	}
}

// stop closes the server and waits for its loop to end.
func (s *dnsServer) stop() error {
	err := s.conn.Close()
	<-s.done
	return err
}

// answer is the reply to one query: A records of a Service's ClusterIP,
// an empty answer for its other types, NXDOMAIN for any other name.
func (s *dnsServer) answer(query []byte) ([]byte, error) {
	var p dnsmessage.Parser
	header, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	question, err := p.Question()
	if err != nil {
		return nil, err
	}
	reply := dnsmessage.Header{ID: header.ID, Response: true, Authoritative: true, RecursionDesired: header.RecursionDesired}
	ip := net.IP(nil)
	service, namespace, ok := serviceName(question.Name.String())
	if ok {
		ip = s.clusterIP(service, namespace)
	}
	if ip == nil {
		reply.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(make([]byte, 0, 512), reply)
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(question); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	if v4 := ip.To4(); v4 != nil && question.Type == dnsmessage.TypeA {
		rh := dnsmessage.ResourceHeader{Name: question.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 5}
		if err := b.AResource(rh, dnsmessage.AResource{A: [4]byte(v4)}); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}

// serviceName splits <service>.<namespace>.svc.cluster.local.
func serviceName(name string) (service, namespace string, ok bool) {
	rest, found := strings.CutSuffix(strings.ToLower(name), ".svc."+clusterDomain+".")
	if !found {
		return "", "", false
	}
	service, namespace, found = strings.Cut(rest, ".")
	return service, namespace, found && service != "" && namespace != "" && !strings.Contains(namespace, ".")
}

// clusterIP is the Service's ClusterIP, nil when it has none or the API
// server does not answer within a second.
func (s *dnsServer) clusterIP(service, namespace string) net.IP {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	svc, err := s.cs.CoreV1().Services(namespace).Get(ctx, service, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return net.ParseIP(svc.Spec.ClusterIP)
}
