package security

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/surveyor-dev/surveyor/hack/cluster"
	"github.com/surveyor-dev/surveyor/internal/harness"
)

// writeVerbs are the verbs that change something or grant more than reading does.
var writeVerbs = []string{
	"create", "update", "patch", "delete", "deletecollection", "*",
	"impersonate", "escalate", "bind", "approve", "sign",
}

// controllerRules reads the rules of every Role and ClusterRole in config/rbac/role.yaml,
// each named by where it is, e.g. "ClusterRole surveyor-manager rule 2".
func controllerRules(t *testing.T) map[string]rbacv1.PolicyRule {
	t.Helper()
	objs, err := cluster.ReadObjects(filepath.Join(harness.Root(), "config/rbac/role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]rbacv1.PolicyRule{}
	for _, o := range objs {
		var role rbacv1.ClusterRole // a Role has the same rules field
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role); err != nil {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
		for i, r := range role.Rules {
			rules[fmt.Sprintf("%s %s rule %d", o.GetKind(), o.GetName(), i)] = r
		}
	}
	if len(rules) == 0 {
		t.Fatal("config/rbac/role.yaml has no rules")
	}
	return rules
}

// The controller's generated role grants no write verb on a wildcard: every write names
// its API groups and resources, no rule uses the "*" verb, impersonation is limited to
// ServiceAccounts, and nothing may write RBAC or escalate through it.
func TestControllerRoleHasNoWildcardWrites(t *testing.T) {
	for where, r := range controllerRules(t) {
		if slices.Contains(r.Verbs, "*") {
			t.Errorf("%s: verbs %v include the wildcard", where, r.Verbs)
		}
		writes := slices.ContainsFunc(r.Verbs, func(v string) bool { return slices.Contains(writeVerbs, v) })
		if !writes {
			continue
		}
		if slices.Contains(r.APIGroups, "*") || slices.Contains(r.Resources, "*") || slices.Contains(r.NonResourceURLs, "*") {
			t.Errorf("%s: write verbs %v on wildcard groups %v / resources %v / URLs %v", where, r.Verbs, r.APIGroups, r.Resources, r.NonResourceURLs)
		}
		if len(r.NonResourceURLs) > 0 {
			t.Errorf("%s: write verbs %v on non-resource URLs %v", where, r.Verbs, r.NonResourceURLs)
		}
		if slices.Contains(r.Verbs, "impersonate") && (!slices.Equal(r.APIGroups, []string{""}) || !slices.Equal(r.Resources, []string{"serviceaccounts"})) {
			t.Errorf("%s: impersonates %v in groups %v, want serviceaccounts only", where, r.Resources, r.APIGroups)
		}
		if slices.Contains(r.APIGroups, rbacv1.GroupName) {
			t.Errorf("%s: write verbs %v on RBAC resources %v", where, r.Verbs, r.Resources)
		}
		for _, v := range []string{"escalate", "bind"} {
			if slices.Contains(r.Verbs, v) {
				t.Errorf("%s: grants %s", where, v)
			}
		}
	}
}

// config/rbac/README.md explains every rule: each resource a rule names appears in it,
// so a new marker in pkg/realizer or cmd/surveyor needs a sentence saying why.
func TestControllerRoleRulesAreDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(harness.Root(), "config/rbac/README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for where, r := range controllerRules(t) {
		for _, res := range r.Resources {
			if !strings.Contains(readme, "`"+res+"`") {
				t.Errorf("%s: resource %q (verbs %v) is not explained in config/rbac/README.md", where, res, r.Verbs)
			}
		}
		for _, v := range r.Verbs {
			if !strings.Contains(readme, v) {
				t.Errorf("%s: verb %q is not mentioned in config/rbac/README.md", where, v)
			}
		}
	}
}

// What the API server actually lets the controller's ServiceAccount do, with
// config/rbac applied: it writes stamped objects only by impersonating a Workload's
// ServiceAccount, never as itself, and cannot impersonate people or escalate.
func TestControllerEffectivePermissions(t *testing.T) {
	user := "system:serviceaccount:" + harness.ControllerNamespace + ":" + harness.ControllerAccount
	can := func(attrs authorizationv1.ResourceAttributes) (bool, string) {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               user,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + harness.ControllerNamespace, "system:authenticated"},
			ResourceAttributes: &attrs,
		}}
		if err := k8s.Create(ctx, sar); err != nil {
			t.Fatal(err)
		}
		return sar.Status.Allowed, sar.Status.Reason
	}
	type attrs = authorizationv1.ResourceAttributes
	for _, tc := range []struct {
		want  bool
		attrs attrs
	}{
		// Needed (config/rbac/README.md says why).
		{true, attrs{Verb: "impersonate", Resource: "serviceaccounts", Namespace: "team-a", Name: "builder"}},
		{true, attrs{Verb: "patch", Group: "carto.run", Resource: "workloads", Subresource: "status", Namespace: "team-a"}},
		{true, attrs{Verb: "delete", Group: "carto.run", Resource: "workloads", Namespace: "team-a"}},
		{true, attrs{Verb: "create", Resource: "events", Namespace: "team-a"}},
		{true, attrs{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: harness.ControllerNamespace, Name: "surveyor.carto.run"}},
		{true, attrs{Verb: "get", Resource: "secrets", Namespace: harness.ControllerNamespace, Name: "surveyor-digest-key"}},
		{true, attrs{Verb: "create", Resource: "secrets", Namespace: harness.ControllerNamespace}},
		{true, attrs{Verb: "create", Group: "authentication.k8s.io", Resource: "tokenreviews"}},
		{true, attrs{Verb: "create", Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}},
		// Never as itself: stamping is the Workload's account's business.
		{false, attrs{Verb: "create", Resource: "configmaps", Namespace: "team-a"}},
		{false, attrs{Verb: "patch", Resource: "secrets", Namespace: "team-a"}},
		{false, attrs{Verb: "delete", Resource: "secrets", Namespace: "team-a"}},
		{false, attrs{Verb: "create", Resource: "secrets", Namespace: "team-a"}},
		{false, attrs{Verb: "update", Resource: "secrets", Namespace: harness.ControllerNamespace, Name: "surveyor-digest-key"}},
		{false, attrs{Verb: "patch", Group: "apps", Resource: "deployments", Namespace: "team-a"}},
		{false, attrs{Verb: "create", Resource: "pods", Subresource: "exec", Namespace: "team-a"}},
		{false, attrs{Verb: "create", Resource: "serviceaccounts", Subresource: "token", Namespace: "team-a"}},
		{false, attrs{Verb: "create", Resource: "namespaces"}},
		{false, attrs{Verb: "update", Group: "carto.run", Resource: "workloads", Namespace: "team-a"}},
		{false, attrs{Verb: "update", Group: "carto.run", Resource: "clustersupplychains"}},
		{false, attrs{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system"}},
		// No path to more rights.
		{false, attrs{Verb: "impersonate", Resource: "users", Name: "admin"}},
		{false, attrs{Verb: "impersonate", Resource: "groups", Name: "system:masters"}},
		{false, attrs{Verb: "create", Group: rbacv1.GroupName, Resource: "clusterrolebindings"}},
		{false, attrs{Verb: "escalate", Group: rbacv1.GroupName, Resource: "clusterroles"}},
		{false, attrs{Verb: "bind", Group: rbacv1.GroupName, Resource: "clusterroles"}},
	} {
		if got, reason := can(tc.attrs); got != tc.want {
			t.Errorf("%s %s/%s/%s in %q: allowed=%v, want %v (%s)", tc.attrs.Verb, tc.attrs.Group, tc.attrs.Resource, tc.attrs.Subresource,
				tc.attrs.Namespace, got, tc.want, reason)
		}
	}
	// The wildcard read is deliberate (a template may stamp any kind, and its informer
	// must list it) but broad; these are recorded, not asserted.
	for _, a := range []attrs{
		{Verb: "list", Resource: "secrets"},
		{Verb: "get", Resource: "nodes", Subresource: "proxy", Name: "kwok-node-0"},
		{Verb: "get", Resource: "pods", Subresource: "log", Namespace: "team-a"},
	} {
		if ok, _ := can(a); ok {
			t.Logf("the controller may %s %s/%s cluster-wide (the */* read rule)", a.Verb, a.Resource, a.Subresource)
		}
	}
}
