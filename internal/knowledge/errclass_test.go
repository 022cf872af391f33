package knowledge

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A caller tells a user what kind of Milvus failure stopped them (wrong
// credentials, no such database, no answer) from the class alone.
func TestClassifyError(t *testing.T) {
	leak := "10.0.3.7:19530 banner=internal-build-7 token=root:Milvus"
	for _, tc := range []struct {
		err  error
		want ErrorClass
	}{
		{fmt.Errorf("connect: %w", status.Error(codes.Unavailable, "dial tcp "+leak)), ErrorUnreachable},
		{fmt.Errorf("connect: %w", syscall.ECONNREFUSED), ErrorUnreachable},
		{fmt.Errorf("probe %s: %w", leak, context.DeadlineExceeded), ErrorUnreachable},
		{fmt.Errorf("get server version: %w", status.Error(codes.Unauthenticated, leak)), ErrorUnauthorized},
		{errors.New("milvus: fail to connect: auth check failure, please check username and password are correct " + leak), ErrorUnauthorized},
		{&NoDatabaseError{URI: "http://milvus:19530", Database: "docs", Have: []string{"default", "payroll_secret"}}, ErrorNoDatabase},
		// The class is the error's type, not its text: a database whose
		// name reads like an auth failure does not make one.
		{fmt.Errorf("probe: %w", &NoDatabaseError{URI: "http://milvus:19530", Database: "docs", Have: []string{"default", "passwords"}}), ErrorNoDatabase},
		{errors.New("unexpected HTTP status code received from server: 418 " + leak), ErrorOther},
		// A failed dial whose words read like a refusal of credentials is
		// no answer: TLS against another protocol, a firewall's EACCES.
		{fmt.Errorf("connect to milvus at https://10.0.3.7:22: %w", errors.New(`context deadline exceeded: connection error: desc = "transport: authentication handshake failed: tls: first record does not look like a TLS handshake"`)), ErrorUnreachable},
		{status.Error(codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial tcp 10.0.3.7:19530: connect: permission denied"`), ErrorUnreachable},
	} {
		if got := ClassifyError(tc.err); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.err, got, tc.want)
		}
	}
}
