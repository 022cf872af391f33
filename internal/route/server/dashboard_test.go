package server

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// The Grafana dashboard the chart ships queries only metrics a route
// serves: every ragroute_* and process_* name in its panels is one the
// route registers.
func TestDashboardQueriesMetricsTheRouteServes(t *testing.T) {
	data, err := os.ReadFile("../../../charts/ragroute/dashboards/ragroute.json")
	if err != nil {
		t.Fatal(err)
	}
	var dashboard struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dashboard); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}

	served := map[string]bool{}
	descs := make(chan *prometheus.Desc, 64)
	go func() {
		for _, c := range newMetrics(func() int { return 0 }, map[string]func() int64{"chat": func() int64 { return 0 }}, nil, nil).collectors {
			c.Describe(descs)
		}
		close(descs)
	}()
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	for d := range descs {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			served[m[1]] = true
		}
	}

	name := regexp.MustCompile(`\b(ragroute_[a-z_]+|process_[a-z_]+)`)
	checked := 0
	for _, panel := range dashboard.Panels {
		for _, target := range panel.Targets {
			for _, metric := range name.FindAllString(target.Expr, -1) {
				for _, suffix := range []string{"_bucket", "_count", "_sum"} {
					metric = strings.TrimSuffix(metric, suffix)
				}
				checked++
				if !served[metric] {
					t.Errorf("panel %q queries %s, which a route does not serve", panel.Title, metric)
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("only %d metric names found in the dashboard", checked)
	}
}
