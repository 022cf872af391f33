package identity

import (
	"context"
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// keySet is the oidc.KeySet of a JWKS URL: the last good keys, and at most
// one fetch in flight, started for an unknown kid at most once per Refresh
// (once per retry while no key is known yet). go-oidc's RemoteKeySet
// fetches on every unknown kid and every bad signature, however often.
type keySet struct {
	url     string
	client  *http.Client
	timeout time.Duration
	every   time.Duration
	// retry is how soon a fetch is tried again while no key is known.
	retry time.Duration
	log   *slog.Logger

	mu       sync.Mutex
	keys     []jose.JSONWebKey
	fetching chan struct{}
	triedAt  time.Time
	lastErr  error
}

// VerifySignature verifies a token's signature; the verifier checked its
// algorithm already.
func (s *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSigned(raw, joseAlgs)
	if err != nil {
		return nil, fmt.Errorf("malformed jwt: %w", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("a token needs exactly one signature")
	}
	kid := jws.Signatures[0].Header.KeyID
	if payload, known, err := verifyWith(s.current(), jws, kid); known {
		return payload, err
	}
	fetchErr := s.refresh(ctx)
	if payload, known, err := verifyWith(s.current(), jws, kid); known {
		return payload, err
	}
	if fetchErr != nil {
		// The error reaches the caller: the fetch's own (the JWKS URL, an
		// address, the issuer's answer) goes to the log only.
		s.log.Warn("JWKS fetch failed; a token with an unknown key is refused", "url", s.url, "kid", kid, "err", fetchErr)
		return nil, fmt.Errorf("unknown signing key %q; %s", kid, keysUnavailable)
	}
	return nil, fmt.Errorf("unknown signing key %q", kid)
}

// verifyWith verifies jws with the keys of kid (any key when kid is
// empty). known says whether the answer is final: kid names a key held,
// or a key verified a token without kid.
func verifyWith(keys []jose.JSONWebKey, jws *jose.JSONWebSignature, kid string) (payload []byte, known bool, err error) {
	for i := range keys {
		if kid != "" && keys[i].KeyID != kid {
			continue
		}
		if payload, err := jws.Verify(&keys[i]); err == nil {
			return payload, true, nil
		}
		known = kid != ""
	}
	if known {
		return nil, true, fmt.Errorf("the signature does not verify with key %q", kid)
	}
	return nil, false, nil
}

func (s *keySet) current() []jose.JSONWebKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys
}

// refresh fetches the JWKS unless a fetch was tried too recently, or
// joins the fetch in flight, and waits for it at most as long as ctx.
func (s *keySet) refresh(ctx context.Context) error {
	s.mu.Lock()
	done := s.fetching
	if done == nil {
		interval := s.every
		if len(s.keys) == 0 {
			interval = s.retry
		}
		if !s.triedAt.IsZero() && time.Since(s.triedAt) < interval {
			err := s.lastErr
			s.mu.Unlock()
			if err != nil {
				return fmt.Errorf("JWKS fetched at most every %s; the last fetch failed: %w", interval, err)
			}
			return nil
		}
		done = make(chan struct{})
		s.fetching, s.triedAt = done, time.Now()
		go s.fetch(done)
	}
	s.mu.Unlock()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-done:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

func (s *keySet) fetch(done chan struct{}) {
	keys, err := s.get()
	s.mu.Lock()
	defer s.mu.Unlock()
	defer close(done)
	s.fetching, s.lastErr = nil, err
	if err != nil {
		s.log.Warn("JWKS fetch failed; keeping the last good keys", "url", s.url, "err", err, "keys", len(s.keys))
		return
	}
	s.keys = keys
}

func (s *keySet) get() ([]jose.JSONWebKey, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS %s: %w", s.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch JWKS %s: %s", s.url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS %s: %w", s.url, err)
	}
	keys, err := parseJWKS(body)
	if err != nil {
		return nil, fmt.Errorf("parse JWKS %s: %w", s.url, err)
	}
	return keys, nil
}

// parseJWKS keeps a set's public RSA and EC signing keys; keys it cannot
// use (other types, private or symmetric keys, encryption keys, EC points
// off their curve) are skipped, as RFC 7517 asks.
func parseJWKS(body []byte) ([]jose.JSONWebKey, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, err
	}
	var keys []jose.JSONWebKey
	for _, raw := range set.Keys {
		var k jose.JSONWebKey
		if err := json.Unmarshal(raw, &k); err != nil || !k.Valid() || !k.IsPublic() || k.Use == "enc" {
			continue
		}
		switch k.Key.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey:
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("no usable RSA or EC signing key")
	}
	return keys, nil
}
