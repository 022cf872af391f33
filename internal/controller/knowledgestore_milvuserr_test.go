package controller

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ragroute/ragroute/internal/knowledge"
)

// A store's status names the class of a Milvus error (knowledge's
// ClassifyError) and the store's own URI, never what the server (which
// spec.milvus.uri may make any server) said: no banners, addresses,
// databases or tokens.
func TestMilvusErrorsAreClassesInTheStatus(t *testing.T) {
	const uri = "http://milvus.db.svc:19530"
	leak := "10.0.3.7:19530 banner=internal-build-7 token=root:Milvus"
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("connect: %w", status.Error(codes.Unavailable, "dial tcp "+leak)), "Milvus at " + uri + " did not answer"},
		{fmt.Errorf("get server version: %w", status.Error(codes.Unauthenticated, leak)), "Milvus at " + uri + " refused the credentials"},
		{&knowledge.NoDatabaseError{URI: uri, Database: "docs", Have: []string{"default", "payroll_secret"}}, `Milvus at ` + uri + ` has no database "docs"`},
		{errors.New("unexpected HTTP status code received from server: 418 " + leak), "Milvus at " + uri + " did not answer"},
	} {
		got := milvusProblem(tc.err, uri, "docs")
		if !strings.Contains(got, tc.want) {
			t.Errorf("%v: %q, want %q", tc.err, got, tc.want)
		}
		for _, secret := range []string{"10.0.3.7", "banner", "root:Milvus", "payroll_secret"} {
			if strings.Contains(got, secret) {
				t.Errorf("%v: the status would show %q: %q", tc.err, secret, got)
			}
		}
	}
	if got := milvusProblem(syscall.ECONNREFUSED, "https://root:hunter2@milvus.db.svc:443", ""); strings.Contains(got, "hunter2") {
		t.Errorf("the URI's password reaches the status: %q", got)
	}
}

// A URI the Milvus client would dial no port for is the store's own
// mistake, and the status says so rather than that Milvus did not answer.
func TestStatusNamesAMilvusURIWithoutAPort(t *testing.T) {
	got := milvusProblem(errors.New("milvus uri: http:// without a port"), "http://milvus.db.svc", "")
	if want := "spec.milvus.uri http://milvus.db.svc: http:// without a port"; !strings.HasPrefix(got, want) {
		t.Errorf("%q, want it to start %q", got, want)
	}
}
