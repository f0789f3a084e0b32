package security

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"

	"github.com/surveyor-dev/surveyor/tests/harness"
)

// secretValue is what the stamped Secrets hold; neither it nor its base64 form may appear
// in a Workload's status or events.
const secretValue = "hunter2-do-not-print"

// redactedMessage is the message of every condition judged on a stamped Secret.
const redactedMessage = "message redacted: the stamped object is a Secret"

// A template stamps a Secret and reads an output from it. The output carries its digest
// but its preview is "<redacted>"; the health and condition-rule messages that would
// quote the Secret's data (a matchFields messagePath, a messageExpression, a CEL error
// about the value) are redacted, and so are the owner conditions derived from them.
// Nothing in the status or in the Workload's events holds the value.
func TestSecretDataNeverReachesStatus(t *testing.T) {
	ns := newNamespace(t, "sec-secret")
	const name = "sec-secret"
	serviceAccount(t, ns, "stamper", "secrets", "configmaps")
	encoded := base64.StdEncoding.EncodeToString([]byte(secretValue))
	// Both rules quote the data on purpose: messagePath and messageExpression read it,
	// and int() fails with an error about it.
	rule := &v1alpha1.HealthRule{MultiMatch: &v1alpha1.MultiMatchRule{
		Healthy: v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{{
			FieldSelectorRequirement: v1alpha1.FieldSelectorRequirement{Key: ".data.token", Operator: v1alpha1.FieldSelectorOpExists},
			MessagePath:              ".data.token",
		}}},
		Unhealthy: v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{{
			FieldSelectorRequirement: v1alpha1.FieldSelectorRequirement{Key: ".data.revoked", Operator: v1alpha1.FieldSelectorOpExists},
			MessagePath:              ".data.token",
		}}},
	}}
	rules := []v1alpha1.ConditionRule{
		{Condition: "TokenPresent", Type: v1alpha1.ConditionRuleTypeCEL,
			CELExpressions:    []v1alpha1.CELConditionExpression{{Expression: "has(object.data.token)"}},
			MessageExpression: "'token is ' + object.data.token"},
		{Condition: "TokenNumeric", Type: v1alpha1.ConditionRuleTypeCEL,
			CELExpressions: []v1alpha1.CELConditionExpression{{Expression: "int(object.data.token) > 0"}}},
	}
	secretTemplate := func(name, data string) *v1alpha1.ClusterConfigTemplate {
		return &v1alpha1.ClusterConfigTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ClusterConfigTemplateSpec{
				ConfigPath: ".data.token",
				TemplateSpec: v1alpha1.TemplateSpec{
					HealthyConditionRule: rule,
					ConditionRules:       rules,
					Template: harness.RawTemplate(t, `{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
						"metadata": {"name": "$(workload.metadata.name)$-`+name+`"}, "data": `+data+`}`),
				},
			},
		}
	}
	env.CreateAll(ctx, t,
		secretTemplate(name+"-ok", `{"token": "`+encoded+`"}`),
		secretTemplate(name+"-revoked", `{"token": "`+encoded+`", "revoked": "eWVz"}`),
	)
	chain(t, name, nil,
		resource("creds", v1alpha1.KindClusterConfigTemplate, name+"-ok"),
		resource("revoked", v1alpha1.KindClusterConfigTemplate, name+"-revoked"))
	wl := workload(t, ns, "app", name, "stamper")
	got := waitCondition(t, wl, "revoked", v1alpha1.ConditionHealthy, time.Minute, is(metav1.ConditionFalse, v1alpha1.ReasonMatchedField))
	got = waitCondition(t, got, "creds", v1alpha1.ConditionHealthy, time.Minute, is(metav1.ConditionTrue, v1alpha1.ReasonMatchedField))

	wantDigest := yamlDigest(t, encoded)
	for _, res := range []string{"creds", "revoked"} {
		var rs *v1alpha1.ResourceStatus
		for i := range got.Status.Resources {
			if got.Status.Resources[i].Name == res {
				rs = &got.Status.Resources[i]
			}
		}
		if rs == nil || len(rs.Outputs) != 1 {
			t.Fatalf("resource %s: status %+v, want one output", res, rs)
		}
		out := rs.Outputs[0]
		if out.Name != "config" || out.Preview != "<redacted>" || out.Digest != wantDigest {
			t.Errorf("resource %s output = {name %q, preview %q, digest %q}, want {config, <redacted>, %s}", res, out.Name, out.Preview, out.Digest, wantDigest)
		}
		for _, ct := range []string{v1alpha1.ConditionHealthy, "TokenPresent", "TokenNumeric"} {
			c := findCondition(got, res, ct)
			if c == nil || c.Message != redactedMessage {
				t.Errorf("resource %s condition %s = %+v, want the message %q", res, ct, c, redactedMessage)
			}
		}
	}
	// The owner conditions derived from the unhealthy Secret quote its (redacted) message.
	for _, ct := range []string{v1alpha1.ConditionResourcesHealthy, v1alpha1.ConditionReady} {
		c := findCondition(got, "", ct)
		if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, redactedMessage) {
			t.Errorf("owner condition %s = %+v, want False quoting %q", ct, c, redactedMessage)
		}
	}
	assertNoSecret(t, got)
}

