package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/internal/harness"
)

// identity is a user whose API requests the benchmark counts.
type identity struct {
	// short names its FlowSchemas: bench-<short>-<bucket>.
	short, namespace, name string
}

// identities are the controller (its own reads, status writes, events, discovery and
// leader election) and the stamping ServiceAccount it impersonates: kube-apiserver
// classifies an impersonated request as the impersonated user.
var identities = []identity{
	{short: "controller", namespace: harness.ControllerNamespace, name: harness.ControllerAccount},
	{short: "stamper", namespace: benchNamespace, name: stamperAccount},
}

// Request buckets. kube-apiserver's apiserver_request_total does not count discovery
// and is not broken down by user, so each identity gets one FlowSchema per bucket and
// the bucket's count is its apiserver_flowcontrol_dispatched_requests_total.
const (
	bucketLease     = "lease"     // leader election, coordination.k8s.io leases
	bucketDiscovery = "discovery" // every non-resource URL: /api, /apis, /version, ...
	bucketOther     = "other"     // any resource verb not listed
)

// verbBuckets are the resource verbs counted one by one; writeVerbs are the writes.
var (
	verbBuckets = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	writeVerbs  = []string{"create", "update", "patch", "delete", "deletecollection"}
)

func flowSchemaName(id identity, bucket string) string { return "bench-" + id.short + "-" + bucket }

// createFlowSchemas adds the counting FlowSchemas. They send requests to
// workload-low, the priority level the built-in service-accounts FlowSchema would
// have chosen, so counting changes nothing about how requests are served; their
// precedence (1000+) is below every built-in schema that could match these users.
func (e *env) createFlowSchemas(ctx context.Context) error {
	var names []string
	for _, id := range identities {
		subject := flowcontrolv1.Subject{
			Kind:           flowcontrolv1.SubjectKindServiceAccount,
			ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: id.namespace, Name: id.name},
		}
		resource := func(verbs, groups, resources []string) []flowcontrolv1.ResourcePolicyRule {
			return []flowcontrolv1.ResourcePolicyRule{{Verbs: verbs, APIGroups: groups, Resources: resources, ClusterScope: true, Namespaces: []string{"*"}}}
		}
		rules := map[string]flowcontrolv1.PolicyRulesWithSubjects{
			bucketLease: {Subjects: []flowcontrolv1.Subject{subject}, ResourceRules: resource([]string{"*"}, []string{"coordination.k8s.io"}, []string{"leases"})},
			bucketDiscovery: {Subjects: []flowcontrolv1.Subject{subject}, NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{
				{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
			}},
			bucketOther: {Subjects: []flowcontrolv1.Subject{subject}, ResourceRules: resource([]string{"*"}, []string{"*"}, []string{"*"})},
		}
		order := []string{bucketLease}
		for _, v := range verbBuckets {
			rules[v] = flowcontrolv1.PolicyRulesWithSubjects{Subjects: []flowcontrolv1.Subject{subject}, ResourceRules: resource([]string{v}, []string{"*"}, []string{"*"})}
			order = append(order, v)
		}
		order = append(order, bucketDiscovery, bucketOther)
		for i, bucket := range order {
			fs := &flowcontrolv1.FlowSchema{
				ObjectMeta: metav1.ObjectMeta{Name: flowSchemaName(id, bucket)},
				Spec: flowcontrolv1.FlowSchemaSpec{
					PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "workload-low"},
					MatchingPrecedence:         int32(1000 + i),
					DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
					Rules:                      []flowcontrolv1.PolicyRulesWithSubjects{rules[bucket]},
				},
			}
			if err := e.admin.Create(ctx, fs); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating FlowSchema %s: %w", fs.Name, err)
			}
			names = append(names, fs.Name)
		}
	}
	// A FlowSchema classifies requests once the API server's APF controller has
	// digested it, which it reports as Dangling=False.
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			fs := &flowcontrolv1.FlowSchema{}
			if err := e.admin.Get(ctx, client.ObjectKey{Name: name}, fs); err != nil {
				return false, nil
			}
			digested := false
			for _, c := range fs.Status.Conditions {
				if c.Type == flowcontrolv1.FlowSchemaConditionDangling && c.Status == flowcontrolv1.ConditionFalse {
					digested = true
				}
			}
			if !digested {
				return false, nil
			}
		}
		return true, nil
	})
}

// requestCounts are requests by identity (short name) and bucket.
type requestCounts map[string]map[string]float64

// total is every request of the identity; writes its create/update/patch/delete,
// leader election excluded.
func (r requestCounts) total(id string) float64 {
	var t float64
	for _, v := range r[id] {
		t += v
	}
	return t
}

func (r requestCounts) writes(id string) float64 {
	var t float64
	for _, v := range writeVerbs {
		t += r[id][v]
	}
	return t
}

// all sums every identity, optionally without leader election.
func (r requestCounts) all(withLease bool) float64 {
	var t float64
	for id, buckets := range r {
		t += r.total(id)
		if !withLease {
			t -= buckets[bucketLease]
		}
	}
	return t
}

func (r requestCounts) allWrites() float64 {
	var t float64
	for id := range r {
		t += r.writes(id)
	}
	return t
}

// apiserverMetrics are the kube-apiserver metric families the benchmark reads.
var apiserverMetrics = []string{"apiserver_flowcontrol_dispatched_requests_total", "apiserver_request_total"}

// scrapeAPIServer reads kube-apiserver's /metrics as the admin.
func (e *env) scrapeAPIServer(ctx context.Context) (harness.Metrics, error) {
	return e.ScrapeAPIServer(ctx, apiserverMetrics...)
}

// countRequests is the per-identity, per-bucket request delta between two scrapes.
func countRequests(before, after harness.Metrics) requestCounts {
	d := deltaBy(before, after, "apiserver_flowcontrol_dispatched_requests_total", nil, "flow_schema")
	out := requestCounts{}
	for _, id := range identities {
		out[id.short] = map[string]float64{}
	}
	for fs, v := range d {
		for _, id := range identities {
			if bucket, ok := strings.CutPrefix(fs, "bench-"+id.short+"-"); ok {
				out[id.short][bucket] += v
			}
		}
	}
	return out
}
