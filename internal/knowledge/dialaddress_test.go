package knowledge

import (
	"strings"
	"testing"
)

// The port a Secret's allowed hosts are checked against is the port the
// Milvus client dials: https:// without one is 443, http:// and tcp://
// without one are refused (the client would dial no port), and the client
// is handed that host and port explicitly, never left to its own default.
func TestDialAddressIsWhatTheClientDials(t *testing.T) {
	for _, tc := range []struct {
		uri, host, port, client, problem string
	}{
		{uri: "http://milvus.db.svc:19530", host: "milvus.db.svc", port: "19530", client: "http://milvus.db.svc:19530"},
		{uri: "https://milvus.example", host: "milvus.example", port: "443", client: "https://milvus.example:443"},
		{uri: "https://milvus.example:8443/docs", host: "milvus.example", port: "8443", client: "https://milvus.example:8443/docs"},
		{uri: "tcp://milvus.db.svc:19530", host: "milvus.db.svc", port: "19530", client: "milvus.db.svc:19530"},
		{uri: "http://[fd00::1]:19530", host: "fd00::1", port: "19530", client: "http://[fd00::1]:19530"},
		{uri: "http://milvus.db.svc", problem: "http:// without a port"},
		{uri: "tcp://milvus.db.svc", problem: "tcp:// without a port"},
		{uri: "grpc://milvus.db.svc:19530", problem: `scheme "grpc"`},
		{uri: "http://:19530", problem: "no host"},
	} {
		host, port, err := DialAddress(tc.uri)
		if tc.problem != "" {
			if err == nil || !strings.Contains(err.Error(), tc.problem) {
				t.Errorf("%s: %s:%s, %v; want an error naming %q", tc.uri, host, port, err, tc.problem)
			}
			continue
		}
		if err != nil || host != tc.host || port != tc.port {
			t.Errorf("%s: %q %q %v, want %q %q", tc.uri, host, port, err, tc.host, tc.port)
		}
		if got, err := clientAddress(tc.uri); err != nil || got != tc.client {
			t.Errorf("%s: the client is given %q (%v), want %q", tc.uri, got, err, tc.client)
		}
	}
	if _, _, err := DialAddress("https://root:hunter2@milvus.example:bad"); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a bad URI's error: %v (must be one, without its password)", err)
	}
}
