package controller

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// milvusProblem is what a store's conditions say of a Milvus error: its
// class and the store's own URI, never the error's text. spec.milvus.uri
// may point anywhere, so the text could carry what another server said
// (banners, addresses, its databases) into a status anyone who may read
// the store sees; the operator's log keeps the whole cause.
func milvusProblem(err error, uri, database string) string {
	at := redactedURI(uri)
	text := strings.ToLower(err.Error())
	code := codes.OK
	if st, ok := status.FromError(err); ok {
		code = st.Code()
	}
	var netErr net.Error
	switch {
	case code == codes.Unauthenticated || code == codes.PermissionDenied ||
		containsAny(text, "authenticat", "permission denied", "privilege", "invalid token", "password"):
		return fmt.Sprintf("Milvus at %s refused the credentials (spec.milvus.tokenSecretRef)", at)
	case strings.Contains(text, "has no database"):
		return fmt.Sprintf("Milvus at %s has no database %q", at, database)
	case code == codes.Unavailable || code == codes.DeadlineExceeded ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &netErr) ||
		containsAny(text, "connection refused", "deadline exceeded", "no such host", "unavailable", "i/o timeout"):
		return fmt.Sprintf("Milvus unreachable at %s", at)
	}
	return fmt.Sprintf("Milvus error at %s (the operator's log has the cause)", at)
}

// redactedURI is uri without a password, should it carry one.
func redactedURI(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return "spec.milvus.uri"
	}
	return u.Redacted()
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
