// Package keyhash writes the fields of a cache key into a hash, each
// after its length, so that no field's bytes can forge a boundary: the
// route's exact cache and its vector cache key their entries this way.
package keyhash

import (
	"encoding/binary"
	"hash"
)

// Field writes s into h after its length.
func Field(h hash.Hash, s string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}
