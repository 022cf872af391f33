package seal

import (
	"bytes"
	"strings"
	"testing"
)

func TestASealedValueOpensOnlyWhereItWasSealedUnderTheSameKey(t *testing.T) {
	secret := []byte(strings.Repeat("k", MinSecretBytes))
	s, err := New(secret)
	if err != nil {
		t.Fatal(err)
	}
	other, err := New([]byte(strings.Repeat("o", MinSecretBytes)))
	if err != nil {
		t.Fatal(err)
	}
	value := []byte(`[{"text":"the admin password lives in …"}]`)
	sealed := s.Seal("route:cache:a", value)
	if bytes.Contains(sealed, []byte("admin password")) {
		t.Fatal("the sealed value shows its text")
	}
	if got, ok := s.Open("route:cache:a", sealed); !ok || !bytes.Equal(got, value) {
		t.Fatalf("Open = %q, %v: want the value back", got, ok)
	}
	again, err := New(secret)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := again.Open("route:cache:a", sealed); !ok {
		t.Error("another replica with the same secret cannot open the value")
	}

	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-1] ^= 1
	for name, open := range map[string]func() bool{
		"plain value":     func() bool { _, ok := s.Open("route:cache:a", value); return ok },
		"another key":     func() bool { _, ok := s.Open("route:cache:b", sealed); return ok },
		"another secret":  func() bool { _, ok := s.Open("route:cache:a", other.Seal("route:cache:a", value)); return ok },
		"tampered":        func() bool { _, ok := s.Open("route:cache:a", tampered); return ok },
		"cut":             func() bool { _, ok := s.Open("route:cache:a", sealed[:overhead-1]); return ok },
		"empty":           func() bool { _, ok := s.Open("route:cache:a", nil); return ok },
		"unknown version": func() bool { v := bytes.Clone(sealed); v[0] = 2; _, ok := s.Open("route:cache:a", v); return ok },
	} {
		if open() {
			t.Errorf("%s opened", name)
		}
	}
	if got := s.Rejected(); got != 7 {
		t.Errorf("Rejected() = %d, want the 7 values that did not open", got)
	}
	if bytes.Equal(s.Seal("k", value), s.Seal("k", value)) {
		t.Error("sealing twice gave the same bytes")
	}
}

func TestNewRefusesAShortSecret(t *testing.T) {
	if _, err := New([]byte(strings.Repeat("k", MinSecretBytes-1))); err == nil || !strings.Contains(err.Error(), "want at least 32") {
		t.Fatalf("New(31 bytes) = %v, want an error naming the minimum", err)
	}
}
