package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ragroute/ragroute/internal/testenv"
)

// The feedback loop (docs/route.md, "Feedback"): the sample route keeps
// its turns, and so its users' verdicts, in a Redis, as a route of
// several replicas does in a cluster; alice rates an answer down, and
// `ragroute feedback export`, run with the route's own config and
// secrets, prints the evaluation question it becomes.

// redisSealSecret is the Secret (key sealKey) holding the key the route
// seals what it keeps in Redis with.
const redisSealSecret = "support-redis"

// startRedis runs redis-server (installed by hack/testbed.sh) on a free
// loopback port.
func (d *demo) startRedis(ctx context.Context) error {
	r, err := testenv.StartRedis(ctx, filepath.Join(d.cfg.work, "logs"))
	if err != nil {
		return err
	}
	d.processes = append(d.processes, r.Process)
	d.redisAddr = r.Addr
	fmt.Printf("    redis     %s  (the route's turn log and its users' verdicts; a cluster runs its own Redis)\n", r.Addr)
	return nil
}

// useRedis points the sample QueryRoute's turn log at the demo's Redis,
// sealed with a key from a Secret, and keeps turns an hour so a verdict
// has time to come.
func (d *demo) useRedis(obj *unstructured.Unstructured) error {
	for _, set := range []struct {
		value  any
		fields []string
	}{
		{"redis", []string{"spec", "turns", "backend"}},
		{"1h", []string{"spec", "turns", "retention"}},
		{map[string]any{"address": d.redisAddr, "sealKeySecretRef": map[string]any{"name": redisSealSecret, "key": "sealKey"}}, []string{"spec", "redis"}},
	} {
		if err := unstructured.SetNestedField(obj.Object, set.value, set.fields...); err != nil {
			return fmt.Errorf("%s %s: set %v: %w", obj.GetKind(), obj.GetName(), set.fields, err)
		}
		fmt.Printf("    %s/%s %s: %v\n", obj.GetKind(), obj.GetName(), strings.Join(set.fields, "."), set.value)
	}
	return nil
}

// createRedisSecret creates the route's seal key Secret with a random key.
func (d *demo) createRedisSecret(ctx context.Context) error {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: redisSealSecret,
		Labels: map[string]string{"ragroute.io/use": "true"}},
		StringData: map[string]string{"sealKey": hex.EncodeToString(key)}}
	if err := d.admin.Create(ctx, secret); err != nil {
		return fmt.Errorf("create Secret %s (the route's Redis seal key): %w", redisSealSecret, err)
	}
	fmt.Printf("    created Secret/%s (the key the route seals what it keeps in Redis with)\n", redisSealSecret)
	return nil
}

// rateAndExport has alice rate her first answer down, naming the page she
// expected, then exports the route's down-rated turns as the admin would
// and prints them.
func (d *demo) rateAndExport(ctx context.Context) error {
	if d.rated.turn == "" {
		return fmt.Errorf("no answered turn of %s to rate", d.rated.q.user)
	}
	source := cmp.Or(d.applied.evalSource, "handbook")
	verdict, _ := json.Marshal(map[string]any{"rating": "down", "comment": "I also wanted to know who approves claims under 50 EUR.",
		"expected_source": source + "/expenses.md"})
	path := "/v1/turns/" + d.rated.turn + "/feedback"
	fmt.Printf("  %s rates the answer to %q down:\n    POST %s %s\n", d.rated.q.user, d.rated.q.text, path, verdict)
	if err := d.call(ctx, d.rated.q, http.MethodPost, path, verdict, func(resp *http.Response) error {
		fmt.Printf("    → %s\n", resp.Status)
		return nil
	}); err != nil {
		return err
	}
	config := ""
	for _, a := range d.routeCmd.Args {
		if strings.HasPrefix(a, "--config=") {
			config = a
		}
	}
	if config == "" {
		return fmt.Errorf("the route's command %q names no --config", d.routeCmd.Args)
	}
	// The admin's export reads the route's Redis with the route's own
	// config and secrets, as `kubectl exec` into its pod would.
	args := []string{"feedback", "export", config, "--source", source}
	fmt.Printf("\n  the admin exports the down-rated turns: ragroute %s\n", strings.Join(args, " "))
	export := exec.CommandContext(ctx, d.cfg.ragroute, args...)
	export.Env = append(os.Environ(), d.routeCmd.Env...)
	var stdout, stderr bytes.Buffer
	export.Stdout, export.Stderr = &stdout, &stderr
	err := export.Run()
	indent(&stderr)
	if err != nil {
		return fmt.Errorf("ragroute feedback export: %w", err)
	}
	fmt.Println("  the question it becomes (review it, then add it to the RouteEvaluation's questions):")
	for line := range strings.Lines(stdout.String()) {
		var pretty bytes.Buffer
		if json.Indent(&pretty, []byte(line), "", "  ") != nil {
			pretty.WriteString(line)
		}
		indent(&pretty)
	}
	if stdout.Len() == 0 {
		return fmt.Errorf("the export wrote no question for %s's verdict", d.rated.q.user)
	}
	return nil
}
