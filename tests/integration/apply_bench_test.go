package integration

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// BenchmarkServerSideApply measures what one server-side apply of a stamped ConfigMap
// costs the client against the real API server, by how the answer is read:
//
//   - json: the answer decoded as JSON into the unstructured object sent;
//   - protobuf: the answer decoded as protobuf into a typed ConfigMap, its managedFields
//     dropped and the rest read as unstructured, as the realizer does for Kubernetes' own
//     kinds.
//
// It reports the process's CPU per apply (cpu-µs/op), which is what the controller pays;
// the wall time per apply is mostly the API server's.
//
//	go test ./tests/integration -run '^$' -bench ServerSideApply -benchtime 3000x -count 3
func BenchmarkServerSideApply(b *testing.B) {
	cfg := rest.CopyConfig(env.Cluster.Config)
	cfg.QPS = -1
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-apply-"}}
	if err := c.Create(ctx, ns); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Delete(ctx, ns) })

	var seq atomic.Int64
	stamped := func() *unstructured.Unstructured {
		name := fmt.Sprintf("cm-%06d", seq.Add(1))
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{
				"name": name, "namespace": ns.Name,
				// Surveyor's labels, under another prefix: the in-process controller
				// must not watch these objects.
				"labels": map[string]any{
					"bench.carto/workload-name": name, "bench.carto/workload-namespace": ns.Name,
					"bench.carto/supply-chain-name": "bench", "bench.carto/resource-name": "config",
					"bench.carto/template-kind": "ClusterConfigTemplate", "bench.carto/cluster-template-name": "bench-config",
				},
				"annotations": map[string]any{"bench.carto/stamp-digest": "sha256:5f1c0e3ad1b0b9d1f6b0b43c3d6e1a0c0b1f5b8a2f9d9f0e1c2b3a4d5e6f7a8b"},
			},
			"data": map[string]any{"url": "https://example.com/" + name, "revision": "0123456789abcdef"},
		}}
	}
	opts := []client.PatchOption{client.FieldOwner("surveyor-bench"), client.ForceOwnership}
	run := func(b *testing.B, apply func(obj *unstructured.Unstructured) (*unstructured.Unstructured, error)) {
		before := processCPU()
		b.SetParallelism(4) // 8 goroutines on 2 cores: the realizer's 8 workers
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				live, err := apply(stamped())
				if err != nil {
					b.Error(err)
					return
				}
				if live.GetResourceVersion() == "" || live.Object["data"] == nil {
					b.Errorf("the answer lacks the object: %v", live.Object)
					return
				}
			}
		})
		b.ReportMetric(float64((processCPU()-before).Microseconds())/float64(b.N), "cpu-µs/op")
	}

	b.Run("json", func(b *testing.B) {
		run(b, func(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			err := c.Patch(ctx, obj, client.Apply, opts...)
			return obj, err
		})
	})
	b.Run("protobuf", func(b *testing.B) {
		run(b, func(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			data, err := obj.MarshalJSON()
			if err != nil {
				return nil, err
			}
			answer := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: obj.GetName()}}
			if err := c.Patch(ctx, answer, client.RawPatch(types.ApplyPatchType, data), opts...); err != nil {
				return nil, err
			}
			answer.ManagedFields = nil
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(answer)
			return &unstructured.Unstructured{Object: m}, err
		})
	})
}

// processCPU is the user and system CPU this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
