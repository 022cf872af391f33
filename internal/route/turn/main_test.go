package turn_test

import (
	"testing"

	"github.com/ragroute/ragroute/internal/route/routetest"
)

func TestMain(m *testing.M) { routetest.Main(m) }
