package stamp_test

import (
	"testing"

	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
)

// deploymentTemplate is a typical ClusterTemplate object: a Deployment built from the Workload, its
// params and the image and config of earlier resources, with 14 tags, typed and embedded.
const deploymentTemplate = `{
  "apiVersion": "apps/v1",
  "kind": "Deployment",
  "metadata": {
    "name": "$(workload.metadata.name)$",
    "labels": {
      "app.kubernetes.io/name": "$(workload.metadata.labels['app.kubernetes.io/name'])$",
      "app.kubernetes.io/part-of": "$(workload.metadata.name)$",
      "app.kubernetes.io/component": "run"
    },
    "annotations": {"example.com/source": "$(source.url)$@$(source.revision)$"}
  },
  "spec": {
    "replicas": "$(params.replicas)$",
    "selector": {"matchLabels": {"app.kubernetes.io/name": "$(workload.metadata.name)$"}},
    "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
    "template": {
      "metadata": {"labels": {"app.kubernetes.io/name": "$(workload.metadata.name)$"}},
      "spec": {
        "serviceAccountName": "$(params.serviceAccount)$",
        "containers": [{
          "name": "workload",
          "image": "$(image)$",
          "args": ["--port=$(params.port)$", "--debug"],
          "env": "$(workload.spec.env)$",
          "ports": [{"containerPort": "$(params.port)$", "protocol": "TCP"}],
          "resources": "$(workload.spec.resources)$",
          "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10},
          "securityContext": {"runAsNonRoot": true, "allowPrivilegeEscalation": false}
        }]
      }
    }
  }
}`

func BenchmarkStamp(b *testing.B) {
	params := map[string]any{"replicas": int64(3), "port": int64(8080), "serviceAccount": "default"}
	ctx := stamp.NewContext([]string{stamp.OwnerWorkload}, owner(), params, nil, oneOfEach)
	template := []byte(deploymentTemplate)
	if _, err := stamp.Stamp(template, ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := stamp.Stamp(template, ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStampParallel(b *testing.B) {
	params := map[string]any{"replicas": int64(3), "port": int64(8080), "serviceAccount": "default"}
	ctx := stamp.NewContext([]string{stamp.OwnerWorkload}, owner(), params, nil, oneOfEach)
	template := []byte(deploymentTemplate)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := stamp.Stamp(template, ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
