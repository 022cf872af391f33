package knowledge

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/testenv"
)

var milvus = testenv.NewShared("Milvus Lite", testenv.StartMilvusLite)

func TestMain(m *testing.M) {
	code := m.Run()
	milvus.Stop()
	os.Exit(code)
}

// testStore connects to the package's Milvus Lite (started on first use)
// and returns a store under a fresh alias.
func testStore(t testing.TB, dim int) *Store {
	t.Helper()
	uri := milvus.Get(t).URI
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, err := Connect(ctx, Connection{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close(context.Background()) })
	return NewStore(client, fmt.Sprintf("t%d_%s", time.Now().UnixNano()%1e9, sanitize(t.Name())), dim)
}

func sanitize(name string) string {
	out := []rune{}
	for _, r := range name {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			out = append(out, r)
		}
	}
	if len(out) > 40 {
		out = out[:40]
	}
	return string(out)
}
