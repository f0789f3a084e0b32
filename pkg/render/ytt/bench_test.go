package ytt_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/surveyor-dev/surveyor/hack/tools"
	"github.com/surveyor-dev/surveyor/internal/yttworker"
	"github.com/surveyor-dev/surveyor/pkg/render/ytt"
)

// benchValues are the data values of a Workload stamped with testdata/deployment.yml: a
// realistic owner (labels, env, a git source), params, one source, one image, one config.
func benchValues(n int) map[string]any {
	workload := map[string]any{
		"apiVersion": "carto.run/v1alpha1", "kind": "Workload",
		"metadata": map[string]any{"name": "petclinic", "namespace": "dev", "generation": int64(3),
			"labels": map[string]any{"apps.tanzu.vmware.com/workload-type": "web", "app.kubernetes.io/part-of": "petclinic"}},
		"spec": map[string]any{
			"serviceAccountName": "stamper",
			"source":             map[string]any{"git": map[string]any{"url": "https://github.com/spring-projects/spring-petclinic", "ref": map[string]any{"branch": "main"}}},
			"env":                []any{map[string]any{"name": "SPRING_PROFILES_ACTIVE", "value": "prod"}, map[string]any{"name": "JAVA_OPTS", "value": "-Xmx512m"}},
			"params":             []any{map[string]any{"name": "size", "value": "medium"}},
		},
	}
	source := map[string]any{"url": "https://github.com/spring-projects/spring-petclinic", "revision": fmt.Sprintf("main@sha1:%040d", n), "name": "source"}
	image := "registry.example/petclinic@sha256:4c1d2e3f"
	config := map[string]any{"APP_NAME": "petclinic", "APP_LISTEN_ADDRESS": "0.0.0.0:8080", "LOG_LEVEL": "info"}
	return map[string]any{
		"workload": workload, "deliverable": workload,
		"params":  map[string]any{"replicas": int64(2), "port": int64(8080), "size": "medium"},
		"sources": map[string]any{"source": source}, "source": source,
		"images": map[string]any{"image": map[string]any{"image": image, "name": "image"}}, "image": image,
		"configs": map[string]any{"config": map[string]any{"config": config, "name": "config"}}, "config": config,
		"deployment": nil,
		"labels": map[string]any{"carto.run/workload-name": "petclinic", "carto.run/workload-namespace": "dev",
			"carto.run/supply-chain-name": "web", "carto.run/resource-name": "deployer",
			"carto.run/template-kind": "ClusterTemplate", "carto.run/cluster-template-name": "app-deployment"},
	}
}

func benchTemplate(b *testing.B) string {
	src, err := os.ReadFile("testdata/deployment.yml")
	if err != nil {
		b.Fatal(err)
	}
	return string(src)
}

// BenchmarkStamp is one stamp of testdata/deployment.yml (102 lines: helper functions, the
// struct, json and yaml modules) in each of the ways it can be evaluated: in process, in
// process by ytt's own pipeline (its workspace, which compiles at each evaluation), in a
// worker (new data values each time, as when an input changed; and the same values, which
// the pool remembers), and by running the ytt binary once, as Cartographer does per stamp.
func BenchmarkStamp(b *testing.B) {
	source := benchTemplate(b)
	b.Run("in-process", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			if _, err := ytt.Eval(source, benchValues(i)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("workspace", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			flags, err := ytt.DataValues(benchValues(i))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := referenceEval(source, flags); err != nil {
				b.Fatal(err)
			}
		}
	})
	pool, err := yttworker.New(yttworker.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Eval(source, benchValues(-1)); err != nil { // starts a worker
		b.Fatal(err)
	}
	b.Run("worker", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			if _, err := pool.Eval(source, benchValues(i)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("worker-remembered", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := pool.Eval(source, benchValues(-1)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("binary", func(b *testing.B) {
		bin, err := tools.Path("ytt", io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		for i := range b.N {
			flags, err := ytt.DataValues(benchValues(i))
			if err != nil {
				b.Fatal(err)
			}
			args := []string{"-f", "-"}
			for _, f := range flags {
				args = append(args, "--data-value-yaml", f)
			}
			cmd := exec.Command(bin, args...)
			cmd.Stdin = strings.NewReader(source)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				b.Fatalf("%v: %s", err, out.String())
			}
		}
	})
}

// The benchmark's template stamps what it says, the same in process and by the binary.
func TestBenchTemplate(t *testing.T) {
	src, err := os.ReadFile("testdata/deployment.yml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := ytt.Eval(string(src), benchValues(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: Deployment", "name: petclinic", "cpu: 500m", "name: SPRING_PROFILES_ACTIVE", "serviceAccountName: stamper", "surveyor.dev/config: |"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
