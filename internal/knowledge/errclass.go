package knowledge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrorClass is what kind of failure a Milvus error is, so that a caller
// can say what went wrong without repeating what the server said: a
// server's text may carry banners, addresses or the names of its other
// databases.
type ErrorClass int

const (
	// ErrorOther is any failure not named below.
	ErrorOther ErrorClass = iota
	// ErrorUnreachable is no answer (refused, timed out, no such host,
	// unavailable).
	ErrorUnreachable
	// ErrorUnauthorized is the server refusing the credentials.
	ErrorUnauthorized
	// ErrorNoDatabase is a server that answers but lacks the database
	// (NoDatabaseError).
	ErrorNoDatabase
)

func (c ErrorClass) String() string {
	switch c {
	case ErrorUnreachable:
		return "unreachable"
	case ErrorUnauthorized:
		return "unauthorized"
	case ErrorNoDatabase:
		return "no database"
	}
	return "other"
}

// NoDatabaseError is Probe's answer when the server lacks the connection's
// database.
type NoDatabaseError struct {
	URI, Database string
	// Have are the databases the server has.
	Have []string
}

func (e *NoDatabaseError) Error() string {
	return fmt.Sprintf("milvus at %s has no database %q (it has %s)", e.URI, e.Database, strings.Join(e.Have, ", "))
}

// ClassifyError says what kind of failure err (from Connect, Probe or a
// call on their client) is. The Milvus client reports some failures only
// as text (an auth check, a refused dial wrapped in its own message), so
// the text is read here, in one place, after the gRPC code and the
// wrapped Go errors.
func ClassifyError(err error) ErrorClass {
	if err == nil {
		return ErrorOther
	}
	var noDatabase *NoDatabaseError
	if errors.As(err, &noDatabase) {
		return ErrorNoDatabase
	}
	code := codes.OK
	if st, ok := status.FromError(err); ok {
		code = st.Code()
	}
	text := strings.ToLower(err.Error())
	var netErr net.Error
	// No answer is judged first: a failed dial's text may read like a
	// refusal of credentials ("authentication handshake failed" of TLS,
	// "connect: permission denied" of a firewall), and must not pass for
	// Milvus refusing them.
	switch {
	case code == codes.Unavailable || code == codes.DeadlineExceeded ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &netErr) ||
		containsAny(text, "connection refused", "deadline exceeded", "no such host", "unavailable", "i/o timeout"):
		return ErrorUnreachable
	case code == codes.Unauthenticated || code == codes.PermissionDenied ||
		containsAny(text, "authenticat", "permission denied", "privilege", "invalid token", "password"):
		return ErrorUnauthorized
	}
	return ErrorOther
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
