package ingestion

import (
	"os"
	"testing"

	"github.com/ragroute/ragroute/internal/testenv"
)

var milvus = testenv.NewShared("Milvus Lite", testenv.StartMilvusLite)

func TestMain(m *testing.M) {
	code := m.Run()
	milvus.Stop()
	os.Exit(code)
}
