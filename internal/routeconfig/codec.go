package routeconfig

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Marshal renders a config deterministically (struct field order, sorted map
// keys, trailing newline), so equal configs give equal bytes and hashes.
func Marshal(c Config) ([]byte, error) {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("marshal route config: %w", err)
	}
	return append(data, '\n'), nil
}

// Hash is the hex SHA-256 of data.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Parse reads a config, refusing unknown fields and unknown versions so a
// runtime never serves a config it only half understood.
func Parse(r io.Reader) (Config, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("parse route config: %w", err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Load reads and parses the config file at path.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read route config: %w", err)
	}
	c, err := Parse(bytes.NewReader(data))
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Validate checks what the runtime relies on and the CRD schema cannot
// express once the config left the API server.
func (c Config) Validate() error {
	var errs []error
	if c.Version != Version {
		errs = append(errs, fmt.Errorf("version %d is not supported (want %d)", c.Version, Version))
	}
	if c.Store.Milvus.URI == "" || c.Store.Milvus.Collection == "" {
		errs = append(errs, errors.New("store.milvus.uri and store.milvus.collection are required"))
	}
	if c.Model.BaseURL == "" || c.Model.Name == "" {
		errs = append(errs, errors.New("model.baseURL and model.name are required"))
	}
	if c.Window.AnswerReserveTokens >= c.Window.ContextTokens {
		errs = append(errs, fmt.Errorf("window.answerReserveTokens (%d) must be less than window.contextTokens (%d)",
			c.Window.AnswerReserveTokens, c.Window.ContextTokens))
	}
	if (c.Auth.JWT == nil) == (c.Auth.TrustedProxy == nil) {
		errs = append(errs, errors.New("auth needs exactly one of jwt or trustedProxy"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid route config: %w", err)
	}
	return nil
}
