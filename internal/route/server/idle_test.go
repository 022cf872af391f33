package server

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"syscall"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/route/identity"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/route/turnlog"
)

const idleStreams = 1000

// BenchmarkIdleStreams: what an SSE stream on a turn that has not finished
// costs while it waits (the turn's log entry, the connection, the
// handler's goroutines and its keep-alive timer): 1,000 streams are
// opened, RSS and goroutines are measured, then the turns finish, and
// what is left after they are released is reported too.
//
// The clients are plain loopback TCP connections that send the request,
// read the response headers, and then leave what follows in the kernel's
// buffer: no client goroutine or buffer is counted against the server.
// 1,000 streams take 2,000 descriptors (both ends are in this process);
// Go raises the soft RLIMIT_NOFILE to the hard one at start, and the
// benchmark skips if that is still too low.
// go test ./internal/route/server -run '^$' -bench IdleStreams -benchtime 1x
func BenchmarkIdleStreams(b *testing.B) {
	var limit syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &limit); err != nil || limit.Cur < 2*idleStreams+256 {
		b.Skipf("open files limit %d (%v): needs %d", limit.Cur, err, 2*idleStreams+256)
	}
	var open, released idleFigures
	for i := 0; i < b.N; i++ {
		o, r := idleStreamsOnce(b)
		open, released = open.add(o), released.add(r)
	}
	n := float64(b.N * idleStreams)
	b.ReportMetric(open.rssKB/n, "rss_KB_per_stream")
	b.ReportMetric(open.goroutines/n, "goroutines_per_stream")
	b.ReportMetric(released.rssKB/n, "rss_KB_per_stream_after_release")
	b.ReportMetric(released.goroutines/n, "goroutines_per_stream_after_release")
}

// idleFigures is what the process holds over a baseline.
type idleFigures struct{ rssKB, goroutines float64 }

func (f idleFigures) add(g idleFigures) idleFigures {
	return idleFigures{f.rssKB + g.rssKB, f.goroutines + g.goroutines}
}

// idleStreamsOnce opens the streams, measures, releases them and measures
// again; both figures are over what the process held before.
func idleStreamsOnce(b *testing.B) (open, released idleFigures) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := turnlog.NewMemory(time.Minute, idleStreams+1, 0, time.Now)
	opts := Options{Log: log, Auth: identity.ProxyHeaders{UserHeader: "X-User", GroupsHeader: "X-Groups"}, Limits: DefaultLimits(),
		Ready: func(context.Context) error { return nil }}
	opts.Limits.KeepAlive = time.Second // the streams write keep-alives while measured, as idle ones do
	// What one open stream costs the replica is measured, not the limits:
	// one user holds them all.
	opts.Limits.StreamsPerUser, opts.Limits.MaxStreams = idleStreams, idleStreams
	srv := httptest.NewServer(New(ctx, opts).Handler())
	defer srv.Close()

	base := settle(b, 0)
	conns := make([]net.Conn, 0, idleStreams)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for i := 0; i < idleStreams; i++ {
		id := fmt.Sprintf("idle-%d", i)
		if err := log.Start(ctx, id, "ann"); err != nil {
			b.Fatal(err)
		}
		c, err := openStream(srv.Listener.Addr().String(), id)
		if err != nil {
			b.Fatalf("stream %d: %v", i, err)
		}
		conns = append(conns, c)
	}
	time.Sleep(opts.Limits.KeepAlive + 500*time.Millisecond) // every stream has written a keep-alive
	held := settle(b, 0)
	open = idleFigures{held.rssKB - base.rssKB, held.goroutines - base.goroutines}

	// Release: every turn ends, and every stream must deliver that end.
	for i := range conns {
		ev := turn.Event{Type: turn.EventTurnCompleted, Data: turn.Completed{}}
		if err := log.Append(ctx, fmt.Sprintf("idle-%d", i), ev); err != nil {
			b.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for i, c := range conns {
		if err := readToEnd(c, deadline); err != nil {
			b.Fatalf("stream %d after its turn ended: %v", i, err)
		}
		_ = c.Close()
	}
	conns = nil
	after := settle(b, base.goroutines)
	released = idleFigures{after.rssKB - base.rssKB, after.goroutines - base.goroutines}
	if released.goroutines > 10 {
		b.Errorf("%v goroutines over the baseline after the streams ended", released.goroutines)
	}
	return open, released
}

// settle waits (up to 5 s) for the goroutine count to drop to want, when
// want is set (closed connections end their server goroutines
// asynchronously), then collects, returns freed memory to the OS and reads
// RSS and the goroutine count.
func settle(b *testing.B, want float64) idleFigures {
	for end := time.Now().Add(5 * time.Second); want > 0 && float64(runtime.NumGoroutine()) > want && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	runtime.GC()
	debug.FreeOSMemory()
	return idleFigures{rssKB: rssMB(b) * 1024, goroutines: float64(runtime.NumGoroutine())}
}

// openStream sends GET /v1/turns/{id}/events on a new connection and
// reads up to the end of the response headers, which the server flushes
// before it waits for the turn's events.
func openStream(addr, id string) (net.Conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "GET /v1/turns/%s/events HTTP/1.1\r\nHost: route\r\nX-User: ann\r\nX-Groups: staff\r\n\r\n", id)
	var got []byte
	buf := make([]byte, 512)
	for !bytes.Contains(got, []byte("\r\n\r\n")) {
		n, err := c.Read(buf)
		if err != nil {
			c.Close()
			return nil, err
		}
		got = append(got, buf[:n]...)
	}
	if !bytes.HasPrefix(got, []byte("HTTP/1.1 200 ")) {
		c.Close()
		return nil, fmt.Errorf("response %q", got)
	}
	_ = c.SetDeadline(time.Time{})
	return c, nil
}

// readToEnd reads a stream until its turn.completed event and the end of
// the chunked response; keep-alives buffered meanwhile are skipped.
func readToEnd(c net.Conn, deadline time.Time) error {
	_ = c.SetReadDeadline(deadline)
	var got []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(got, []byte("event: turn.completed")) || !bytes.HasSuffix(got, []byte("\r\n0\r\n\r\n")) {
		n, err := c.Read(buf)
		if err != nil {
			return fmt.Errorf("%w after %q", err, got)
		}
		got = append(got, buf[:n]...)
	}
	return nil
}
