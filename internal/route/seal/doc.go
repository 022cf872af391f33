// Package seal encrypts and authenticates the values a route keeps in
// Redis (cache entries, vectors, turn owners and events), so that whoever
// reaches Redis can neither read them nor plant one the route would use:
// a value forged, sealed under another key or moved from another Redis key
// does not open, and the route treats it as absent.
package seal
