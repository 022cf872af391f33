package scale

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/ragroute/ragroute/internal/testenv"
)

// operatorUser is who the manager authenticates as: bound to the
// ClusterRole of config/rbac/role.yaml, as the chart installs it. The audit
// log records this user's writes.
const operatorUser = "ragroute-operator"

// envManagerBinary names a prebuilt `ragroute` (make bench-operator builds
// bin/ragroute); without it the test builds one.
const envManagerBinary = "RAGROUTE_BIN"

// buildManager returns the ragroute command the manager runs from: the
// prebuilt one envManagerBinary names, or one built now into dir. It runs
// while the bed starts; the result is read once the bed is up.
func buildManager(dir string) <-chan buildResult {
	out := make(chan buildResult, 1)
	if bin := os.Getenv(envManagerBinary); bin != "" {
		out <- buildResult{bin: bin}
		return out
	}
	go func() {
		bin := filepath.Join(dir, "ragroute")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/ragroute")
		cmd.Dir = filepath.Join("..", "..")
		if stdout, err := cmd.CombinedOutput(); err != nil {
			out <- buildResult{err: fmt.Errorf("go build ./cmd/ragroute: %w\n%s", err, stdout)}
			return
		}
		out <- buildResult{bin: bin}
	}()
	return out
}

type buildResult struct {
	bin string
	err error
}

// manager is a running `ragroute manager` process.
type manager struct {
	*testenv.Process
	metricsURL string
	pprofURL   string
}

// startManager runs `ragroute manager` with leader election off, metrics
// over plain HTTP and health probes on free loopback ports, and the Go
// memory limit the chart gives it (chartGoMemLimit), and waits until it
// answers /readyz.
func startManager(ctx context.Context, bin, kubeconfig, dir, name string) (*manager, error) {
	goMemLimit, err := chartGoMemLimit()
	if err != nil {
		return nil, err
	}
	metricsPort, err := testenv.FreePort()
	if err != nil {
		return nil, err
	}
	probePort, err := testenv.FreePort()
	if err != nil {
		return nil, err
	}
	pprofPort, err := testenv.FreePort()
	if err != nil {
		return nil, err
	}
	p, err := testenv.StartProcess(testenv.ProcessSpec{
		Command: bin,
		Args: []string{"manager",
			"--leader-elect=false",
			"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(metricsPort),
			"--metrics-secure=false",
			"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(probePort),
			"--pprof-bind-address=127.0.0.1:" + strconv.Itoa(pprofPort),
			"--route-image=ragroute/ragroute:scale",
			"--zap-log-level=info",
		},
		Env:     []string{"KUBECONFIG=" + kubeconfig, "GOMEMLIMIT=" + goMemLimit},
		LogPath: filepath.Join(dir, name+".log"),
	})
	if err != nil {
		return nil, err
	}
	m := &manager{Process: p,
		metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort),
		pprofURL:   fmt.Sprintf("http://127.0.0.1:%d/debug/pprof", pprofPort)}
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", probePort)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if resp, err := http.Get(readyz); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return m, nil
			}
		}
		if p.Exited() || time.Now().After(deadline) {
			p.Stop()
			return nil, fmt.Errorf("manager did not answer %s; see %s", readyz, p.LogPath)
		}
		select {
		case <-ctx.Done():
			p.Stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// metrics is one scrape: sample name → label set (as written) → value.
type metrics map[string]map[string]float64

func (m *manager) scrape() (metrics, error) {
	resp, err := http.Get(m.metricsURL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return parseMetrics(resp.Body)
}

// parseMetrics reads the Prometheus text format, enough for counters and
// gauges.
func parseMetrics(r io.Reader) (metrics, error) {
	out := metrics{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		name, labels := line[:i], ""
		if j := strings.IndexByte(name, '{'); j >= 0 {
			name, labels = line[:j], line[j:i]
		}
		if out[name] == nil {
			out[name] = map[string]float64{}
		}
		out[name][labels] = v
	}
	return out, sc.Err()
}

// sum adds the samples of name whose labels contain every selector, e.g.
// `controller="queryroute"`.
func (ms metrics) sum(name string, selectors ...string) float64 {
	total := 0.0
	for labels, v := range ms[name] {
		ok := true
		for _, s := range selectors {
			if !strings.Contains(labels, s) {
				ok = false
				break
			}
		}
		if ok {
			total += v
		}
	}
	return total
}

// peakRSS is the process' high-water resident set (VmHWM), in bytes.
func peakRSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fields := strings.Fields(rest)
			kb, err := strconv.ParseInt(fields[0], 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// chartGoMemLimit is the GOMEMLIMIT the chart gives the manager by default
// (goMemLimit in charts/ragroute/values.yaml): the run measures the
// manager as it is installed. Empty: none.
func chartGoMemLimit() (string, error) {
	data, err := os.ReadFile(filepath.Join("..", "..", "charts", "ragroute", "values.yaml"))
	if err != nil {
		return "", fmt.Errorf("the chart's values: %w", err)
	}
	var values struct {
		GoMemLimit string `json:"goMemLimit"`
	}
	if err := yaml.Unmarshal(data, &values); err != nil {
		return "", fmt.Errorf("the chart's values: %w", err)
	}
	return values.GoMemLimit, nil
}
