package stamp_test

import (
	"testing"

	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
)

// storedDeployment is a Deployment as the API server stores it: quantities in canonical form,
// empty maps and lists dropped, defaults filled in.
func storedDeployment() map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": "app", "labels": map[string]any{"app": "app"}},
		"spec": map[string]any{
			"replicas": int64(1),
			"template": map[string]any{
				"metadata": map[string]any{"creationTimestamp": nil, "labels": map[string]any{"app": "app"}},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name":            "workload",
					"image":           "img",
					"imagePullPolicy": "IfNotPresent",
					"args":            []any{"--debug"},
					"resources": map[string]any{
						"limits":   map[string]any{"cpu": "1", "memory": "1Gi"},
						"requests": map[string]any{"cpu": "500m", "memory": "1Gi"},
					},
				}}},
			},
		},
	}
}

// inContainer is a stamped Deployment whose only container has fields (and its name).
func inContainer(fields map[string]any) map[string]any {
	c := map[string]any{"name": "workload"}
	for k, v := range fields {
		c[k] = v
	}
	return map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{c}}}}}
}

// inPodMetadata is a stamped Deployment whose pod template's metadata has fields.
func inPodMetadata(fields map[string]any) map[string]any {
	return map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": fields}}}
}

func quantities(limits, requests map[string]any) map[string]any {
	r := map[string]any{}
	if limits != nil {
		r["limits"] = limits
	}
	if requests != nil {
		r["requests"] = requests
	}
	return inContainer(map[string]any{"resources": r})
}

func TestContainsWhatTheServerStores(t *testing.T) {
	configMap := map[string]any{"data": map[string]any{"greeting": "abc", "version": "1", "empty": ""}}
	tests := []struct {
		name    string
		live    map[string]any
		stamped map[string]any
		want    bool
	}{
		// Quantities are stored in canonical form.
		{name: "millicores are whole cores", stamped: quantities(map[string]any{"cpu": "1000m"}, nil), want: true},
		{name: "the number 0.5 is 500m", stamped: quantities(nil, map[string]any{"cpu": 0.5}), want: true},
		{name: "the string 0.5 is 500m", stamped: quantities(nil, map[string]any{"cpu": "0.5"}), want: true},
		{name: "1024Mi is 1Gi", stamped: quantities(nil, map[string]any{"memory": "1024Mi"}), want: true},
		{name: "the int 1 is the string 1", stamped: quantities(map[string]any{"cpu": int64(1)}, nil), want: true},
		{name: "the float 1.0 is the string 1", stamped: quantities(map[string]any{"cpu": 1.0}, nil), want: true},
		{
			name:    "the brief's resources",
			stamped: quantities(map[string]any{"cpu": "1000m", "memory": "1Gi"}, map[string]any{"cpu": 0.5, "memory": "1024Mi"}),
			want:    true,
		},
		{name: "a canonical quantity", stamped: quantities(map[string]any{"cpu": "1"}, nil), want: true},
		{name: "a different quantity", stamped: quantities(map[string]any{"cpu": "2"}, nil), want: false},
		{name: "a different quantity in another unit", stamped: quantities(map[string]any{"cpu": "1001m"}, nil), want: false},
		{name: "a different number", stamped: quantities(map[string]any{"cpu": int64(2)}, nil), want: false},
		{name: "a different float", stamped: quantities(nil, map[string]any{"cpu": 0.25}), want: false},
		{name: "binary and decimal units differ", stamped: quantities(nil, map[string]any{"memory": "1G"}), want: false},
		{name: "a quantity is not a number in live", stamped: map[string]any{"spec": map[string]any{"replicas": "1"}}, want: false},
		{name: "a different string", live: configMap, stamped: map[string]any{"data": map[string]any{"greeting": "abd"}}, want: false},
		{name: "a string that is no quantity", live: configMap, stamped: map[string]any{"data": map[string]any{"version": "1.x"}}, want: false},
		{name: "a quantity is not an empty string", live: configMap, stamped: map[string]any{"data": map[string]any{"empty": "0"}}, want: false},
		{name: "an empty string is not a quantity", live: configMap, stamped: map[string]any{"data": map[string]any{"version": ""}}, want: false},
		{name: "a number is not a string that is no quantity", live: configMap, stamped: map[string]any{"data": map[string]any{"greeting": int64(1)}}, want: false},

		// Empty values are dropped.
		{name: "empty annotations are dropped", stamped: inPodMetadata(map[string]any{"annotations": map[string]any{}}), want: true},
		{name: "an empty list is dropped", stamped: inContainer(map[string]any{"env": []any{}}), want: true},
		{name: "a null is dropped", stamped: inContainer(map[string]any{"command": nil}), want: true},
		{name: "an empty map is held by a null", stamped: inPodMetadata(map[string]any{"creationTimestamp": map[string]any{}}), want: true},
		{name: "an empty list is held by a null", stamped: inPodMetadata(map[string]any{"creationTimestamp": []any{}}), want: true},
		{name: "a map of empty values is dropped", stamped: inContainer(map[string]any{"securityContext": map[string]any{"capabilities": map[string]any{"add": []any{}}}}), want: true},
		{name: "empty resources are held", stamped: inContainer(map[string]any{"resources": map[string]any{}}), want: true},
		{name: "a non-empty map is not dropped", stamped: map[string]any{"metadata": map[string]any{"annotations": map[string]any{"a": "1"}}}, want: false},
		{name: "a map holding a non-empty value is not dropped", stamped: inContainer(map[string]any{"securityContext": map[string]any{"runAsNonRoot": true}}), want: false},
		{name: "a non-empty list is not dropped", stamped: inContainer(map[string]any{"command": []any{"run"}}), want: false},
		{name: "an empty list is not a non-empty one", stamped: inContainer(map[string]any{"args": []any{}}), want: false},
		{name: "an empty map is not a string", stamped: map[string]any{"kind": map[string]any{}}, want: false},
		{name: "an empty list is not a string", stamped: map[string]any{"kind": []any{}}, want: false},
		{name: "a zero is not dropped", stamped: map[string]any{"spec": map[string]any{"minReadySeconds": int64(0)}}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live := tt.live
			if live == nil {
				live = storedDeployment()
			}
			if got := stamp.Contains(live, tt.stamped); got != tt.want {
				t.Errorf("Contains() = %v, want %v", got, tt.want)
			}
		})
	}
}

// Contains runs on every reconcile of every stamped object; when the values are equal it must
// not allocate, and only values that differ as written parse as quantities.
func TestContainsEqualValuesDoNotAllocate(t *testing.T) {
	live := storedDeployment()
	stamped := storedDeployment()
	if allocs := testing.AllocsPerRun(100, func() {
		if !stamp.Contains(live, stamped) {
			t.Fatal("Contains() = false for an equal object")
		}
	}); allocs != 0 {
		t.Errorf("Contains() of an equal object allocates %v times, want 0", allocs)
	}
}
