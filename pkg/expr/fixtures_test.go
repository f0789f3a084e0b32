package expr_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

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

// appYAML is an object with conditions, numbers, booleans, a null and a list of values.
const appYAML = `
apiVersion: kappctrl.k14s.io/v1alpha1
kind: App
metadata: {name: deployer, generation: 2}
status:
  observedGeneration: 2
  usefulErrorMessage: kapp deploy failed
  replicas: 3
  ratio: 2.5
  paused: false
  ready: true
  gone: null
  loadBalancer: {}
  phase: Running
  tags: [blue, green]
  conditions:
  - {type: ReconcileSucceeded, status: "True", message: reconciled}
  - {type: ReconcileFailed, status: "False", message: not failed}
  - {type: Stalled, status: "Unknown", message: who knows}
`
