package main

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
)

// The identity eval-route asks as: headers given on the command line (a
// trusted proxy's user and groups), headers read from files (its shared
// secret, mounted from a Secret, so it never shows in a process list) and
// a bearer token read from a file (JWT routes).

// repeated is a flag that may be given more than once.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ", ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// identityHeaders builds the request headers from --header 'Name: value',
// --header-file 'Name=/path' and --token-file; a malformed flag is an
// error naming it, a value never (it may be a secret).
func identityHeaders(headers, headerFiles []string, tokenFile string) (http.Header, error) {
	out := http.Header{}
	add := func(name, value, flag string) error {
		if !validHeaderName(name) {
			return fmt.Errorf("%s %q: %q is not a header name", flag, name, name)
		}
		if strings.ContainsAny(value, "\r\n\x00") {
			return fmt.Errorf("%s %s: the value holds a line break or NUL", flag, name)
		}
		if out.Get(name) != "" {
			return fmt.Errorf("%s %s: the header is given twice (the route refuses a repeated identity header)", flag, name)
		}
		out.Set(name, value)
		return nil
	}
	for _, h := range headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return nil, fmt.Errorf("--header %q: want 'Name: value' (no colon)", headerName(h))
		}
		if err := add(strings.TrimSpace(name), strings.TrimSpace(value), "--header"); err != nil {
			return nil, err
		}
	}
	for _, h := range headerFiles {
		name, path, ok := strings.Cut(h, "=")
		if !ok || path == "" {
			return nil, fmt.Errorf("--header-file %q: want 'Name=/path/to/file'", h)
		}
		value, err := readSecretFile(path)
		if err != nil {
			return nil, fmt.Errorf("--header-file %s: %w", name, err)
		}
		if err := add(strings.TrimSpace(name), value, "--header-file"); err != nil {
			return nil, err
		}
	}
	if tokenFile != "" {
		token, err := readSecretFile(tokenFile)
		if err != nil {
			return nil, fmt.Errorf("--token-file: %w", err)
		}
		if err := add("Authorization", "Bearer "+token, "--token-file"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readSecretFile reads a mounted secret: without its trailing newline,
// which an editor or `kubectl create secret --from-file` leaves.
func readSecretFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	value := strings.TrimSpace(string(data))
	if value == "" {
		return "", errors.New(path + " is empty")
	}
	return value, nil
}

// headerName is what of a --header may be shown: up to a space, as a
// value without its colon may still be a secret.
func headerName(h string) string {
	name, _, _ := strings.Cut(strings.TrimSpace(h), " ")
	return name
}

// validHeaderName reports whether name is an HTTP token (RFC 9110).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if r > 0x7e || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}
