package controller

import (
	"crypto/sha256"
	"encoding/hex"
)

// shortHash is the first 16 hex digits of SHA-256: plenty to detect change,
// short enough to read in `kubectl get`.
func shortHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}
