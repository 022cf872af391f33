package knowledge

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// The Milvus client does not read a URI as an HTTP client would: it gives
// "https://host" port 443 and "http://host" or "tcp://host" no port at all
// (a direct dial then fails for want of one; through an HTTPS proxy gRPC
// asks for host:443). Whatever is checked against a Secret's allowed hosts
// must be what is dialed, so DialAddress names the port, in one place,
// and Connect hands the client exactly that host and port.

// milvusDefaultPorts are the ports the client gives a URI without one;
// http:// and tcp:// have none.
var milvusDefaultPorts = map[string]string{"https": "443"}

// DialAddress is the host and port the Milvus client dials for uri
// (http://, https:// or tcp://host[:port][/database]): the URI's port, or
// 443 for https:// without one. An http:// or tcp:// URI without a port
// is refused: the client would dial no port (Milvus listens on 19530). The
// error does not repeat uri, which may carry a password.
func DialAddress(uri string) (host, port string, err error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", "", errors.New("not a URL")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" && scheme != "tcp" {
		return "", "", fmt.Errorf("scheme %q is not http, https or tcp", u.Scheme)
	}
	if u.Hostname() == "" {
		return "", "", errors.New("no host")
	}
	port = u.Port()
	if port == "" {
		port = milvusDefaultPorts[scheme]
	}
	if port == "" {
		return "", "", fmt.Errorf("%s:// without a port: the Milvus client would dial no port; name it (Milvus listens on 19530)", scheme)
	}
	return u.Hostname(), port, nil
}

// clientAddress is uri as the Milvus client is given it: the host and
// port DialAddress names, the scheme (tcp:// dropped: the client takes a
// bare host:port for it) and the path, which the client reads as the
// database when none is set.
func clientAddress(uri string) (string, error) {
	host, port, err := DialAddress(uri)
	if err != nil {
		return "", err
	}
	u, _ := url.Parse(uri) // DialAddress parsed it
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = net.JoinHostPort(host, port)
	return strings.TrimPrefix(u.String(), "tcp://"), nil
}
