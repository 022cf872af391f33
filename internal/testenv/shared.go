package testenv

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"
)

// Shared starts a server once per test binary, on first use, and stops it
// when the binary's TestMain calls Stop.
type Shared[T interface{ Stop() }] struct {
	name  string
	once  sync.Once
	value T
	err   error
	dir   string
	start func(ctx context.Context, dir string) (T, error)
}

// NewShared wraps a start function such as StartMilvusLite or StartRedis;
// name says what it starts.
func NewShared[T interface{ Stop() }](name string, start func(ctx context.Context, dir string) (T, error)) *Shared[T] {
	return &Shared[T]{name: name, start: start}
}

// Get returns the server, starting it on the first call; a failure to
// start fails the test. Under -short it skips the test (Integration).
func (s *Shared[T]) Get(t testing.TB) T {
	t.Helper()
	Integration(t, s.name)
	s.once.Do(func() {
		if s.dir, s.err = os.MkdirTemp("", "ragroute-test-"); s.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s.value, s.err = s.start(ctx, s.dir)
	})
	if s.err != nil {
		t.Fatalf("start test server: %v", s.err)
	}
	return s.value
}

// Stop ends the server, if it was started, and removes its files.
func (s *Shared[T]) Stop() {
	if s.err == nil && s.dir != "" {
		s.value.Stop()
	}
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}
