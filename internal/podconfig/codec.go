package podconfig

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Marshal renders a config deterministically (struct field order, sorted
// map keys, trailing newline), so equal configs give equal bytes and hashes.
func Marshal(config any) ([]byte, error) {
	data, err := json.MarshalIndent(config, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("marshal pod config: %w", err)
	}
	return append(data, '\n'), nil
}

// Hash is the hex SHA-256 of data.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// validator is a config that can check itself after decoding.
type validator interface{ Validate() error }

// decodeStrict reads one config, refusing unknown fields and anything its
// Validate refuses, so a pod never runs a config it only half understood.
func decodeStrict[T validator](r io.Reader, what string) (T, error) {
	var c T
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("parse %s config: %w", what, err)
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

// loadStrict reads and decodes the config file at path.
func loadStrict[T validator](path, what string) (T, error) {
	var zero T
	data, err := os.ReadFile(path)
	if err != nil {
		return zero, fmt.Errorf("read %s config: %w", what, err)
	}
	c, err := decodeStrict[T](bytes.NewReader(data), what)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ParseRoute reads a route config.
func ParseRoute(r io.Reader) (RouteConfig, error) { return decodeStrict[RouteConfig](r, "route") }

// LoadRoute reads the route config file at path.
func LoadRoute(path string) (RouteConfig, error) { return loadStrict[RouteConfig](path, "route") }

// ParseIngest reads an ingest config.
func ParseIngest(r io.Reader) (IngestConfig, error) { return decodeStrict[IngestConfig](r, "ingest") }

// LoadIngest reads the ingest config file at path.
func LoadIngest(path string) (IngestConfig, error) { return loadStrict[IngestConfig](path, "ingest") }
