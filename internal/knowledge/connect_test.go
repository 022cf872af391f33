package knowledge

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// A URI whose port the client would not know is refused before anything
// is dialed, not after the caller's deadline.
func TestConnectRefusesAURIWithoutAPort(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err := Connect(ctx, Connection{URI: "http://127.0.0.1"})
	if err == nil || !strings.Contains(err.Error(), "without a port") {
		t.Fatalf("Connect: %v, want a refusal naming the missing port", err)
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Errorf("the refusal took %v: something was dialed", waited)
	}
}

// A dial that never connects ends at the caller's deadline with why it
// did not connect, for the logs (statuses show only a class).
func TestConnectSaysWhyTheDialFailed(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	_ = l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err = Connect(ctx, Connection{URI: "http://" + closed})
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("Connect to a closed port: %v, want it to say the connection was refused", err)
	}
	if ClassifyError(err) != ErrorUnreachable {
		t.Errorf("%v: class %v", err, ClassifyError(err))
	}
}
