package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"sync/atomic"
)

// MinSecretBytes is the shortest secret a Sealer accepts.
const MinSecretBytes = 32

// A sealed value is version, salt, then the AES-256-GCM ciphertext and tag.
// Each value has a key of its own, derived from the route's key and a
// random salt: random 96-bit nonces under one key would be safe for about
// 2^32 values only, and a busy route writes one per turn event.
const (
	version  = 1
	saltSize = 24
	overhead = 1 + saltSize + 16
)

// nonce is fixed: no value key seals twice.
var nonce = make([]byte, 12)

// Sealer seals values under a route's key, bound to where they are
// stored, and counts the values that failed to open.
type Sealer struct {
	key      []byte
	rejected atomic.Int64
}

// New derives the sealing key from secret (at least MinSecretBytes bytes,
// the same on every replica of a route).
func New(secret []byte) (*Sealer, error) {
	if len(secret) < MinSecretBytes {
		return nil, fmt.Errorf("the seal key has %d bytes, want at least %d", len(secret), MinSecretBytes)
	}
	key, err := hkdf.Key(sha256.New, secret, nil, "ragroute redis values v1", 32)
	if err != nil {
		return nil, fmt.Errorf("derive the seal key: %w", err)
	}
	return &Sealer{key: key}, nil
}

// Seal encrypts value for the Redis key (or key and field) where: it
// opens only there.
func (s *Sealer) Seal(where string, value []byte) []byte {
	out := make([]byte, 1+saltSize, overhead+len(value))
	out[0] = version
	_, _ = rand.Read(out[1:]) // crypto/rand never fails (Go 1.24)
	return s.aead(out[1:]).Seal(out, nonce, value, []byte(where))
}

// Open returns the value sealed for where; false (and counted) for
// anything else: a value forged, sealed under another key or for another
// place, or cut.
func (s *Sealer) Open(where string, sealed []byte) ([]byte, bool) {
	if len(sealed) < overhead || sealed[0] != version {
		s.rejected.Add(1)
		return nil, false
	}
	value, err := s.aead(sealed[1:1+saltSize]).Open(nil, nonce, sealed[1+saltSize:], []byte(where))
	if err != nil {
		s.rejected.Add(1)
		return nil, false
	}
	return value, true
}

// Rejected is how many values failed to open.
func (s *Sealer) Rejected() int64 { return s.rejected.Load() }

// aead is the cipher of the value key for salt.
func (s *Sealer) aead(salt []byte) cipher.AEAD {
	mac := hmac.New(sha256.New, s.key)
	mac.Write(salt)
	block, err := aes.NewCipher(mac.Sum(nil))
	if err != nil {
		panic(err) // a 32-byte key always makes a cipher
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err) // AES' block size is GCM's
	}
	return aead
}
