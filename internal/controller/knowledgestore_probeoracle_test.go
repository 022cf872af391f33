package controller

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/ragroute/ragroute/internal/knowledge"
)

// The operator probes whatever spec.milvus.uri names, from inside the
// cluster. A status that told a closed port from a silent one, a missing
// host, a TLS port or another server's banner would let anyone who may
// create a store map what listens where: every network failure of a real
// probe reads the same in the status, and none of what the other end said
// reaches it.
func TestProbeFailuresLookAlikeInTheStatus(t *testing.T) {
	const banner = "SSH-2.0-OpenSSH_9.6 internal-bastion-7"
	talker := listen(t, func(c net.Conn) { _, _ = c.Write([]byte(banner + "\r\n")) })
	silent := listen(t, func(c net.Conn) { time.Sleep(3 * time.Second) })
	closed := listen(t, nil)
	closedAddr := closed.Addr().String()
	_ = closed.Close()
	// Another gRPC service, and an HTTP/2 server over TLS whose
	// certificate the store says not to check: both answer the probe's
	// calls, as something other than Milvus.
	grpcServer := grpc.NewServer()
	grpcListener := listen(t, nil)
	go func() { _ = grpcServer.Serve(grpcListener) }()
	t.Cleanup(grpcServer.Stop)
	web := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Server", banner)
		http.Error(w, banner, http.StatusNotFound)
	}))
	web.EnableHTTP2 = true
	web.StartTLS()
	t.Cleanup(web.Close)

	const probeTimeout = 700 * time.Millisecond
	r := &KnowledgeStoreReconciler{ProbeTimeout: probeTimeout, Probe: knowledge.Probe}
	var (
		mu       sync.Mutex
		statuses = map[string]string{}
		probes   sync.WaitGroup
	)
	for kind, conn := range map[string]knowledge.Connection{
		"refused":        {URI: "http://" + closedAddr},
		"timeout":        {URI: "http://" + silent.Addr().String()},
		"another server": {URI: "http://" + talker.Addr().String()},
		"TLS":            {URI: "https://" + talker.Addr().String()},
		"no such host":   {URI: "http://milvus.no-such-host.invalid:19530"},
		"a gRPC service": {URI: "http://" + grpcListener.Addr().String()},
		"an HTTPS site":  {URI: web.URL, TLSInsecureSkipVerify: true},
	} {
		probes.Go(func() {
			s := &storeScope{conn: conn}
			start := time.Now()
			_ = r.probeMilvus(context.Background(), s)
			if took := time.Since(start); took < probeTimeout {
				t.Errorf("%s: the probe ended after %v, before its %v: when the status changes tells it apart", kind, took, probeTimeout)
			}
			if s.facts.probeErr == nil {
				t.Errorf("%s: the probe of %s succeeded", kind, conn.URI)
				return
			}
			// The URI is the store's own; what differs must be only it.
			shown := strings.ReplaceAll(milvusProblem(s.facts.probeErr, conn.URI, "default"), redactedURI(conn.URI), "<uri>")
			if strings.Contains(shown, "OpenSSH") || strings.Contains(shown, "127.0.0.1") {
				t.Errorf("%s: the status shows what the other end said: %q", kind, shown)
			}
			mu.Lock()
			statuses[shown] += kind + "; "
			mu.Unlock()
		})
	}
	probes.Wait()
	if len(statuses) != 1 {
		t.Errorf("the status tells network failures apart: %v", statuses)
	}
}

// What Milvus itself answers (the credentials refused, no such database)
// the store's owner needs at once, and it tells nothing of other servers.
func TestMilvusOwnAnswerIsNotHeldBack(t *testing.T) {
	const probeTimeout = 5 * time.Second
	r := &KnowledgeStoreReconciler{ProbeTimeout: probeTimeout,
		Probe: func(context.Context, knowledge.Connection) (knowledge.ServerInfo, error) {
			return knowledge.ServerInfo{}, &knowledge.NoDatabaseError{URI: "http://milvus.db.svc:19530", Database: "docs"}
		}}
	start := time.Now()
	_ = r.probeMilvus(context.Background(), &storeScope{conn: knowledge.Connection{URI: "http://milvus.db.svc:19530"}})
	if took := time.Since(start); took >= probeTimeout {
		t.Errorf("Milvus' own answer waited %v", took)
	}
}

// listen serves each connection with serve (nil: closes it at once) until
// the test ends.
func listen(t *testing.T, serve func(net.Conn)) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(fmt.Errorf("listen: %w", err))
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				if serve != nil {
					serve(c)
				}
			}()
		}
	}()
	return l
}