// assertNoSecret fails if the Workload's status or any event in its namespace holds
// secretValue, plainly or base64-encoded.
func assertNoSecret(t *testing.T, wl *v1alpha1.Workload) {
	t.Helper()
	status, err := json.Marshal(wl.Status)
	if err != nil {
		t.Fatal(err)
	}
	var events corev1.EventList
	if err := k8s.List(ctx, &events, client.InNamespace(wl.Namespace)); err != nil {
		t.Fatal(err)
	}
	var messages []string
	for _, e := range events.Items {
		messages = append(messages, e.Reason+": "+e.Message)
	}
	for _, leak := range []string{secretValue, base64.StdEncoding.EncodeToString([]byte(secretValue))} {
		if bytes.Contains(status, []byte(leak)) {
			t.Errorf("the workload's status holds %q:\n%s", leak, status)
		}
		for _, m := range messages {
			if strings.Contains(m, leak) {
				t.Errorf("an event holds %q: %s", leak, m)
			}
		}
	}
}

// yamlDigest is DESIGN §2's digest of an output value: sha256 of its YAML.
func yamlDigest(t *testing.T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(4)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:])
}

// The same rules on a ConfigMap holding the same data do quote it: the redaction above
// is what keeps the Secret's data out, not the rules.
func TestSecretRedactionControl(t *testing.T) {
	ns := newNamespace(t, "sec-secret-control")
	const name = "sec-secret-control"
	serviceAccount(t, ns, "stamper", "configmaps")
	encoded := base64.StdEncoding.EncodeToString([]byte(secretValue))
	env.CreateAll(ctx, t, &v1alpha1.ClusterConfigTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ClusterConfigTemplateSpec{
			ConfigPath: ".data.token",
			TemplateSpec: v1alpha1.TemplateSpec{
				HealthyConditionRule: &v1alpha1.HealthRule{MultiMatch: &v1alpha1.MultiMatchRule{
					Healthy: v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{{
						FieldSelectorRequirement: v1alpha1.FieldSelectorRequirement{Key: ".data.token", Operator: v1alpha1.FieldSelectorOpExists},
						MessagePath:              ".data.token",
					}}},
					Unhealthy: v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{{
						FieldSelectorRequirement: v1alpha1.FieldSelectorRequirement{Key: ".data.revoked", Operator: v1alpha1.FieldSelectorOpExists},
					}}},
				}},
				Template: harness.RawTemplate(t, `{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": {"name": "$(workload.metadata.name)$-cm"}, "data": {"token": "`+encoded+`"}}`),
			},
		},
	})
	chain(t, name, nil, resource("plain", v1alpha1.KindClusterConfigTemplate, name))
	wl := workload(t, ns, "app", name, "stamper")
	got := waitCondition(t, wl, "plain", v1alpha1.ConditionHealthy, time.Minute, is(metav1.ConditionTrue, v1alpha1.ReasonMatchedField))
	if c := findCondition(got, "plain", v1alpha1.ConditionHealthy); !strings.Contains(c.Message, encoded) {
		t.Errorf("Healthy message of a ConfigMap %q does not quote its data; the Secret test proves nothing", c.Message)
	}
	if out := got.Status.Resources[0].Outputs; len(out) != 1 || !strings.Contains(out[0].Preview, encoded) {
		t.Errorf("outputs of a ConfigMap %+v do not preview its data", out)
	}
}

