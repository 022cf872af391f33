package controller

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// A labelled Secret may be read for any reference in its namespace, so
// without a binding whoever may edit a QueryRoute or KnowledgeStore could
// name another route's key (or its proxy secret) as an API key and send it
// to a host of their own. The Secret's owner therefore lists the hosts its
// value may be sent to, and the operator refuses every other destination.

// allowedHostsAnnotation lists, comma-separated, the hosts a Secret may be
// sent to: "host" (any port of that host) or "host:port" (that port only;
// an IPv6 address in brackets, "[fd00::1]:8080"). Hosts compare without
// case and a trailing dot; there are no wildcards.
const allowedHostsAnnotation = "ragroute.io/allowed-hosts"

// defaultPorts are the ports HTTP and git clients dial for a URL of these
// schemes that names none; a "tcp://" URL without a port has no known
// port, so only an entry without a port admits it. The Milvus client
// has its own (knowledge.DialAddress).
var defaultPorts = map[string]string{"http": "80", "https": "443", "ssh": "22"}

// destination is where a Secret's value is sent: the spec field holding
// the URL or host:port address, its value, and how the client that sends
// it finds the host and port it dials there (hostPort, or
// knowledge.DialAddress for Milvus), so that the port checked is the port
// dialed. A zero destination is a Secret compared inbound only (the
// trusted proxy's), which needs no binding.
type destination struct {
	field   string
	address string
	dialed  func(address string) (host, port string, err error)
}

// secretHostRefusal is the reason secret, referenced by field, may not be
// sent to to; nil when its annotation lists that host (or the use is
// inbound).
func secretHostRefusal(secret *corev1.Secret, field string, to destination) *referenceError {
	if to.field == "" {
		return nil
	}
	host, port, err := to.dialed(to.address)
	if err != nil {
		return &referenceError{Reason: v1alpha1.ReasonSecretNotAllowedForHost,
			Message: fmt.Sprintf("Secret %q referenced by %s is not sent to %s %q: %v", secret.Name, field, to.field, to.address, err)}
	}
	listed, annotated := secret.Annotations[allowedHostsAnnotation]
	if annotated && hostListed(listed, host, port) {
		return nil
	}
	shown := host
	if port != "" {
		shown = net.JoinHostPort(host, port)
	}
	now := "it has no annotation " + allowedHostsAnnotation
	if annotated {
		now = fmt.Sprintf("its annotation %s=%q does not list that host", allowedHostsAnnotation, listed)
	}
	return &referenceError{Reason: v1alpha1.ReasonSecretNotAllowedForHost,
		Message: fmt.Sprintf("Secret %q referenced by %s may not be sent to %s (%s): %s; if it may, add %q to the Secret's %s (comma-separated host or host:port)",
			secret.Name, field, shown, to.field, now, host, allowedHostsAnnotation)}
}

// hostPort splits a destination of an HTTP or git client, a URL, or a bare
// host:port (Redis), into its host and port, the scheme's default port
// when it names none.
func hostPort(address string) (host, port string, err error) {
	if !strings.Contains(address, "://") {
		host, port, err = net.SplitHostPort(address)
		if err != nil || host == "" {
			return "", "", fmt.Errorf("not a host:port")
		}
		return host, port, nil
	}
	u, err := url.Parse(address)
	if err != nil || u.Hostname() == "" {
		return "", "", fmt.Errorf("not a URL with a host")
	}
	port = u.Port()
	if port == "" {
		port = defaultPorts[strings.ToLower(u.Scheme)]
	}
	return u.Hostname(), port, nil
}

// hostListed reports whether the annotation's list admits host:port (port
// empty: unknown, admitted only by an entry without a port).
func hostListed(list, host, port string) bool {
	for _, entry := range strings.Split(list, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		entryHost, entryPort, err := net.SplitHostPort(entry)
		if err != nil { // no port: any port of the host
			entryHost, entryPort = strings.TrimSuffix(strings.TrimPrefix(entry, "["), "]"), ""
		}
		if sameHost(entryHost, host) && (entryPort == "" || entryPort == port) {
			return true
		}
	}
	return false
}

func sameHost(a, b string) bool {
	return a != "" && strings.EqualFold(strings.TrimSuffix(a, "."), strings.TrimSuffix(b, "."))
}
