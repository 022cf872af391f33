package main

import (
	"strings"
	"testing"
)

// TestEvalRouteIdentityHeaders: what the identity flags put on requests,
// secrets read from files without their newline, and what they refuse.
func TestEvalRouteIdentityHeaders(t *testing.T) {
	dir := t.TempDir()
	secret := writeFile(t, dir, "secret", "s3cret\n")
	token := writeFile(t, dir, "token", "eyJ.token.sig\n")
	empty := writeFile(t, dir, "empty", "\n")
	h, err := identityHeaders([]string{"X-User: ann", "X-Groups:  staff, sre "}, []string{"X-Proxy-Secret=" + secret}, token)
	if err != nil {
		t.Fatal(err)
	}
	if h.Get("X-User") != "ann" || h.Get("X-Groups") != "staff, sre" || h.Get("X-Proxy-Secret") != "s3cret" ||
		h.Get("Authorization") != "Bearer eyJ.token.sig" || len(h) != 4 {
		t.Errorf("headers: %v", h)
	}
	for _, c := range []struct {
		headers, files []string
		token, says    string
	}{
		{headers: []string{"X-User: ann", "x-user: bob"}, says: "given twice"},
		{headers: []string{"Authorization: Bearer a"}, token: token, says: "--token-file Authorization: the header is given twice"},
		{headers: []string{"X User: ann"}, says: "is not a header name"},
		{files: []string{"X-Proxy-Secret=" + empty}, says: "is empty"},
		{token: dir + "/absent", says: "--token-file: read"},
	} {
		_, err := identityHeaders(c.headers, c.files, c.token)
		if err == nil || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%v %v %q: %v, want it to say %q", c.headers, c.files, c.token, err, c.says)
		}
	}
}
