// Package sealtest gives tests a Sealer, and the means to forge values the
// way someone who reaches Redis could.
package sealtest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/ragroute/ragroute/internal/route/seal"
)

// New is a Sealer under a fresh random key.
func New(t testing.TB) *seal.Sealer {
	t.Helper()
	sealer, err := seal.New([]byte(rand.Text() + rand.Text()))
	if err != nil {
		t.Fatal(err)
	}
	return sealer
}

// Shared is the Sealer of the replicas of one route named name: every
// call with the same name seals under the same key, as replicas reading
// one Secret do.
func Shared(t testing.TB, name string) *seal.Sealer {
	t.Helper()
	sum := sha256.Sum256([]byte(name))
	sealer, err := seal.New([]byte(hex.EncodeToString(sum[:])))
	if err != nil {
		t.Fatal(err)
	}
	return sealer
}
