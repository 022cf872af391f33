package testenv

import "testing"

// Integration skips t under -short, naming what it needs: `go test -short
// ./...` is the fast command that runs without the servers `make test`
// installs and starts. Outside -short a test that needs a server fails
// when it is missing, so a broken install is never a silent skip.
func Integration(t testing.TB, needs string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("needs %s: an integration test, skipped with -short (make test runs it)", needs)
	}
}
