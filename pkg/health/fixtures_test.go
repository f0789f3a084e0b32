package health_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// ignoreTime compares conditions without their LastTransitionTime.
var ignoreTime = cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")

func assertCondition(t *testing.T, want, got metav1.Condition) {
	t.Helper()
	if diff := cmp.Diff(want, got, ignoreTime); diff != "" {
		t.Errorf("condition mismatch (-want +got):\n%s", diff)
	}
}

// object builds an unstructured object from YAML, the way the API server's JSON decodes: integers
// become int64.
func object(t testing.TB, doc string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	return u
}

// deploymentYAML is a Deployment at generation 3 with five conditions, as a real cluster shows one
// plus three conditions other controllers add.
const deploymentYAML = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: dev
  generation: 3
  labels: {app: web, carto.run/workload-name: web}
  annotations: {deployment.kubernetes.io/revision: "3"}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: registry.example.com/web@sha256:0123456789abcdef
        ports: [{containerPort: 8080}]
status:
  observedGeneration: 3
  replicas: 3
  updatedReplicas: 3
  readyReplicas: 3
  availableReplicas: 3
  paused: false
  message: all replicas are serving
  conditions:
  - type: Progressing
    status: "True"
    reason: NewReplicaSetAvailable
    message: ReplicaSet "web-5d8f7c" has successfully progressed.
    lastTransitionTime: "2025-01-01T00:00:00Z"
  - type: ReplicaFailure
    status: "False"
    reason: NoFailure
    message: no failure
  - type: Reconciling
    status: "False"
    reason: Done
    message: reconciled
    observedGeneration: 3
  - type: Degraded
    status: "False"
    reason: AsExpected
    message: ""
  - type: Available
    status: "True"
    reason: MinimumReplicasAvailable
    message: Deployment has minimum availability.
    observedGeneration: 3
`

// jobYAML is an Indexed Job that succeeded (KEP-3998 conditions).
const jobYAML = `
apiVersion: batch/v1
kind: Job
metadata:
  name: test-run
  namespace: dev
  generation: 1
spec:
  completions: 8
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      containers: [{name: test, image: busybox}]
status:
  succeeded: 8
  failed: 0
  completedIndexes: "0-3,5,6-7,4"
  conditions:
  - type: SuccessCriteriaMet
    status: "True"
    reason: CompletionsReached
    message: Reached expected number of succeeded pods
  - type: Complete
    status: "True"
    reason: CompletionsReached
    message: Reached expected number of succeeded pods
`

func deployment(t testing.TB) *unstructured.Unstructured { return object(t, deploymentYAML) }
func job(t testing.TB) *unstructured.Unstructured        { return object(t, jobYAML) }

func multiMatch(healthy, unhealthy v1alpha1.MatchRule) *v1alpha1.HealthRule {
	return &v1alpha1.HealthRule{MultiMatch: &v1alpha1.MultiMatchRule{Healthy: healthy, Unhealthy: unhealthy}}
}

func field(key string, op v1alpha1.FieldSelectorOperator, values ...string) v1alpha1.HealthMatchFieldSelectorRequirement {
	return v1alpha1.HealthMatchFieldSelectorRequirement{
		FieldSelectorRequirement: v1alpha1.FieldSelectorRequirement{Key: key, Operator: op, Values: values},
	}
}

func withMessage(f v1alpha1.HealthMatchFieldSelectorRequirement, messagePath string) v1alpha1.HealthMatchFieldSelectorRequirement {
	f.MessagePath = messagePath
	return f
}