// A value read from a Secret stays secret when a later resource consumes it: here a
// ConfigMap template copies the Secret's output ($(config)$) and declares it as its own
// output, so its preview would show the Secret's data. Pass-through resources already
// carry the Secret's redaction forward; a stamped consumer must too.
func TestSecretDerivedOutputsAreRedacted(t *testing.T) {
	ns := newNamespace(t, "sec-derived")
	const name = "sec-derived"
	serviceAccount(t, ns, "stamper", "secrets", "configmaps")
	encoded := base64.StdEncoding.EncodeToString([]byte(secretValue))
	env.CreateAll(ctx, t,
		&v1alpha1.ClusterConfigTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-secret"},
			Spec: v1alpha1.ClusterConfigTemplateSpec{ConfigPath: ".data.token", TemplateSpec: v1alpha1.TemplateSpec{
				Template: harness.RawTemplate(t, `{"apiVersion": "v1", "kind": "Secret",
					"metadata": {"name": "$(workload.metadata.name)$-secret"}, "data": {"token": "`+encoded+`"}}`)}},
		},
		&v1alpha1.ClusterConfigTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-copy"},
			Spec: v1alpha1.ClusterConfigTemplateSpec{ConfigPath: ".data.copied", TemplateSpec: v1alpha1.TemplateSpec{
				Template: harness.RawTemplate(t, `{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": {"name": "$(workload.metadata.name)$-copy"}, "data": {"copied": "$(config)$"}}`)}},
		},
	)
	consumer := resource("copy", v1alpha1.KindClusterConfigTemplate, name+"-copy")
	consumer.Configs = []v1alpha1.ResourceReference{{Name: "creds", Resource: "creds"}}
	chain(t, name, nil, resource("creds", v1alpha1.KindClusterConfigTemplate, name+"-secret"), consumer)
	wl := workload(t, ns, "app", name, "stamper")
	got := waitCondition(t, wl, "", v1alpha1.ConditionReady, time.Minute, is(metav1.ConditionTrue, v1alpha1.ReasonReady))
	for _, r := range got.Status.Resources {
		for _, o := range r.Outputs {
			t.Logf("resource %s output %s: preview %q digest %s", r.Name, o.Name, o.Preview, o.Digest)
		}
	}
	assertNoSecret(t, got)
}

// A Secret stamped with stringData (write-only: the API server folds it into data) is
// applied once; reconciles forced afterwards write nothing (DESIGN §3.5: no write when
// the live object already holds what the stamp sets).
func TestSecretFromStringDataIsNotReapplied(t *testing.T) {
	ns := newNamespace(t, "sec-stringdata")
	const name = "sec-stringdata"
	serviceAccount(t, ns, "stamper", "secrets")
	env.CreateAll(ctx, t, &v1alpha1.ClusterTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.TemplateSpec{Template: harness.RawTemplate(t, `{"apiVersion": "v1", "kind": "Secret",
			"metadata": {"name": "$(workload.metadata.name)$-secret"}, "stringData": {"token": "`+secretValue+`"}}`)},
	})
	chain(t, name, nil, resource("creds", v1alpha1.KindClusterTemplate, name))
	wl := workload(t, ns, "app", name, "stamper")
	waitCondition(t, wl, "", v1alpha1.ConditionReady, time.Minute, is(metav1.ConditionTrue, v1alpha1.ReasonReady))

	before := applyCount(t, "secrets")
	forced := env.ForceReconciles(ctx, t, name, client.ObjectKeyFromObject(wl), 5)
	if n := applyCount(t, "secrets") - before; n != 0 {
		t.Errorf("%.0f applies of the stringData Secret during %d forced reconciles of a converged workload, want 0", n, forced)
	}
}

// applyCount is the API server's count of server-side applies to resource.
func applyCount(t *testing.T, resource string) float64 {
	t.Helper()
	return env.APIServerMetrics(t).Sum("apiserver_request_total", map[string]string{"verb": "APPLY", "resource": resource})
}
